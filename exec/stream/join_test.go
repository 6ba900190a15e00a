package stream

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// The join tests read left rows (k int8, v int8, s text) and right rows
// (k int4, w int8, t text).
var (
	jLeft  = []types.Column{{Name: "k", Type: types.TInt8}, {Name: "v", Type: types.TInt8}, {Name: "s", Type: types.TText}}
	jRight = []types.Column{{Name: "k", Type: types.TInt4}, {Name: "w", Type: types.TInt8}, {Name: "t", Type: types.TText}}
)

// jsrc is a Node with given columns whose output the test feeds.
type jsrc struct {
	ch   chan Message
	cols []types.Column
}

func (s *jsrc) Columns() []types.Column                     { return s.cols }
func (s *jsrc) Inputs() []Node                              { return nil }
func (s *jsrc) Explain() string                             { return "test source" }
func (s *jsrc) Start(*Env, []<-chan Message) <-chan Message { return s.ch }

func jChunk(t testing.TB, cols []types.Column, rows [][]types.Value, ops []Op) *Chunk {
	t.Helper()
	arrs := make([]arrow.Array, len(cols))
	for j, c := range cols {
		b := types.NewBuilder(memory.DefaultAllocator, c.Type)
		for _, r := range rows {
			if err := types.AppendValue(b, r[j], c.Type); err != nil {
				t.Fatal(err)
			}
		}
		arrs[j] = b.NewArray()
		b.Release()
	}
	return &Chunk{Rec: array.NewRecordBatch(types.ArrowSchema(cols), arrs, int64(len(rows))), Ops: ops}
}

func jCol(idx int, c types.Column) *expr.ColRef {
	return &expr.ColRef{Idx: idx, T: c.Type, Name: c.Name}
}

// joinKeys are the key layouts the property test runs: one int key (mixed
// widths), one text key, two keys (encoded), none (a cross join).
var joinKeys = map[string][2][]expr.Expr{
	"int":   {{jCol(0, jLeft[0])}, {jCol(0, jRight[0])}},
	"text":  {{jCol(2, jLeft[2])}, {jCol(2, jRight[2])}},
	"multi": {{jCol(0, jLeft[0]), jCol(2, jLeft[2])}, {jCol(0, jRight[0]), jCol(2, jRight[2])}},
	"cross": {nil, nil},
}

func newTestJoin(t testing.TB, kind exec.JoinKind, keys string, cond bool, l, r chan Message) *HashJoin {
	t.Helper()
	cols := append(append([]types.Column(nil), jLeft...), jRight...)
	if kind == exec.SemiJoin || kind == exec.AntiJoin {
		cols = jLeft
	}
	j := &HashJoin{Left: &jsrc{l, jLeft}, Right: &jsrc{r, jRight}, Kind: kind,
		LeftKeys: joinKeys[keys][0], RightKeys: joinKeys[keys][1], Cols: cols}
	if cond {
		c, err := expr.NewBinary("<", jCol(1, jLeft[1]), jCol(4, jRight[1]))
		if err != nil {
			t.Fatal(err)
		}
		j.Cond = c
	}
	return j
}

// bruteJoin is the batch join of two multisets of rows by nested loops.
func bruteJoin(kind exec.JoinKind, keys string, cond bool, left, right [][]types.Value) [][]types.Value {
	match := func(l, r []types.Value) bool {
		eq := func(a, b types.Value) bool { return a != nil && b != nil && a == b }
		switch keys {
		case "int":
			if !eq(l[0], r[0]) {
				return false
			}
		case "text":
			if !eq(l[2], r[2]) {
				return false
			}
		case "multi":
			if !eq(l[0], r[0]) || !eq(l[2], r[2]) {
				return false
			}
		}
		return !cond || l[1] != nil && r[1] != nil && l[1].(int64) < r[1].(int64)
	}
	nulls := func(n int) []types.Value { return make([]types.Value, n) }
	cat := func(a, b []types.Value) []types.Value { return append(append([]types.Value(nil), a...), b...) }
	var out [][]types.Value
	rightHit := make([]bool, len(right))
	for _, l := range left {
		hit := false
		for j, r := range right {
			if match(l, r) {
				hit = true
				rightHit[j] = true
				if kind != exec.SemiJoin && kind != exec.AntiJoin {
					out = append(out, cat(l, r))
				}
			}
		}
		switch {
		case !hit && (kind == exec.LeftJoin || kind == exec.FullJoin):
			out = append(out, cat(l, nulls(len(jRight))))
		case hit && kind == exec.SemiJoin, !hit && kind == exec.AntiJoin:
			out = append(out, l)
		}
	}
	if kind == exec.RightJoin || kind == exec.FullJoin {
		for j, r := range right {
			if !rightHit[j] {
				out = append(out, cat(nulls(len(jLeft)), r))
			}
		}
	}
	return out
}

