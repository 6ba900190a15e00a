package stream

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

var (
	tvTS = &expr.ColRef{Idx: 0, T: types.TTimestamp, Name: "ts"}
	tvV  = &expr.ColRef{Idx: 1, T: types.TInt8, Name: "v"}
)

// cleanAgg is, by mode, SELECT ts, count(*), max(v), min(v) GROUP BY ts
// (mode 0) or SELECT v, ts, count(*) GROUP BY v, ts (mode 1), closing
// groups by the watermark of ts.
func cleanAgg(in Node, mode int, delay int64) *HashAgg {
	if mode == 0 {
		return &HashAgg{Input: in, GroupBy: []expr.Expr{tvTS},
			Aggs: []AggSpec{{Kind: AggCountStar}, {Kind: AggMax, Arg: tvV}, {Kind: AggMin, Arg: tvV}},
			Cols: []types.Column{{Name: "ts", Type: types.TTimestamp}, {Name: "count", Type: types.TInt8},
				{Name: "max", Type: types.TInt8}, {Name: "min", Type: types.TInt8}},
			Clean: &AggClean{Key: 0, Delay: delay}}
	}
	return &HashAgg{Input: in, GroupBy: []expr.Expr{tvV, tvTS}, Aggs: []AggSpec{{Kind: AggCountStar}},
		Cols: []types.Column{{Name: "v", Type: types.TInt8}, {Name: "ts", Type: types.TTimestamp},
			{Name: "count", Type: types.TInt8}},
		Clean: &AggClean{Key: 1, Delay: delay}}
}

// cleanRows renders a chunk's rows as "a|b|..." (timestamps as µs).
func cleanRows(rec arrow.RecordBatch) []string {
	out := make([]string, rec.NumRows())
	for i := range out {
		var parts []string
		for _, col := range rec.Columns() {
			switch c := col.(type) {
			case *array.Timestamp:
				parts = append(parts, fmt.Sprint(int64(c.Value(i))))
			case *array.Int64:
				parts = append(parts, fmt.Sprint(c.Value(i)))
			}
		}
		out[i] = strings.Join(parts, "|")
	}
	return out
}

// bruteGroups is the model: per open key, its rows' v values.
type bruteGroups map[[2]int64][]int64

// closeDue removes the groups closed at watermark wm and returns their rows.
func (b bruteGroups) closeDue(mode int, wm, delay int64) []string {
	var out []string
	for k, vs := range b {
		if k[0]+delay >= wm {
			continue
		}
		delete(b, k)
		if len(vs) == 0 {
			continue
		}
		if mode == 0 {
			out = append(out, fmt.Sprintf("%d|%d|%d|%d", k[0], len(vs), slices.Max(vs), slices.Min(vs)))
		} else {
			out = append(out, fmt.Sprintf("%d|%d|%d", k[1], k[0], len(vs)))
		}
	}
	slices.Sort(out)
	return out
}

