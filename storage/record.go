package storage

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/streamsql/streamsql/pgerr"
)

// Log records. A table's log file is a sequence of frames:
//
//	u32 payload length | u32 CRC-32C of (length bytes + payload) | payload
//
// and every payload starts with a kind byte padded to 8 bytes, then:
//
//	recHeader:   u64 next row id, u64 JSON length, headerDef as JSON (always
//	             first; from format 1 on followed by the 64-byte mark block,
//	             which is not a frame: lsn.go)
//	recInsert:   u64 first row id, u64 rows, u64 columns, the columns (codec.go)
//	recDelete:   u64 count, count u64 row ids
//	recUpdate:   a recDelete body followed by a recInsert body
//	recTruncate: nothing
//	recChunk:    u64 first row id, u64 rows, u64 has-deleted, [deleted bitmap],
//	             u64 columns, the columns (written by compaction)
//	recHist:     u64 flags, [u64 0, u64 rows, u64 columns, the columns]: one
//	             batch of a retained write's delta (written by compaction, retain.go)
//	recMeta:     u64 length, the bytes: metadata committed with the write it
//	             is chained to, as its last frame (meta.go)
//
// The kind byte's high bit (recMore) chains frames into one atomic write;
// the next bit (recJoin) says that the next frame continues the same
// statement's delta (the batches of one InsertBatches, of one history
// delta), so a retained write replays as the same Deltas a live feed gave.
//
// A frame whose length runs past the end of the file or whose CRC does not
// match is a torn write when no valid frame follows it: recovery cuts the
// file there; otherwise the log is damaged (damage.go).

type recKind byte

// recMore, or'ed into a payload's kind byte, says that the next frame
// belongs to the same write: a write split over several frames (InsertBatches)
// is replayed only when its last frame, without the flag, is there.
const recMore recKind = 0x80

// recJoin, or'ed into a payload's kind byte (with recMore), says that the
// next frame belongs to the same delta (see above).
const recJoin recKind = 0x40

const (
	recHeader recKind = iota + 1
	recInsert
	recDelete
	recUpdate
	recTruncate
	recChunk
	recHist
	recMeta
)