// multiset counts rows by identity.
type multiset map[string]int

func (m multiset) add(row []types.Value, n int) {
	k := string(appendKey(nil, row, nil))
	if m[k] += n; m[k] == 0 {
		delete(m, k)
	}
}

func (m multiset) String() string {
	var parts []string
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%q x%d", k, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, "\n")
}

func sameMultiset(a, b multiset) bool {
	if len(a) != len(b) {
		return false
	}
	for k, n := range a {
		if b[k] != n {
			return false
		}
	}
	return true
}

// changelog generates random changes to a multiset of rows of one side.
type changelog struct {
	rng     *rand.Rand
	cols    []types.Column
	rows    [][]types.Value // the side's current rows
	retract bool            // deletes and updates allowed
	keys    int             // keys are drawn from [0, keys)
}

func (g *changelog) randRow() []types.Value {
	if len(g.rows) > 0 && g.rng.Intn(8) == 0 {
		return append([]types.Value(nil), g.rows[g.rng.Intn(len(g.rows))]...) // a duplicate
	}
	maybe := func(v types.Value) types.Value {
		if g.rng.Intn(10) == 0 {
			return nil
		}
		return v
	}
	return []types.Value{
		maybe(int64(g.rng.Intn(g.keys))),
		maybe(int64(g.rng.Intn(5))),
		maybe([]string{"a", "b", "c"}[g.rng.Intn(3)]),
	}
}

// chunk makes a random chunk of up to max changes and applies it to rows.
func (g *changelog) chunk(t testing.TB, max int) *Chunk {
	var rows [][]types.Value
	var ops []Op
	n := 1 + g.rng.Intn(max)
	for len(rows) < n {
		pick := func() []types.Value {
			i := g.rng.Intn(len(g.rows))
			r := g.rows[i]
			g.rows[i] = g.rows[len(g.rows)-1]
			g.rows = g.rows[:len(g.rows)-1]
			return r
		}
		switch x := g.rng.Intn(10); {
		case !g.retract || len(g.rows) == 0 || x < 5:
			r := g.randRow()
			g.rows = append(g.rows, r)
			rows, ops = append(rows, r), append(ops, Insert)
		case x < 8:
			rows, ops = append(rows, pick()), append(ops, Delete)
		default:
			before, after := pick(), g.randRow()
			g.rows = append(g.rows, after)
			rows, ops = append(rows, before, after), append(ops, UpdateBefore, UpdateAfter)
		}
	}
	all := true
	for _, op := range ops {
		all = all && op == Insert
	}
	if all && g.rng.Intn(2) == 0 {
		ops = nil
	}
	return jChunk(t, g.cols, rows, ops)
}

var joinKindList = []exec.JoinKind{exec.InnerJoin, exec.LeftJoin, exec.RightJoin, exec.FullJoin, exec.SemiJoin, exec.AntiJoin}

// TestHashJoinRandomChangelogs feeds random changelogs (inserts, deletes of
// held rows, update pairs, duplicates, NULL keys) to both sides of every
// kind of join, and checks at every barrier that the accumulated output
// equals the nested-loop join of the accumulated inputs.
func TestHashJoinRandomChangelogs(t *testing.T) {
	defer func(n int) { joinCompactMin = n }(joinCompactMin)
	joinCompactMin = 8 // compact often
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	for _, kind := range joinKindList {
		for _, keys := range []string{"int", "text", "multi", "cross"} {
			// The condition evaluated, compared in place (Compares), and
			// both (Compares and a Residual);
			// "pruned" also sends columns 2 (s) and 4 (w) as NULLs
			// (HashJoin.Pruned).
			for _, mode := range []string{"none", "cond", "compare", "both", "pruned"} {
				for seed := 0; seed < seeds; seed++ {
					name := fmt.Sprintf("%s/%s/cond=%s/%d", kind, keys, mode, seed)
					t.Run(name, func(t *testing.T) { runRandomJoin(t, kind, keys, mode, int64(seed)) })
				}
			}
		}
	}
}