// TestHashAggCleanMatchesBruteForce feeds random inserts, retractions (of
// open and of closed groups' rows), NULL keys, barriers and watermarks to a
// cleaning HashAgg and compares each watermark's closed groups, the output
// watermarks and the late rows with a direct simulation of the rule.
func TestHashAggCleanMatchesBruteForce(t *testing.T) {
	for seed := int64(1); seed <= 60; seed++ {
		rng := rand.New(rand.NewSource(seed))
		mode, delay := int(seed%2), int64(rng.Intn(3))
		env := newEnv(t)
		var mu sync.Mutex
		var lateGot []tvRow
		env.OnLate = func(rec arrow.RecordBatch, _ uint64) {
			mu.Lock()
			lateGot = append(lateGot, tvRows(rec)...)
			mu.Unlock()
		}
		in := make(chan Message, 1024)
		groups := bruteGroups{}
		var want [][]string // per rising watermark: the rows closed
		var wantWM []int64
		var lateWant []tvRow
		var live []tvRow // inserted rows not retracted (open or closed)
		wm := int64(-1 << 62)
		base := int64(0)
		key := func(r tvRow) [2]int64 {
			if mode == 0 {
				return [2]int64{r.t, 0}
			}
			return [2]int64{r.t, r.v}
		}
		for step := 0; step < 80; step++ {
			switch rng.Intn(6) {
			case 0:
				base += int64(rng.Intn(4))
				if base > wm {
					wm = base
					want = append(want, groups.closeDue(mode, wm, delay))
					wantWM = append(wantWM, wm-delay)
				}
				in <- WatermarkMsg(Watermark{Col: 0, Value: base})
				continue
			case 1:
				in <- BarrierMsg(Barrier{Epoch: uint64(step)})
				continue
			}
			n := 1 + rng.Intn(4)
			var rows []tvRow
			var ops []Op
			for i := 0; i < n; i++ {
				var r tvRow
				op := Insert
				if len(live) > 0 && rng.Intn(3) == 0 {
					k := rng.Intn(len(live))
					r, op = live[k], Delete
					live = slices.Delete(live, k, k+1)
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
				vs := groups[key(r)]
				if op == Insert {
					groups[key(r)] = append(vs, r.v)
					live = append(live, r)
				} else {
					k := slices.Index(vs, r.v)
					groups[key(r)] = slices.Delete(vs, k, k+1)
				}
			}
			in <- ChunkMsg(tvChunk(rows, ops))
		}
		close(in)
		h := cleanAgg(&tvSource{in}, mode, delay)
		got := drain(t, env, h.Start(env, []<-chan Message{in}))
		var gotRows [][]string
		var gotWM []int64
		var cur []string
		for _, m := range got {
			switch m.Kind {
			case KindChunk:
				if m.Chunk.Ops != nil {
					t.Fatalf("seed %d: output has ops %v", seed, m.Chunk.Ops)
				}
				cur = append(cur, cleanRows(m.Chunk.Rec)...)
			case KindWatermark:
				if m.Watermark.Col != h.Clean.Key {
					t.Fatalf("seed %d: watermark on column %d", seed, m.Watermark.Col)
				}
				slices.Sort(cur)
				gotRows, gotWM, cur = append(gotRows, cur), append(gotWM, m.Watermark.Value), nil
			}
		}
		if len(cur) > 0 {
			t.Fatalf("seed %d: rows %v after the last watermark", seed, cur)
		}
		if len(gotRows) != len(want) {
			t.Fatalf("seed %d: %d watermarks out, want %d", seed, len(gotRows), len(want))
		}
		for i := range want {
			if !slices.Equal(gotRows[i], want[i]) && !(len(gotRows[i]) == 0 && len(want[i]) == 0) {
				t.Fatalf("seed %d: watermark %d closed %v, want %v", seed, i, gotRows[i], want[i])
			}
		}
		if !slices.Equal(gotWM, wantWM) {
			t.Fatalf("seed %d: watermarks %v, want %v", seed, gotWM, wantWM)
		}
		slices.SortFunc(lateGot, cmpTV)
		slices.SortFunc(lateWant, cmpTV)
		if !slices.Equal(lateGot, lateWant) {
			t.Fatalf("seed %d: late %v, want %v", seed, lateGot, lateWant)
		}
	}
}

// TestHashAggCleanRefusesBadKeys: the key must be a timestamp column.
func TestHashAggCleanRefusesBadKeys(t *testing.T) {
	for _, h := range []*HashAgg{
		{GroupBy: []expr.Expr{tvV}, Clean: &AggClean{Key: 0}},
		{GroupBy: []expr.Expr{tvTS}, Clean: &AggClean{Key: 1}},
		{GroupBy: []expr.Expr{tvTS}, Clean: &AggClean{Key: 0, Delay: -1}},
	} {
		h.Cols = []types.Column{{Name: "k", Type: h.GroupBy[0].Type()}}
		if _, err := h.newRun(newEnv(t)); err == nil {
			t.Errorf("%+v: no error", h.Clean)
		}
	}
}

// TestHashAggCleanExplain says what is freed.
func TestHashAggCleanExplain(t *testing.T) {
	h := cleanAgg(nil, 0, 2_000_000)
	if s := h.Explain(); !strings.Contains(s, "freed when the watermark passes ts + 2s") {
		t.Fatal(s)
	}
}

// TestHashAggCleanDistinctReusedGroup: a group closed while it holds rows
// frees its DISTINCT values, so a later group given the same id counts
// its own values from nothing.
func TestHashAggCleanDistinctReusedGroup(t *testing.T) {
	h := &HashAgg{GroupBy: []expr.Expr{tvTS}, Aggs: []AggSpec{{Kind: AggCount, Arg: tvV, Distinct: true}},
		Cols:  []types.Column{{Name: "ts", Type: types.TTimestamp}, {Name: "n", Type: types.TInt8}},
		Clean: &AggClean{Key: 0}}
	r := startRun(t, h)
	var got []string
	for _, ts := range []int64{1, 10} {
		if _, err := r.handleCleanMsg(ChunkMsg(tvChunk([]tvRow{{ts, 5}, {ts, 5}, {ts, 7}}, nil))); err != nil {
			t.Fatal(err)
		}
		r.flushClean()
		msgs, err := r.handleClean(Watermark{Col: 0, Value: ts + 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if m.Kind == KindChunk {
				got = append(got, cleanRows(m.Chunk.Rec)...)
			}
		}
	}
	if want := []string{"1|2", "10|2"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
