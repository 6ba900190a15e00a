package stream

import (
	"math/rand"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

var tvCols = []types.Column{{Name: "ts", Type: types.TTimestamp}, {Name: "v", Type: types.TInt8}}

// tvSource is a test input of (ts, v) rows.
type tvSource struct{ ch chan Message }

func (s *tvSource) Columns() []types.Column                     { return tvCols }
func (s *tvSource) Inputs() []Node                              { return nil }
func (s *tvSource) Explain() string                             { return "test source" }
func (s *tvSource) Start(*Env, []<-chan Message) <-chan Message { return s.ch }

// tvRow is a (ts, v) row; ts < 0 stands for NULL.
type tvRow struct{ t, v int64 }

func tvChunk(rows []tvRow, ops []Op) *Chunk {
	tb := array.NewTimestampBuilder(memory.DefaultAllocator, types.TTimestamp.ArrowType().(*arrow.TimestampType))
	vb := array.NewInt64Builder(memory.DefaultAllocator)
	for _, r := range rows {
		if r.t < 0 {
			tb.AppendNull()
		} else {
			tb.Append(arrow.Timestamp(r.t))
		}
		vb.Append(r.v)
	}
	rec := array.NewRecordBatch(types.ArrowSchema(tvCols), []arrow.Array{tb.NewArray(), vb.NewArray()}, int64(len(rows)))
	return &Chunk{Rec: rec, Ops: ops}
}

func tvRows(rec arrow.RecordBatch) []tvRow {
	ts, vs := rec.Column(0).(*array.Timestamp), rec.Column(1).(*array.Int64)
	out := make([]tvRow, rec.NumRows())
	for i := range out {
		out[i] = tvRow{int64(ts.Value(i)), vs.Value(i)}
		if ts.IsNull(i) {
			out[i].t = -1
		}
	}
	return out
}

func cmpTV(a, b tvRow) int {
	if a.t != b.t {
		return int(a.t - b.t)
	}
	return int(a.v - b.v)
}

// TestEOWCMatchesBruteForce feeds random inserts, retractions of held and
// of already emitted rows, and watermarks, and compares every release and
// the late rows with a direct simulation of the rule.
func TestEOWCMatchesBruteForce(t *testing.T) {
	for seed := int64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewSource(seed))
		delay := int64(rng.Intn(3))
		env := newEnv(t)
		var mu sync.Mutex
		var lateGot []tvRow
		env.OnLate = func(rec arrow.RecordBatch, _ uint64) {
			mu.Lock()
			lateGot = append(lateGot, tvRows(rec)...)
			mu.Unlock()
		}
		in := make(chan Message, 1024)
		var want [][]tvRow // per watermark: the rows released
		var lateWant []tvRow
		var held []tvRow
		var seen []tvRow // every row ever inserted (to retract)
		wm := int64(-1 << 62)
		base := int64(0)
		for step := 0; step < 60; step++ {
			if rng.Intn(4) == 0 {
				base += int64(rng.Intn(4))
				if base > wm {
					wm = base
					var rel, keep []tvRow
					for _, r := range held {
						if r.t+delay < wm {
							rel = append(rel, r)
						} else {
							keep = append(keep, r)
						}
					}
					held = keep
					slices.SortFunc(rel, cmpTV)
					want = append(want, rel)
				}
				in <- WatermarkMsg(Watermark{Col: 0, Value: base})
				continue
			}
			n := 1 + rng.Intn(4)
			var rows []tvRow
			var ops []Op
			for i := 0; i < n; i++ {
				var r tvRow
				op := Insert
				if len(seen) > 0 && rng.Intn(3) == 0 {
					r, op = seen[rng.Intn(len(seen))], Delete
				} else {
					r = tvRow{base + int64(rng.Intn(6)) - 2, int64(rng.Intn(3))}
					if r.t < 0 || rng.Intn(20) == 0 {
						r.t = -1
					}
				}
				rows, ops = append(rows, r), append(ops, op)
				if r.t < 0 || r.t+delay < wm {
					lateWant = append(lateWant, r)
					continue
				}
				if op == Insert {
					held = append(held, r)
					seen = append(seen, r)
				} else if k := slices.Index(held, r); k >= 0 {
					held = slices.Delete(held, k, k+1)
				}
			}
			in <- ChunkMsg(tvChunk(rows, ops))
		}
		in <- BarrierMsg(Barrier{Epoch: 1})
		close(in)
		e := &EOWC{Input: &tvSource{in}, TimeCol: 0, Delay: delay}
		got := drain(t, env, e.Start(env, []<-chan Message{in}))
		k := 0
		for _, m := range got {
			switch m.Kind {
			case KindChunk:
				if m.Chunk.Ops != nil {
					t.Fatalf("seed %d: output has ops %v", seed, m.Chunk.Ops)
				}
				for k < len(want) && len(want[k]) == 0 {
					k++
				}
				rows := tvRows(m.Chunk.Rec)
				for i := 1; i < len(rows); i++ {
					if rows[i].t < rows[i-1].t {
						t.Fatalf("seed %d: release not in time order: %v", seed, rows)
					}
				}
				slices.SortFunc(rows, cmpTV)
				if k >= len(want) || !slices.Equal(rows, want[k]) {
					t.Fatalf("seed %d: release %d = %v, want %v", seed, k, rows, want)
				}
				k++
			case KindWatermark:
				if m.Watermark.Col != 0 {
					t.Fatalf("seed %d: watermark on column %d", seed, m.Watermark.Col)
				}
			}
		}
		for k < len(want) && len(want[k]) == 0 {
			k++
		}
		if k != len(want) {
			t.Fatalf("seed %d: %d of %d releases", seed, k, len(want))
		}
		slices.SortFunc(lateGot, cmpTV)
		slices.SortFunc(lateWant, cmpTV)
		if !slices.Equal(lateGot, lateWant) {
			t.Fatalf("seed %d: late %v, want %v", seed, lateGot, lateWant)
		}
		if last := got[len(got)-1]; last.Kind != KindBarrier {
			t.Fatalf("seed %d: last message %+v", seed, last)
		}
	}
}

func TestEOWCWatermarkOut(t *testing.T) {
	env := newEnv(t)
	in := make(chan Message, 8)
	in <- ChunkMsg(tvChunk([]tvRow{{10, 1}, {20, 2}}, nil))
	in <- WatermarkMsg(Watermark{Col: 1, Value: 100}) // not the time column: dropped
	in <- WatermarkMsg(Watermark{Col: 0, Value: 16})  // releases ts 10 (10+5 < 16)
	in <- WatermarkMsg(Watermark{Col: 0, Value: 12})  // backwards: ignored
	close(in)
	e := &EOWC{Input: &tvSource{in}, TimeCol: 0, Delay: 5}
	got := drain(t, env, e.Start(env, []<-chan Message{in}))
	if len(got) != 2 || got[0].Kind != KindChunk || got[1].Kind != KindWatermark {
		t.Fatalf("messages %+v", got)
	}
	if rows := tvRows(got[0].Chunk.Rec); !slices.Equal(rows, []tvRow{{10, 1}}) {
		t.Fatalf("rows %v", rows)
	}
	if w := got[1].Watermark; w != (Watermark{Col: 0, Value: 11}) {
		t.Fatalf("watermark %+v", w)
	}
}