const (
	frameHeaderLen = 8
	// maxPayload bounds a frame's length field so a corrupt length is never
	// taken for a huge allocation.
	maxPayload = 1 << 31
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// newFrame starts a frame of the given kind: room for the frame header,
// then the kind byte padded to 8. Finish it with sealFrame.
func newFrame(kind recKind, sizeHint int) *encoder {
	e := &encoder{buf: make([]byte, frameHeaderLen, frameHeaderLen+8+sizeHint)}
	e.buf = append(e.buf, byte(kind))
	e.pad()
	return e
}

// sealFrame fills in the frame header and returns the whole frame.
func sealFrame(e *encoder) []byte {
	b := e.buf
	binary.LittleEndian.PutUint32(b[0:], uint32(len(b)-frameHeaderLen))
	binary.LittleEndian.PutUint32(b[4:], frameCRC(b[0:4], b[frameHeaderLen:]))
	return b
}

// frameCRC returns the CRC a frame with this length field and payload must carry.
func frameCRC(lenField []byte, payload []byte) uint32 {
	crc := crc32.Update(0, castagnoli, lenField)
	return crc32.Update(crc, castagnoli, payload)
}

// headerDef is the JSON form of a header record.
type headerDef struct {
	Def TableDef `json:"def"`
	// Format is 1 for logs with LSNs and a mark block after the header
	// frame (lsn.go); 0 (absent) for older logs, which have neither.
	Format int `json:"format,omitempty"`
	// LSN is the write sequence number of the state the log's snapshot
	// part (its recChunk records, or nothing) holds; the log's writes after
	// it are LSN+1, LSN+2, ... Base is the first LSN of the table's LSN
	// space (its creation or its last ALTER). The recHist records hold the
	// writes Hist+1..LSN (none when Hist == LSN).
	LSN  uint64 `json:"lsn,omitempty"`
	Base uint64 `json:"base,omitempty"`
	Hist uint64 `json:"hist,omitempty"`
	// Meta is the metadata of the last write before the snapshot that
	// carried one (meta.go): compaction keeps it here, since it folds the
	// recMeta frames away.
	Meta []byte `json:"meta,omitempty"`
}

// logFormat is the format new logs are written in.
const logFormat = 1

func encodeHeader(h headerDef, next int64) []byte {
	js, err := json.Marshal(h)
	if err != nil { // TableDef holds only plain data
		panic(fmt.Sprintf("storage: marshal table def: %v", err))
	}
	e := newFrame(recHeader, 16+len(js))
	e.u64(uint64(next))
	e.u64(uint64(len(js)))
	e.bytes(js)
	return sealFrame(e)
}

// encodeRows appends first row id, row count, column count and the columns.
func encodeRows(e *encoder, first int64, rec arrow.RecordBatch) error {
	e.u64(uint64(first))
	e.u64(uint64(rec.NumRows()))
	e.u64(uint64(rec.NumCols()))
	for _, c := range rec.Columns() {
		if err := encodeArray(e, c); err != nil {
			return err
		}
	}
	return nil
}

// encodeInsert encodes an insert; more chains it to the next frame.
func encodeInsert(first int64, rec arrow.RecordBatch, more bool) ([]byte, error) {
	if err := checkBatchSize(rec, 0); err != nil {
		return nil, err
	}
	kind := recInsert
	if more {
		kind |= recMore | recJoin
	}
	e := newFrame(kind, 24+int(recordBytes(rec)))
	err := encodeRows(e, first, rec)
	return sealFrame(e), err
}

// checkBatchSize refuses a batch (plus extra bytes) whose record would not
// fit a frame's length field.
func checkBatchSize(rec arrow.RecordBatch, extra int) error {
	if recordBytes(rec)+int64(extra)+64 > maxPayload {
		return pgerr.New(pgerr.ProgramLimitExceeded, "cannot write %d rows of %d bytes in one statement (the limit is %d bytes)",
			rec.NumRows(), recordBytes(rec), int64(maxPayload))
	}
	return nil
}

func encodeIDs(e *encoder, ids []int64) {
	e.u64(uint64(len(ids)))
	for _, id := range ids {
		e.u64(uint64(id))
	}
}

func encodeDelete(ids []int64) []byte {
	e := newFrame(recDelete, 8+8*len(ids))
	encodeIDs(e, ids)
	return sealFrame(e)
}

func encodeUpdate(ids []int64, first int64, rec arrow.RecordBatch) ([]byte, error) {
	if err := checkBatchSize(rec, 8*len(ids)); err != nil {
		return nil, err
	}
	e := newFrame(recUpdate, 8+8*len(ids)+24+int(recordBytes(rec)))
	encodeIDs(e, ids)
	err := encodeRows(e, first, rec)
	return sealFrame(e), err
}

func encodeTruncate() []byte { return sealFrame(newFrame(recTruncate, 0)) }

func encodeChunk(c Chunk) ([]byte, error) {
	if err := checkBatchSize(c.Rec, len(c.Deleted)); err != nil {
		return nil, err
	}
	e := newFrame(recChunk, 32+int(recordBytes(c.Rec)))
	n := int(c.Rec.NumRows())
	e.u64(uint64(c.FirstRowID))
	e.u64(uint64(n))
	if c.Deleted != nil {
		e.u64(1)
		e.bitmap(c.Deleted, 0, n)
	} else {
		e.u64(0)
	}
	e.u64(uint64(c.Rec.NumCols()))
	for _, col := range c.Rec.Columns() {
		if err := encodeArray(e, col); err != nil {
			return nil, err
		}
	}
	return sealFrame(e), nil
}

// record is a decoded log record.
type record struct {
	kind    recKind
	more    bool              // the next frame belongs to the same write
	join    bool              // the next frame belongs to the same delta
	hdr     headerDef         // recHeader
	def     TableDef          // recHeader
	flags   uint64            // recHist
	pack    []uint64          // recHist packed: flags, old rows, new rows per delta
	rec2    arrow.RecordBatch // recHist packed: the new rows (rec: the old ones)
	next    int64             // recHeader
	ids     []int64           // recDelete, recUpdate
	first   int64             // recInsert, recUpdate, recChunk
	rec     arrow.RecordBatch // recInsert, recUpdate, recChunk
	deleted []byte            // recChunk
	meta    []byte            // recMeta
}

// decodeRecord decodes a payload. schema is the table's Arrow schema (nil
// while reading the header).
func decodeRecord(p []byte, schema *arrow.Schema) (record, error) {
	d := &decoder{buf: p}
	kind := recKind(d.u64() & 0xff)
	r := record{kind: kind &^ (recMore | recJoin), more: kind&recMore != 0, join: kind&recJoin != 0}
	kind = r.kind
	switch kind {
	case recHeader:
		r.next = int64(d.u64())
		js := d.bytes(d.count(len(p)))
		if d.err != nil {
			return r, d.err
		}
		var h headerDef
		if err := json.Unmarshal(js, &h); err != nil {
			return r, fmt.Errorf("storage: decode table header: %w", err)
		}
		r.def, r.hdr = h.Def, h
	case recInsert:
		r.first, r.rec = decodeRows(d, schema)
	case recDelete:
		r.ids = decodeIDs(d)
	case recUpdate:
		r.ids = decodeIDs(d)
		r.first, r.rec = decodeRows(d, schema)
	case recTruncate:
	case recMeta:
		r.meta = slices.Clone(d.bytes(d.count(len(p))))
	case recChunk:
		r.first = int64(d.u64())
		n := d.count(len(p))
		if d.u64() == 1 {
			r.deleted = d.bytes(int(bitutil.BytesForBits(int64(n))))
		}
		r.rec = decodeColumns(d, schema, n)
	case recHist:
		r.flags = d.u64()
		if r.flags&histPacked != 0 {
			decodePacked(d, schema, &r)
		} else if r.flags&histRows != 0 {
			r.first, r.rec = decodeRows(d, schema)
		}
	default:
		d.fail()
	}
	if d.err == nil && d.pos != len(p) {
		d.fail()
	}
	if d.err == nil && schema != nil && (kind == recInsert || kind == recUpdate || kind == recChunk ||
		kind == recHist && r.flags&histRows != 0) && r.rec == nil {
		d.fail()
	}
	return r, d.err
}

func decodeIDs(d *decoder) []int64 {
	n := d.count(len(d.buf) / 8)
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(d.u64())
	}
	return ids
}

