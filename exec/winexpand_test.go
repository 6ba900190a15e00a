package exec

import (
	"math"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// bruteWindows lists the windows containing t by scanning every aligned
// start near t (the definition, without the arithmetic shortcuts).
func bruteWindows(w TimeWindows, t int64) [][2]int64 {
	var out [][2]int64
	if w.Cumulate {
		for p := t - w.Size - 1; p <= t; p++ {
			if ((p-w.Offset)%w.Size+w.Size)%w.Size != 0 {
				continue
			}
			for e := p + w.Slide; e <= p+w.Size; e += w.Slide {
				if p <= t && t < e {
					out = append(out, [2]int64{p, e})
				}
			}
		}
		return out
	}
	for s := t - w.Size + 1; s <= t; s++ {
		if ((s-w.Offset)%w.Slide+w.Slide)%w.Slide == 0 {
			out = append(out, [2]int64{s, s + w.Size})
		}
	}
	return out
}

func TestTimeWindowsMatchDefinition(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	specs := []TimeWindows{
		{Size: 10, Slide: 10},
		{Size: 10, Slide: 10, Offset: 3},
		{Size: 12, Slide: 4, Offset: 1},
		{Size: 6, Slide: 1},
		{Size: 12, Slide: 3, Cumulate: true},
		{Size: 12, Slide: 3, Offset: 5, Cumulate: true},
		{Size: 7, Slide: 7, Cumulate: true},
	}
	for _, w := range specs {
		var ts []any
		for i := 0; i < 300; i++ {
			ts = append(ts, int64(rng.Intn(200)-100)) // before and after the epoch
		}
		ts = append(ts, nil, int64(0), int64(-1), w.Offset, w.Offset-1)
		a := arr(types.TTimestamp, ts...)
		src, start, end, err := w.Windows(a)
		if err != nil {
			t.Fatal(err)
		}
		var got [][3]int64
		for k := range start {
			r := int64(k)
			if src != nil {
				r = int64(src[k])
			}
			got = append(got, [3]int64{r, start[k], end[k]})
		}
		var want [][3]int64
		for i, v := range ts {
			if v == nil {
				continue
			}
			for _, win := range bruteWindows(w, v.(int64)) {
				want = append(want, [3]int64{int64(i), win[0], win[1]})
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%v: %d windows, want %d", w, len(got), len(want))
		}
		for k := range got {
			if got[k] != want[k] {
				t.Fatalf("%v: window %d is %v, want %v", w, k, got[k], want[k])
			}
		}
	}
}

func TestTimeWindowsIdentityAndRange(t *testing.T) {
	w := TimeWindows{Size: 10, Slide: 10}
	src, start, end, err := w.Windows(arr(types.TTimestamp, int64(-1), int64(10), int64(19)))
	if err != nil || src != nil {
		t.Fatalf("tumble without NULLs should be the identity: %v %v", src, err)
	}
	if start[0] != -10 || end[0] != 0 || start[1] != 10 || start[2] != 10 {
		t.Fatalf("starts %v ends %v", start, end)
	}
	_, _, _, err = w.Windows(arr(types.TTimestamp, int64(math.MaxInt64-5)))
	if pgerr.CodeOf(err) != pgerr.DatetimeFieldOverflow {
		t.Fatalf("a window end past the range: %v", err)
	}
	if got := (TimeWindows{Size: 10, Slide: 2, Offset: 1}).String(); got != "HOP(slide 2µs, size 10µs, offset 1µs)" {
		t.Fatalf("String: %s", got)
	}
}

func TestWindowExpandNode(t *testing.T) {
	in := src(cols(types.TInt4, types.TTimestamp), 2, []any{1, 2, 3, 4}, []any{int64(5), nil, int64(-3), int64(12)})
	n := &WindowExpand{Input: in, TimeCol: 1, Windows: TimeWindows{Size: 10, Slide: 5},
		Cols: append(cols(types.TInt4, types.TTimestamp), types.Column{Name: "window_start", Type: types.TTimestamp}, types.Column{Name: "window_end", Type: types.TTimestamp})}
	wantRows(t, run(t, n), [][]any{
		{int64(1), int64(5), int64(0), int64(10)}, {int64(1), int64(5), int64(5), int64(15)},
		{int64(3), int64(-3), int64(-10), int64(0)}, {int64(3), int64(-3), int64(-5), int64(5)},
		{int64(4), int64(12), int64(5), int64(15)}, {int64(4), int64(12), int64(10), int64(20)},
	})
	if got := n.Explain(); got != "WindowExpand: HOP(slide 5µs, size 10µs) on c1" {
		t.Fatalf("explain: %s", got)
	}
}

func TestSessionWindowNode(t *testing.T) {
	tz := types.TTimestampTZ
	c := append(cols(types.TText, tz), types.Column{Name: "window_start", Type: tz}, types.Column{Name: "window_end", Type: tz})
	// Per key: a sorts to 1, 4 (within the gap of 5), 9 (4+5: a new session),
	// 20; b: -7, -3; NULL keys form their own partition; NULL times drop.
	in := src(cols(types.TText, tz), 3,
		[]any{"a", "b", "a", "a", nil, "b", "a", nil, "a"},
		[]any{int64(4), int64(-3), int64(9), int64(1), int64(2), int64(-7), int64(20), int64(3), nil})
	n := &SessionWindow{Input: in, TimeCol: 1, PartitionBy: []expr.Expr{col(0, types.TText)}, Gap: 5, Cols: c}
	wantRows(t, run(t, n), [][]any{
		{"a", int64(1), int64(1), int64(9)}, {"a", int64(4), int64(1), int64(9)},
		{"a", int64(9), int64(9), int64(14)}, {"a", int64(20), int64(20), int64(25)},
		{"b", int64(-7), int64(-7), int64(2)}, {"b", int64(-3), int64(-7), int64(2)},
		{nil, int64(2), int64(2), int64(8)}, {nil, int64(3), int64(2), int64(8)},
	})
	// Without a partition, one sequence of sessions over all rows.
	n = &SessionWindow{Input: in, TimeCol: 1, Gap: 5, Cols: c}
	got := run(t, n)
	// -7, -3, 1, 2, 3, 4 chain into [-7, 9); then [9, 14) and [20, 25).
	if len(got) != 8 || got[0][2] != int64(-7) || got[5][3] != int64(9) || got[6][2] != int64(9) || got[6][3] != int64(14) || got[7][3] != int64(25) {
		t.Fatalf("one partition: %v", got)
	}
}

// TestSessionWindowMatchesDefinition compares random inputs with sessions
// computed by merging each row's [t, t+gap) interval.
func TestSessionWindowMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	const gap = 4
	for round := 0; round < 20; round++ {
		var keys, ts []any
		for i := 0; i < 60; i++ {
			keys = append(keys, int64(rng.Intn(3)))
			ts = append(ts, int64(rng.Intn(80)-40))
		}
		in := src(cols(types.TInt8, types.TTimestamp), 7, keys, ts)
		c := append(cols(types.TInt8, types.TTimestamp), types.Column{Name: "s", Type: types.TTimestamp}, types.Column{Name: "e", Type: types.TTimestamp})
		got := run(t, &SessionWindow{Input: in, TimeCol: 1, PartitionBy: []expr.Expr{col(0, types.TInt8)}, Gap: gap, Cols: c})
		for _, r := range got {
			k, v, s, e := r[0].(int64), r[1].(int64), r[2].(int64), r[3].(int64)
			// s and e are the closure of v's interval under overlap.
			lo, hi := v, v+gap
			for changed := true; changed; {
				changed = false
				for i := range ts {
					if keys[i].(int64) != k {
						continue
					}
					u := ts[i].(int64)
					if u < hi && u+gap > lo && (u < lo || u+gap > hi) {
						lo, hi = min(lo, u), max(hi, u+gap)
						changed = true
					}
				}
			}
			if s != lo || e != hi {
				t.Fatalf("row %v: session [%d, %d), want [%d, %d)", r, s, e, lo, hi)
			}
		}
		if len(got) != len(ts) {
			t.Fatalf("%d rows, want %d", len(got), len(ts))
		}
	}
}

// BenchmarkExpandWindows expands 4096-row batches over TUMBLE (no copy),
// HOP 2s/10s (5 windows a row) and CUMULATE 1s/10s.
func BenchmarkExpandWindows(b *testing.B) {
	vals := make([]any, 4096)
	for i := range vals {
		vals[i] = int64(i) * 997_000
	}
	c := cols(types.TInt8, types.TTimestamp)
	rec := newBatch(c, []arrow.Array{arr(types.TInt8, vals...), arr(types.TTimestamp, vals...)}, len(vals))
	schema := types.ArrowSchema(append(c, c[1], c[1]))
	for _, w := range []TimeWindows{{Size: 10e6, Slide: 10e6}, {Size: 10e6, Slide: 2e6}, {Size: 10e6, Slide: 1e6, Cumulate: true}} {
		b.Run(w.String(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				out, _, err := ExpandWindows(mem, schema, rec, 1, types.TTimestamp, w)
				if err != nil {
					b.Fatal(err)
				}
				out.Release()
			}
			b.ReportMetric(float64(b.N)*4096/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
