package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestCompressionCodecs: batches written with every codec a producer may
// use are read back whole, in order, with keys, timestamps and offsets.
func TestCompressionCodecs(t *testing.T) {
	codecs := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
		"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
	}
	for name, codec := range codecs {
		t.Run(name, func(t *testing.T) {
			_, addr := cluster(t, 1)
			p := producer(t, addr, kgo.ProducerBatchCompression(codec), kgo.ProducerLinger(10*time.Millisecond))
			at := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
			var recs []*kgo.Record
			for i := range 500 {
				recs = append(recs, &kgo.Record{Partition: 0, Key: fmt.Appendf(nil, "k%d", i),
					Value: fmt.Appendf(nil, `{"id": %d, "pad": "%0100d"}`, i, i), Timestamp: at.Add(time.Duration(i) * time.Millisecond)})
			}
			produce(t, p, recs...)
			s := mustOpen(t, cols(t, "id int, o int8, k bytea, ts timestamptz"), map[string]string{"properties.bootstrap.server": addr, "topic": "t",
				"include.offset": "o", "include.key": "k", "include.timestamp": "ts"}, "JSON")
			ru := start(t, s, nil)
			ru.waitRows(500)
			rows, _, _, errs := ru.snapshot()
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			for i, r := range rows {
				want := fmt.Sprintf("%d|%d|\\x%x|%s", i, i, fmt.Sprintf("k%d", i), at.Add(time.Duration(i)*time.Millisecond).Format("2006-01-02 15:04:05.999999-07"))
				if r != want {
					t.Fatalf("row %d: %s, want %s", i, r, want)
				}
			}
		})
	}
}

// batchBytes encodes a v2 record batch of values at base, as a broker
// sends it.
func batchBytes(base int64, attrs int16, pid int64, values ...string) []byte {
	var recs []byte
	for i, v := range values {
		recs = append(recs, recordBytes(int32(i), nil, []byte(v))...)
	}
	b := kmsg.RecordBatch{FirstOffset: base, Magic: 2, Attributes: attrs, LastOffsetDelta: int32(len(values) - 1),
		ProducerID: pid, NumRecords: int32(len(values)), Records: recs}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crcOf(raw[21:]))
	return raw
}

// recordBytes encodes one record of a v2 batch (a nil key is null).
func recordBytes(offsetDelta int32, key, value []byte) []byte {
	body := []byte{0}                  // attributes
	body = kbin.AppendVarlong(body, 0) // timestamp delta
	body = kbin.AppendVarint(body, offsetDelta)
	body = kbin.AppendVarintBytes(body, key)
	body = kbin.AppendVarintBytes(body, value)
	body = kbin.AppendVarint(body, 0) // no headers
	return append(kbin.AppendVarint(nil, int32(len(body))), body...)
}

func crcOf(b []byte) uint32 { return crc32.Checksum(b, crc32c) }

// readAll reads rp from offset from and returns the values read.
func readAll(t *testing.T, rp *kmsg.FetchResponseTopicPartition, from int64) ([]string, *partitionFetch, error) {
	t.Helper()
	pool := &decompressBuffers{}
	f, err := readBatches("t", rp, from, kgo.DefaultDecompressor(pool))
	var vals []string
	for _, b := range f.batches {
		if e := eachRecord(b, func(off, _ int64, _, v []byte) bool {
			if off >= from {
				vals = append(vals, fmt.Sprintf("%d:%s", off, v))
			}
			return true
		}); e != nil {
			t.Fatal(e)
		}
	}
	return vals, f, err
}

// TestReadBatchesAborted: a read_committed fetch drops the batches of the
// transactions the broker lists as aborted, and the markers, and its next
// offset is after them all; a producer's later committed transaction is
// kept.
func TestReadBatchesAborted(t *testing.T) {
	var raw []byte
	raw = append(raw, batchBytes(0, 0, -1, "a", "b")...)                // 0-1 plain
	raw = append(raw, batchBytes(2, attrTransactional, 7, "x", "y")...) // 2-3 aborted
	raw = append(raw, controlBatch(4, 7, 0)...)                         // 4 abort marker
	raw = append(raw, batchBytes(5, attrTransactional, 7, "c")...)      // 5 committed
	raw = append(raw, controlBatch(6, 7, 1)...)                         // 6 commit marker
	raw = append(raw, batchBytes(7, 0, -1, "d", "e", "f")[:20]...)      // truncated
	rp := &kmsg.FetchResponseTopicPartition{Partition: 0, HighWatermark: 10, LastStableOffset: 10, RecordBatches: raw,
		AbortedTransactions: []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 7, FirstOffset: 2}}}
	vals, f, err := readAll(t, rp, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"1:b", "5:c"}; !slices.Equal(vals, want) {
		t.Fatalf("read %v, want %v", vals, want)
	}
	if f.next != 7 {
		t.Fatalf("next %d, want 7", f.next)
	}
}

// controlBatch is a transaction marker of producer pid at offset (typ 0:
// abort, 1: commit).
func controlBatch(offset, pid int64, typ uint16) []byte {
	key := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), typ)
	b := kmsg.RecordBatch{FirstOffset: offset, Magic: 2, Attributes: attrTransactional | attrControl,
		ProducerID: pid, NumRecords: 1, Records: recordBytes(0, key, []byte{0, 0, 0, 0, 0, 0})}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crcOf(raw[21:]))
	return raw
}

// TestReadBatchesCorrupt: a batch whose CRC does not match is an error;
// the batches before it are read and the next offset is its own.
func TestReadBatchesCorrupt(t *testing.T) {
	good := batchBytes(0, 0, -1, "a", "b")
	bad := batchBytes(2, 0, -1, "c")
	bad[len(bad)-1] ^= 0xff
	rp := &kmsg.FetchResponseTopicPartition{RecordBatches: append(good, bad...), HighWatermark: 3, LastStableOffset: 3}
	vals, f, err := readAll(t, rp, 0)
	if !errors.Is(err, errCorruptBatch) {
		t.Fatalf("error %v", err)
	}
	if want := []string{"0:a", "1:b"}; !slices.Equal(vals, want) || f.next != 2 {
		t.Fatalf("read %v, next %d", vals, f.next)
	}
}