func decodeRows(d *decoder, schema *arrow.Schema) (int64, arrow.RecordBatch) {
	first := int64(d.u64())
	// A row takes at least one bit per column, and a batch of zero columns
	// is never written, so the payload length bounds the row count loosely.
	n := d.count(8 * len(d.buf))
	return first, decodeColumns(d, schema, n)
}

func decodeColumns(d *decoder, schema *arrow.Schema, n int) arrow.RecordBatch {
	ncols := d.count(len(d.buf))
	if d.err != nil || schema == nil || ncols != schema.NumFields() {
		d.fail()
		return nil
	}
	cols := make([]arrow.Array, ncols)
	for i := range cols {
		cols[i] = decodeArray(d, schema.Field(i).Type, n)
		if d.err != nil {
			return nil
		}
	}
	return array.NewRecordBatch(schema, cols, int64(n))
}

// recordBytes estimates the encoded size of rec (its buffers' sizes).
func recordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += arrayBytes(c)
	}
	return n
}

func arrayBytes(a arrow.Array) int64 {
	n := int64(a.Len())
	switch dt := a.DataType().(type) {
	case *arrow.BooleanType:
		return n/8 + 16
	case arrow.FixedWidthDataType:
		return n*int64(dt.BitWidth()/8) + n/8 + 16
	case *arrow.StringType, *arrow.BinaryType:
		offs := rawOffsets(a)
		return int64(offs[len(offs)-1]-offs[0]) + 4*n + n/8 + 24
	case *arrow.ListType:
		offs := rawOffsets(a)
		sub := array.NewSlice(a.(*array.List).ListValues(), int64(offs[0]), int64(offs[len(offs)-1]))
		defer sub.Release()
		return arrayBytes(sub) + 4*n + n/8 + 24
	}
	return 16
}