func runRandomJoin(t *testing.T, kind exec.JoinKind, keys string, mode string, seed int64) {
	cond := mode != "none"
	rng := rand.New(rand.NewSource(seed))
	const epochs = 25
	nkeys := 4
	if seed%2 == 1 {
		nkeys = 40 // many groups come and go: the key table compacts
	}
	gens := [2]*changelog{{rng: rng, cols: jLeft, keys: nkeys}, {rng: rng, cols: jRight, keys: nkeys}}
	// Retractions start at a random epoch per side (some never), so the
	// identity index is built over rows held already.
	start := [2]int{rng.Intn(epochs + 5), rng.Intn(epochs + 5)}
	var script [2][]Message
	var want []multiset
	for e := 1; e <= epochs; e++ {
		for s, g := range gens {
			g.retract = e >= start[s]
			for c := rng.Intn(4); c > 0; c-- {
				script[s] = append(script[s], ChunkMsg(g.chunk(t, 8)))
			}
			script[s] = append(script[s], BarrierMsg(Barrier{Epoch: uint64(e)}))
		}
		m := multiset{}
		for _, r := range bruteJoin(kind, keys, cond, gens[0].rows, gens[1].rows) {
			if mode == "pruned" {
				r = append([]types.Value(nil), r...) // a semi join's row is the input's
				for _, c := range []int{2, 4} {
					if c < len(r) {
						r[c] = nil
					}
				}
			}
			m.add(r, 1)
		}
		want = append(want, m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a deadlock guard
	defer cancel()
	env := NewEnv(ctx, expr.Context{})
	l, r := make(chan Message), make(chan Message)
	j := newTestJoin(t, kind, keys, cond, l, r)
	switch mode {
	case "compare": // v < w: left[1] - right[1] < 0
		j.Compares = []PairCompare{{L: 1, R: 1, Op: "<", D: 0}}
	case "both":
		j.Compares, j.Residual = []PairCompare{{L: 1, R: 1, Op: "<=", D: 0}}, j.Cond
	case "pruned":
		j.Compares = []PairCompare{{L: 1, R: 1, Op: "<", D: 0}}
		j.Pruned = make([]bool, len(j.Cols))
		for _, c := range []int{2, 4} {
			if c < len(j.Pruned) {
				j.Pruned[c] = true
			}
		}
	}
	out := j.Start(env, []<-chan Message{l, r})
	for s, ch := range []chan Message{l, r} {
		go func() {
			defer close(ch)
			for _, m := range script[s] {
				select {
				case ch <- m:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	got := multiset{}
	epoch := 0
	for m := range out {
		switch m.Kind {
		case KindChunk:
			c := m.Chunk
			for i := 0; i < c.Len(); i++ {
				row := rowValues(c.Rec, i, j.Cols)
				k := string(appendKey(nil, row, nil))
				if c.Op(i).Sign() < 0 && got[k] == 0 {
					t.Fatalf("epoch %d: retraction of a row not in the output: %v", epoch+1, row)
				}
				got.add(row, int(c.Op(i).Sign()))
			}
		case KindBarrier:
			if m.Barrier.Epoch != uint64(epoch+1) {
				t.Fatalf("barrier %d after epoch %d", m.Barrier.Epoch, epoch)
			}
			if !sameMultiset(got, want[epoch]) {
				t.Fatalf("epoch %d: output\n%v\nwant\n%v", epoch+1, got, want[epoch])
			}
			epoch++
		}
	}
	if err := env.Err(); err != nil {
		t.Fatal(err)
	}
	if epoch != epochs {
		t.Fatalf("%d barriers, want %d", epoch, epochs)
	}
}

// runJoin feeds fixed messages to a join and returns its output.
func runJoin(t *testing.T, j *HashJoin, left, right []Message) ([]Message, error) {
	t.Helper()
	l, r := make(chan Message, len(left)), make(chan Message, len(right))
	for _, m := range left {
		l <- m
	}
	for _, m := range right {
		r <- m
	}
	close(l)
	close(r)
	j.Left.(*jsrc).ch, j.Right.(*jsrc).ch = l, r
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	env := NewEnv(ctx, expr.Context{})
	var got []Message
	for m := range j.Start(env, []<-chan Message{l, r}) {
		got = append(got, m)
	}
	return got, env.Err()
}

func TestHashJoinRetractionOfMissingRow(t *testing.T) {
	j := newTestJoin(t, exec.InnerJoin, "int", false, nil, nil)
	row := []types.Value{int64(1), int64(2), "a"}
	_, err := runJoin(t, j, []Message{ChunkMsg(jChunk(t, jLeft, [][]types.Value{row}, []Op{Delete}))}, nil)
	if err == nil || !strings.Contains(err.Error(), "does not hold") {
		t.Fatalf("err = %v", err)
	}
}

func TestHashJoinWatermarkOnKeys(t *testing.T) {
	l, r := make(chan Message), make(chan Message)
	j := newTestJoin(t, exec.InnerJoin, "int", false, l, r)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	env := NewEnv(ctx, expr.Context{})
	out := j.Start(env, []<-chan Message{l, r})
	expect := func(want ...Watermark) {
		t.Helper()
		for _, w := range want {
			if m := <-out; m.Kind != KindWatermark || m.Watermark != w {
				t.Fatalf("got %+v, want watermark %+v", m, w)
			}
		}
	}
	l <- WatermarkMsg(Watermark{Col: 1, Value: 99}) // not a key: dropped
	l <- WatermarkMsg(Watermark{Col: 0, Value: 10}) // the right key has none yet
	r <- WatermarkMsg(Watermark{Col: 0, Value: 7})
	expect(Watermark{Col: 0, Value: 7}, Watermark{Col: 3, Value: 7}) // left key, right key
	r <- WatermarkMsg(Watermark{Col: 0, Value: 20})
	expect(Watermark{Col: 0, Value: 10}, Watermark{Col: 3, Value: 10})
	close(l) // no longer holds the minimum back
	expect(Watermark{Col: 0, Value: 20}, Watermark{Col: 3, Value: 20})
	close(r)
	if m, ok := <-out; ok {
		t.Fatalf("got %+v after the inputs closed", m)
	}
}

// TestHashJoinKeyEquality joins keys equal under SQL = but stored
// differently: float -0 and 0, numeric 1.5 and 1.50, char(n) padding.
func TestHashJoinKeyEquality(t *testing.T) {
	bp := types.T{Kind: types.Bpchar, Typmod: 4 + 3}
	for _, tc := range []struct {
		t    types.T
		l, r types.Value
	}{
		{types.TFloat8, 0.0, negZero()},
		{types.TNumeric, "1.5", "1.50"},
		{bp, "a", "a  "},
	} {
		cols := []types.Column{{Name: "x", Type: tc.t}}
		k := jCol(0, cols[0])
		j := &HashJoin{Left: &jsrc{cols: cols}, Right: &jsrc{cols: cols}, Kind: exec.InnerJoin,
			LeftKeys: []expr.Expr{k}, RightKeys: []expr.Expr{k}, Cols: append(append([]types.Column(nil), cols...), cols...)}
		got, err := runJoin(t, j, []Message{ChunkMsg(jChunk(t, cols, [][]types.Value{{tc.l}}, nil))},
			[]Message{ChunkMsg(jChunk(t, cols, [][]types.Value{{tc.r}}, nil))})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Chunk.Len() != 1 {
			t.Fatalf("%s: %v and %v do not join: %+v", tc.t, tc.l, tc.r, got)
		}
	}
}

func negZero() float64 {
	z := 0.0
	return -z
}

func TestHashJoinOutputChunksBounded(t *testing.T) {
	j := newTestJoin(t, exec.InnerJoin, "cross", false, nil, nil)
	rows := make([][]types.Value, 100)
	for i := range rows {
		rows[i] = []types.Value{int64(i), int64(i), "x"}
	}
	got, err := runJoin(t, j,
		[]Message{ChunkMsg(jChunk(t, jLeft, rows, nil)), BarrierMsg(Barrier{Epoch: 1})},
		[]Message{BarrierMsg(Barrier{Epoch: 1}), ChunkMsg(jChunk(t, jRight, rows, nil))})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, m := range got {
		if m.Kind == KindChunk {
			if m.Chunk.Len() > joinOutRows {
				t.Fatalf("chunk of %d rows", m.Chunk.Len())
			}
			total += m.Chunk.Len()
		}
	}
	if total != 100*100 {
		t.Fatalf("%d rows", total)
	}
}

// TestJoinGatherAndIdentity gathers rows of every storage type from more
// batches than gather caches (segCacheSize, so segments evict each other;
// some with no NULLs) and NULL rows, and checks that identical rows hash and compare
// equal wherever they are stored.
func TestJoinGatherAndIdentity(t *testing.T) {
	i8 := types.TInt8
	cols := []types.Column{
		{Name: "b", Type: types.TBool}, {Name: "i2", Type: types.TInt2}, {Name: "i4", Type: types.TInt4},
		{Name: "i8", Type: types.TInt8}, {Name: "f4", Type: types.TFloat4}, {Name: "f8", Type: types.TFloat8},
		{Name: "n", Type: types.TNumeric}, {Name: "s", Type: types.TText}, {Name: "by", Type: types.TBytea},
		{Name: "d", Type: types.TDate}, {Name: "tm", Type: types.TTime}, {Name: "ts", Type: types.TTimestamp},
		{Name: "tz", Type: types.TTimestampTZ}, {Name: "iv", Type: types.TInterval}, {Name: "o", Type: types.TOid},
		{Name: "a", Type: types.ArrayOf(i8)},
	}
	rng := rand.New(rand.NewSource(3))
	noNulls := false
	randRow := func() []types.Value {
		v := func(x types.Value) types.Value {
			if !noNulls && rng.Intn(6) == 0 {
				return nil
			}
			return x
		}
		k := rng.Intn(3)
		return []types.Value{
			v(k == 0), v(int64(k)), v(int64(k)), v(int64(k)), v(float64(k) / 2), v(float64(k) / 4),
			v(fmt.Sprintf("%d.5", k)), v(strings.Repeat("x", k)), v([]byte{byte(k)}),
			v(types.DateValue(k)), v(types.TimeValue(k)), v(types.TimestampValue(k)),
			v(types.TimestampValue(k)), v(types.IntervalValue{Days: int32(k)}), v(int64(k)),
			v([]types.Value{int64(k), nil}),
		}
	}
	rows := make([][][]types.Value, 2*segCacheSize+3)
	var recs []arrow.RecordBatch
	for b := range rows {
		for i := 0; i < 40; i++ {
			noNulls = b%3 == 0
			rows[b] = append(rows[b], randRow())
		}
		recs = append(recs, jChunk(t, cols, rows[b], nil).Rec)
	}
	var refs []ref
	for k := 0; k < 400; k++ {
		if rng.Intn(8) == 0 {
			refs = append(refs, nullRef)
			continue
		}
		refs = append(refs, ref{int32(rng.Intn(len(rows))), int32(rng.Intn(40))})
	}
	arrs := make([]arrow.Array, len(cols))
	for c, col := range cols {
		arrs[c] = gather(col.Type, recs, c, refs)
	}
	got := array.NewRecordBatch(types.ArrowSchema(cols), arrs, int64(len(refs)))
	gotHash := rowHashes(got, cols, nil)
	hashes := make([][]uint64, len(recs))
	for b, rec := range recs {
		hashes[b] = rowHashes(rec, cols, nil)
	}
	for k, r := range refs {
		row := rowValues(got, k, cols)
		if r.seg < 0 {
			for c, v := range row {
				if v != nil {
					t.Fatalf("row %d column %s: %v, want NULL", k, cols[c].Name, v)
				}
			}
			continue
		}
		want := rowValues(recs[r.seg], int(r.row), cols)
		if string(appendKey(nil, row, nil)) != string(appendKey(nil, want, nil)) {
			t.Fatalf("row %d: %v, want %v", k, row, want)
		}
		if !sameRowAt(got, k, recs[r.seg], int(r.row), cols) || gotHash[k] != hashes[r.seg][r.row] {
			t.Fatalf("row %d is not identical to its source", k)
		}
		// against every source row: identical exactly when the values are
		for s := range rows {
			for i := range rows[s] {
				other := rowValues(recs[s], i, cols)
				same := string(appendKey(nil, other, nil)) == string(appendKey(nil, want, nil))
				if sameRowAt(got, k, recs[s], i, cols) != same || same && gotHash[k] != hashes[s][i] {
					t.Fatalf("row %d vs %d/%d: identical %v, want %v", k, s, i, !same, same)
				}
			}
		}
	}
}

// TestHashJoinStateShrinks holds many rows and keys, retracts nearly all of
// them and checks that the state shrank to the live rows and that the join
// still answers right.
func TestHashJoinStateShrinks(t *testing.T) {
	defer func(n int) { joinCompactMin = n }(joinCompactMin)
	joinCompactMin = 256
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a deadlock guard
	defer cancel()
	env := NewEnv(ctx, expr.Context{})
	out := make(chan Message, 1024)
	j := newTestJoin(t, exec.FullJoin, "int", false, nil, nil)
	r, err := j.newRun(env, out)
	if err != nil {
		t.Fatal(err)
	}
	got := multiset{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m := range out {
			for i := 0; i < m.Chunk.Len(); i++ {
				got.add(rowValues(m.Chunk.Rec, i, j.Cols), int(m.Chunk.Op(i).Sign()))
			}
		}
	}()
	const n = 5000
	var held [2][][]types.Value
	for s, cols := range [][]types.Column{jLeft, jRight} {
		for from := 0; from < n; from += 1000 {
			var rows [][]types.Value
			for i := from; i < min(from+1000, n); i++ {
				rows = append(rows, []types.Value{int64(i + s), int64(i), "x"})
			}
			if err := r.consume(s, jChunk(t, cols, rows, nil)); err != nil {
				t.Fatal(err)
			}
			held[s] = append(held[s], rows...)
		}
	}
	for s, cols := range [][]types.Column{jLeft, jRight} {
		for from := 0; from < n-10; from += 1000 {
			rows := held[s][from:min(from+1000, n-10)]
			if err := r.consume(s, jChunk(t, cols, rows, make([]Op, len(rows)))); err != nil { // Ops zero: Insert
				t.Fatal(err)
			}
		}
	}
	for s, cols := range [][]types.Column{jLeft, jRight} {
		for pass := 0; pass < 2; pass++ {
			for from := 0; from < n-10; from += 1000 {
				rows := held[s][from:min(from+1000, n-10)]
				ops := make([]Op, len(rows))
				for i := range ops {
					ops[i] = Delete
				}
				if err := r.consume(s, jChunk(t, cols, rows, ops)); err != nil {
					t.Fatal(err)
				}
			}
		}
		held[s] = held[s][n-10:]
	}
	for s, sd := range r.sides {
		if sd.live != 10 || int(sd.entries.len()) > 2*joinCompactMin || sd.stored > 2*joinCompactMin {
			t.Errorf("side %d: %d live, %d entries, %d rows stored", s, sd.live, sd.entries.len(), sd.stored)
		}
	}
	if int(r.keys.groups.len()) > 2*joinCompactMin || r.keys.ints.len() > 2*joinCompactMin {
		t.Errorf("%d groups, %d keys", r.keys.groups.len(), r.keys.ints.len())
	}
	r.release()
	close(out)
	<-done
	want := multiset{}
	for _, row := range bruteJoin(exec.FullJoin, "int", false, held[0], held[1]) {
		want.add(row, 1)
	}
	if !sameMultiset(got, want) {
		t.Fatalf("output\n%v\nwant\n%v", got, want)
	}
}
