package dataflow

import (
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connector"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/storage/changelog"
	"github.com/streamsql/streamsql/types"
)

// Epoch times name epochs exactly, also when many epochs share a
// millisecond, and epochs only grow.
func TestEpochTimeExact(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var prev uint64
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 5000; i++ {
		if rng.Intn(100) == 0 {
			now = now.Add(time.Duration(rng.Intn(3)) * time.Millisecond)
		}
		e := nextEpoch(prev, now)
		if e <= prev {
			t.Fatalf("epoch %d after %d", e, prev)
		}
		if got := EpochAt(EpochTime(e)); got != e {
			t.Fatalf("EpochAt(EpochTime(%d)) = %d (%v)", e, got, EpochTime(e))
		}
		if EpochTime(e).Before(EpochTime(prev)) || (prev != 0 && !EpochTime(e).After(EpochTime(prev))) {
			t.Fatalf("epoch times do not grow: %v then %v", EpochTime(prev), EpochTime(e))
		}
		prev = e
	}
}

func TestFrameRoundTrip(t *testing.T) {
	cols := []types.Column{{Name: "k", Type: types.TInt8}, {Name: "s", Type: types.TText}}
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	for i := 0; i < 10; i++ {
		kb.Append(int64(i))
		if i%3 == 0 {
			sb.AppendNull()
		} else {
			sb.Append("row")
		}
	}
	rec := array.NewRecordBatch(types.ArrowSchema(cols), []arrow.Array{kb.NewArray(), sb.NewArray()}, 10)
	ops := []stream.Op{stream.Insert, stream.Delete, stream.UpdateBefore, stream.UpdateAfter, stream.Insert, stream.Insert, stream.Delete, stream.Insert, stream.Insert, stream.Insert}
	c := &stream.Chunk{Rec: rec, Ops: ops}
	cuts := map[cutKey]cutPos{{job: 7, idx: 0}: {table: true, lsn: 42}, {job: 7, idx: 1}: {pos: []byte{0x21, 5}}, {job: 9, idx: 0}: {}}
	gotCuts, got, err := decodeFrame(encodeFrame(cuts, c, 2, 9, cols), cols)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotCuts, cuts) {
		t.Fatalf("cuts %v, want %v", gotCuts, cuts)
	}
	if got.Len() != 7 || !reflect.DeepEqual(got.Ops, ops[2:9]) {
		t.Fatalf("rows %d ops %v", got.Len(), got.Ops)
	}
	for i := 0; i < 7; i++ {
		for ci, col := range cols {
			if a, b := types.ValueAt(got.Rec.Column(ci), i, col.Type), types.ValueAt(rec.Column(ci), i+2, col.Type); !reflect.DeepEqual(a, b) {
				t.Fatalf("row %d col %s: %v, want %v", i, col.Name, a, b)
			}
		}
	}
	if _, _, err := decodeFrame(encodeFrame(cuts, c, 0, 10, cols)[:20], cols); err == nil {
		t.Fatal("a truncated frame decoded")
	}
}

// The hold's difference: what was computed minus what was sent.
func TestChangeSetDifference(t *testing.T) {
	cols := []types.Column{{Name: "k", Type: types.TInt8}}
	chunk := func(ops []stream.Op, ks ...int64) *stream.Chunk {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		b.AppendValues(ks, nil)
		return &stream.Chunk{Rec: array.NewRecordBatch(types.ArrowSchema(cols), []arrow.Array{b.NewArray()}, int64(len(ks))), Ops: ops}
	}
	sent, computed := stream.ChangeSet{}, stream.ChangeSet{}
	sent.Add(chunk(nil, 1, 2, 3), cols)
	sent.Add(chunk([]stream.Op{stream.Delete}, 2), cols)
	computed.Add(chunk(nil, 1, 3, 4), cols)
	d, err := computed.Minus(sent).Chunk(cols)
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 1 || d.Op(0) != stream.Insert || d.Rec.Column(0).(*array.Int64).Value(0) != 4 {
		t.Fatalf("difference %v %v", d.Rec, d.Ops)
	}
	d, _ = sent.Minus(computed).Chunk(cols)
	if d.Len() != 1 || d.Op(0) != stream.Delete {
		t.Fatalf("reverse difference %v %v", d.Rec, d.Ops)
	}
	if d, _ := sent.Minus(sent).Chunk(cols); d != nil {
		t.Fatalf("no difference gave %v", d.Rec)
	}
}

func TestCutReached(t *testing.T) {
	pos := func(n uint64) []byte { return []byte{0x21, byte(n)} } // a nexmark position below 128
	if _, ok := connector.ComparePositions(pos(1), pos(2)); !ok {
		t.Fatal("positions not comparable")
	}
	for _, tc := range []struct {
		p, target cutPos
		want      bool
	}{
		{cutPos{table: true, lsn: 5}, cutPos{table: true, lsn: 5}, true},
		{cutPos{table: true, lsn: 4}, cutPos{table: true, lsn: 5}, false},
		{cutPos{pos: pos(9)}, cutPos{pos: pos(10)}, false},
		{cutPos{pos: pos(10)}, cutPos{pos: pos(10)}, true},
		{cutPos{}, cutPos{pos: pos(1)}, false},
		{cutPos{pos: pos(1)}, cutPos{}, true},
		{cutPos{pos: []byte{0x11, 1}}, cutPos{pos: pos(5)}, true}, // not comparable: not waited for
	} {
		if got := tc.p.reached(tc.target); got != tc.want {
			t.Errorf("%+v reached %+v = %v", tc.p, tc.target, got)
		}
	}
}

// BenchmarkChangelogAppend measures what a view with a subscriber pays per
// published row: encoding it into frames and appending them to the log
// (fsync per commit of 4096 rows).
func BenchmarkChangelogAppend(b *testing.B) {
	cols := []types.Column{{Name: "k", Type: types.TInt8}, {Name: "s", Type: types.TText}, {Name: "x", Type: types.TFloat8}}
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	fb := array.NewFloat64Builder(memory.DefaultAllocator)
	for i := 0; i < frameRows; i++ {
		kb.Append(int64(i))
		sb.Append("host-17.dc-west")
		fb.Append(float64(i) * 0.37)
	}
	rec := array.NewRecordBatch(types.ArrowSchema(cols), []arrow.Array{kb.NewArray(), sb.NewArray(), fb.NewArray()}, frameRows)
	c := &stream.Chunk{Rec: rec}
	cuts := map[cutKey]cutPos{{job: 1, idx: 0}: {table: true, lsn: 9}}
	for _, sync := range []bool{false, true} {
		name := "encode+write"
		if sync {
			name = "encode+write+fsync"
		}
		b.Run(name, func(b *testing.B) {
			l, err := changelog.Open(b.TempDir(), 0)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := l.Append(uint64(i+1), encodeFrame(cuts, c, 0, frameRows, cols)); err != nil {
					b.Fatal(err)
				}
				if err := l.Commit(sync); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*frameRows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
