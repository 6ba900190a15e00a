package stream

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// The interval join tests read left rows (k int8, ts timestamp, v int8)
// and right rows (k int8, ts timestamp, w int8); times are small numbers
// of µs.
var (
	ivLeft  = []types.Column{{Name: "k", Type: types.TInt8}, {Name: "lts", Type: types.TTimestamp}, {Name: "v", Type: types.TInt8}}
	ivRight = []types.Column{{Name: "k", Type: types.TInt8}, {Name: "rts", Type: types.TTimestamp}, {Name: "w", Type: types.TInt8}}
)

// ivCase is one shape of interval join: Lo <= lts - rts <= Hi.
type ivCase struct {
	kind         exec.JoinKind
	keyed        bool
	lo, hi       int64
	hasLo, hasHi bool
	strict       bool // < and > rather than <= and >=
	exact        bool // Cond split into Compares (no Residual): pairs filtered without evaluating it
}

func (c ivCase) String() string {
	return fmt.Sprintf("%s keyed=%v lo=%v(%d) hi=%v(%d) strict=%v exact=%v", joinKindNames[c.kind], c.keyed, c.hasLo, c.lo, c.hasHi, c.hi, c.strict, c.exact)
}

func newIntervalJoin(t testing.TB, c ivCase) *HashJoin {
	t.Helper()
	lts, rts := jCol(1, ivLeft[1]), jCol(4, ivRight[1])
	bound := func(op string, off int64) expr.Expr {
		sum, err := expr.NewBinary("+", rts, &expr.Const{V: types.IntervalValue{Micros: off}, T: types.TInterval})
		if err != nil {
			t.Fatal(err)
		}
		e, err := expr.NewBinary(op, lts, sum)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	var conds []expr.Expr
	var cmps []PairCompare
	ge, le := ">=", "<="
	if c.strict {
		ge, le = ">", "<"
	}
	if c.hasLo {
		conds = append(conds, bound(ge, c.lo))
		cmps = append(cmps, PairCompare{L: 1, R: 1, Op: ge, D: c.lo})
	}
	if c.hasHi {
		conds = append(conds, bound(le, c.hi))
		cmps = append(cmps, PairCompare{L: 1, R: 1, Op: le, D: c.hi})
	}
	var cond expr.Expr = conds[0]
	if len(conds) == 2 {
		cond = &expr.And{Args: conds}
	}
	j := &HashJoin{Left: &jsrc{nil, ivLeft}, Right: &jsrc{nil, ivRight}, Kind: c.kind, Cond: cond,
		Cols:     append(append([]types.Column(nil), ivLeft...), ivRight...),
		Interval: &IntervalJoin{LeftTime: 1, RightTime: 1, Lo: c.lo, Hi: c.hi, HasLo: c.hasLo, HasHi: c.hasHi}}
	if c.exact {
		j.Compares = cmps
	}
	if c.keyed {
		j.LeftKeys, j.RightKeys = []expr.Expr{jCol(0, ivLeft[0])}, []expr.Expr{jCol(0, ivRight[0])}
	}
	return j
}

// ivSim is the reference: the rows that are not late, which rows each
// side still holds, and each side's watermark.
type ivSim struct {
	c     ivCase
	rows  [2][][]types.Value
	held  [2][]bool // rows[s][i] is still held by the join
	mark  [2]int64
	late  int
	marks [2]int64 // last output watermark per side's output time column
}

func (m *ivSim) lateRow(s int, ts types.Value) bool {
	checks := m.c.hasHi
	if s == 1 {
		checks = m.c.hasLo
	}
	return checks && ts != nil && m.mark[s] != math.MinInt64 && int64(ts.(types.TimestampValue)) < m.mark[s]
}

// closed reports whether a row of side s at time t can match no later
// row of the other side.
func (m *ivSim) closed(s int, t int64) bool {
	w := m.mark[1-s]
	if w == math.MinInt64 {
		return false
	}
	if s == 0 {
		return m.c.hasLo && t < addSat(w, m.c.lo)
	}
	return m.c.hasHi && t < addSat(w, -m.c.hi)
}

func (m *ivSim) watermark(s int, v int64) {
	if v <= m.mark[s] {
		return
	}
	m.mark[s] = v
	o := 1 - s
	frees, limit := m.c.hasLo, addSat(v, m.c.lo)
	if o == 1 {
		frees, limit = m.c.hasHi, addSat(v, -m.c.hi)
	}
	if !frees {
		return
	}
	for i, r := range m.rows[o] {
		if m.held[o][i] && (r[1] == nil || int64(r[1].(types.TimestampValue)) < limit) {
			m.held[o][i] = false
		}
	}
}

func (m *ivSim) match(l, r []types.Value) bool {
	if m.c.keyed && (l[0] == nil || r[0] == nil || l[0] != r[0]) {
		return false
	}
	if l[1] == nil || r[1] == nil {
		return false
	}
	d := int64(l[1].(types.TimestampValue)) - int64(r[1].(types.TimestampValue))
	if m.c.strict {
		return (!m.c.hasLo || d > m.c.lo) && (!m.c.hasHi || d < m.c.hi)
	}
	return (!m.c.hasLo || d >= m.c.lo) && (!m.c.hasHi || d <= m.c.hi)
}

func (m *ivSim) want() multiset {
	out := multiset{}
	nulls := make([]types.Value, 3)
	cat := func(a, b []types.Value) []types.Value { return append(append([]types.Value(nil), a...), b...) }
	rightHit := make([]bool, len(m.rows[1]))
	for _, l := range m.rows[0] {
		hit := false
		for j, r := range m.rows[1] {
			if m.match(l, r) {
				hit, rightHit[j] = true, true
				out.add(cat(l, r), 1)
			}
		}
		if !hit && (m.c.kind == exec.LeftJoin || m.c.kind == exec.FullJoin) {
			out.add(cat(l, nulls), 1)
		}
	}
	if m.c.kind == exec.RightJoin || m.c.kind == exec.FullJoin {
		for j, r := range m.rows[1] {
			if !rightHit[j] {
				out.add(cat(nulls, r), 1)
			}
		}
	}
	return out
}

// heldCount is how many rows of side s the join should hold: those not
// freed, with a key when the join is keyed.
func (m *ivSim) heldCount(s int) int {
	n := 0
	for i, h := range m.held[s] {
		if h && (!m.c.keyed || m.rows[s][i][0] != nil) {
			n++
		}
	}
	return n
}

// Random append-only streams with random watermarks: the interval join's
// output equals the plain join of the rows that are not late (each late
// row reported once), it holds exactly the rows whose range is still open,
// and no output row is below an output watermark sent before it.
func TestIntervalJoinRandom(t *testing.T) {
	saved := joinCompactMin
	joinCompactMin = 8 // compact often: the time queues must follow
	defer func() { joinCompactMin = saved }()
	var cases []ivCase
	for _, kind := range []exec.JoinKind{exec.InnerJoin, exec.LeftJoin, exec.RightJoin, exec.FullJoin} {
		for _, keyed := range []bool{true, false} {
			for _, exact := range []bool{false, true} {
				cases = append(cases,
					ivCase{kind, keyed, -10, 0, true, true, false, exact},
					ivCase{kind, keyed, -10, 0, true, true, true, exact},
					ivCase{kind, keyed, 0, 0, true, true, false, exact},
					ivCase{kind, keyed, 3, 12, true, true, true, exact},
					ivCase{kind, keyed, 0, 0, true, false, false, exact},
					ivCase{kind, keyed, 0, 5, false, true, true, exact})
			}
		}
	}
	for _, c := range cases {
		for seed := int64(1); seed <= 8; seed++ {
			t.Run(fmt.Sprintf("%s/%d", c, seed), func(t *testing.T) { runIntervalRandom(t, c, seed) })
		}
	}
}

func runIntervalRandom(t *testing.T, c ivCase, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	env := NewEnv(context.Background(), expr.Context{})
	var lateRows int
	env.OnLate = func(rows arrow.RecordBatch, _ uint64) { lateRows += int(rows.NumRows()) }
	j := newIntervalJoin(t, c)
	out := make(chan Message, 1<<12)
	r, err := j.newRun(env, out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.release()
	sim := &ivSim{c: c, mark: [2]int64{math.MinInt64, math.MinInt64}, marks: [2]int64{math.MinInt64, math.MinInt64}}
	got := multiset{}
	outMark := [2]int64{math.MinInt64, math.MinInt64} // per output time column (left, right)
	drainOut := func() {
		for {
			select {
			case m := <-out:
				switch m.Kind {
				case KindChunk:
					for i := 0; i < m.Chunk.Len(); i++ {
						row := rowValues(m.Chunk.Rec, i, j.Cols)
						for s, col := range []int{1, 4} {
							// Rows from late-checked sides respect the output watermarks.
							if row[col] != nil && c.hasLo && c.hasHi && int64(row[col].(types.TimestampValue)) < outMark[s] {
								t.Fatalf("output row %v below the output watermark %d of column %d", row, outMark[s], col)
							}
						}
						got.add(row, int(m.Chunk.Op(i).Sign()))
					}
				case KindWatermark:
					s := 0
					if m.Watermark.Col == 4 {
						s = 1
					} else if m.Watermark.Col != 1 {
						t.Fatalf("watermark on column %d", m.Watermark.Col)
					}
					if m.Watermark.Value <= outMark[s] {
						t.Fatalf("output watermark went from %d to %d", outMark[s], m.Watermark.Value)
					}
					outMark[s] = m.Watermark.Value
				}
			default:
				return
			}
		}
	}
	now := [2]int64{50, 50}
	for step := 0; step < 120; step++ {
		s := rng.Intn(2)
		cols := ivLeft
		if s == 1 {
			cols = ivRight
		}
		if rng.Intn(4) == 0 {
			// A watermark somewhat behind this side's time, sometimes below its last.
			v := now[s] - int64(rng.Intn(12))
			sim.watermark(s, v)
			if !r.iv.onMark(r, s, Watermark{Col: 1, Value: v}) {
				t.Fatal("stopped")
			}
		} else {
			var rows [][]types.Value
			for n := rng.Intn(6); n >= 0; n-- {
				now[s] += int64(rng.Intn(3))
				var k, ts types.Value = int64(rng.Intn(3)), types.TimestampValue(now[s] - int64(rng.Intn(15)))
				if rng.Intn(15) == 0 {
					k = nil
				}
				if rng.Intn(15) == 0 {
					ts = nil
				}
				row := []types.Value{k, ts, int64(step*10 + n)}
				rows = append(rows, row)
				if sim.lateRow(s, ts) {
					sim.late++
					continue
				}
				sim.rows[s] = append(sim.rows[s], row)
				sim.held[s] = append(sim.held[s], ts != nil && !sim.closed(s, int64(ts.(types.TimestampValue))))
			}
			if err := r.consume(s, jChunk(t, cols, rows, nil)); err != nil {
				t.Fatal(err)
			}
		}
		drainOut()
		for side := range 2 {
			if got, want := r.sides[side].live, sim.heldCount(side); got != want {
				t.Fatalf("step %d: side %d holds %d rows, want %d", step, side, got, want)
			}
		}
	}
	if want := sim.want(); !sameMultiset(got, want) {
		t.Fatalf("output\n%v\nwant\n%v", got, want)
	}
	if lateRows != sim.late || r.iv.lateN != int64(sim.late) {
		t.Fatalf("%d late rows reported (%d counted), want %d", lateRows, r.iv.lateN, sim.late)
	}
}

// A row exactly at its side's watermark is not late; one µs below is.
func TestIntervalJoinLateBoundary(t *testing.T) {
	c := ivCase{exec.InnerJoin, true, -10, 0, true, true, false, false}
	env := NewEnv(context.Background(), expr.Context{})
	var late [][]types.Value
	env.OnLate = func(rows arrow.RecordBatch, _ uint64) {
		for i := 0; i < int(rows.NumRows()); i++ {
			late = append(late, rowValues(rows, i, ivLeft))
		}
	}
	j := newIntervalJoin(t, c)
	out := make(chan Message, 64)
	r, err := j.newRun(env, out)
	if err != nil {
		t.Fatal(err)
	}
	ts := func(v int64) types.Value { return types.TimestampValue(v) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(r.consume(1, jChunk(t, ivRight, [][]types.Value{{int64(1), ts(100), int64(0)}}, nil)))
	r.iv.onMark(r, 0, Watermark{Col: 1, Value: 95})
	r.iv.onMark(r, 1, Watermark{Col: 1, Value: 90})
	// Left watermark 95: left rows at 95 join, at 94 are late.
	must(r.consume(0, jChunk(t, ivLeft, [][]types.Value{{int64(1), ts(95), int64(1)}, {int64(1), ts(94), int64(2)}}, nil)))
	if len(late) != 1 || late[0][2] != int64(2) {
		t.Fatalf("late rows %v, want the one at 94", late)
	}
	var pairs int
	for len(out) > 0 {
		if m := <-out; m.Kind == KindChunk {
			pairs += m.Chunk.Len()
		} else if m.Kind == KindWatermark {
			// left time: min(95, 90 - 10); right time: min(90, 95 - 0).
			if want := map[int]int64{1: 80, 4: 90}[m.Watermark.Col]; m.Watermark.Value != want {
				t.Fatalf("watermark %+v, want %d", m.Watermark, want)
			}
		}
	}
	if pairs != 1 {
		t.Fatalf("%d pairs, want 1", pairs)
	}
	// Left watermark 101 frees the right row at 100 (below 101 - 0).
	r.iv.onMark(r, 0, Watermark{Col: 1, Value: 101})
	if r.sides[1].live != 0 {
		t.Fatalf("right side holds %d rows, want 0", r.sides[1].live)
	}
}
