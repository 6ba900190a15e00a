package stream

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// series is generate_series(1, n) as a SetFunc over column 1, failing for
// n = 13 (a row error).
func seriesFunc() exec.SetFunc {
	return exec.SetFunc{Name: "series", Args: []expr.Expr{&expr.ColRef{Idx: 1, T: types.TInt8, Name: "n"}},
		Expand: func(args []types.Value) ([]types.Value, error) {
			n, ok := args[0].(int64)
			if !ok {
				return nil, nil
			}
			if n == 13 {
				return nil, pgerr.New(pgerr.InvalidParameterValue, "unlucky")
			}
			var out []types.Value
			for i := int64(1); i <= n; i++ {
				out = append(out, i)
			}
			return out, nil
		}}
}

// runProjectSet sends one chunk of (k, n) rows with ops through p and
// returns its output rows as "op k n value [ord]", sorted, with the
// watermarks it forwarded.
func runProjectSet(t *testing.T, p *ProjectSet, ks []string, ns []int64, ops []Op, errs *[]error) ([]string, []Watermark) {
	t.Helper()
	kb := array.NewStringBuilder(memory.DefaultAllocator)
	nb := array.NewInt64Builder(memory.DefaultAllocator)
	kb.AppendValues(ks, nil)
	for _, n := range ns {
		if n < 0 {
			nb.AppendNull()
		} else {
			nb.Append(n)
		}
	}
	in := p.Cols[:p.layout().InputCols()]
	rec := array.NewRecordBatch(types.ArrowSchema(in), []arrow.Array{kb.NewArray(), nb.NewArray()}, int64(len(ks)))
	env := newEnv(t)
	if errs != nil {
		env.OnRowError = func(err error) { *errs = append(*errs, err) }
	}
	src := make(chan Message, 3)
	src <- ChunkMsg(&Chunk{Rec: rec, Ops: ops})
	src <- WatermarkMsg(Watermark{Col: 1, Value: 7})
	close(src)
	var rows []string
	var marks []Watermark
	for m := range p.Start(env, []<-chan Message{src}) {
		switch m.Kind {
		case KindWatermark:
			marks = append(marks, m.Watermark)
		case KindChunk:
			c := m.Chunk
			for i := range c.Len() {
				var b strings.Builder
				fmt.Fprint(&b, c.Op(i))
				for col := range p.Cols {
					fmt.Fprint(&b, " ", types.ValueAt(c.Rec.Column(col), i, p.Cols[col].Type))
				}
				rows = append(rows, b.String())
			}
		}
	}
	sort.Strings(rows)
	return rows, marks
}

func projectSetOf(outer, ord bool) *ProjectSet {
	cols := []types.Column{{Name: "k", Type: types.TText}, {Name: "n", Type: types.TInt8}, {Name: "v", Type: types.TInt8}}
	if ord {
		cols = append(cols, types.Column{Name: "ordinality", Type: types.TInt8})
	}
	return &ProjectSet{Input: &Scan{Cols: cols[:2]}, Funcs: []exec.SetFunc{seriesFunc()}, Cols: cols, Outer: outer, Ordinality: ord}
}

// TestProjectSetOps: each value row takes its input row's op, an update
// pair's halves a delete and an insert (before and after expand to
// different counts); a row with no values gives nothing (or, Outer, one
// row with NULL); a watermark on an input column passes on.
func TestProjectSetOps(t *testing.T) {
	p := projectSetOf(false, false)
	rows, marks := runProjectSet(t, p, []string{"a", "b", "c", "c", "d"}, []int64{2, 1, 1, 3, 0},
		[]Op{Insert, Delete, UpdateBefore, UpdateAfter, Insert}, nil)
	want := []string{
		"delete b 1 1", "delete c 1 1",
		"insert a 2 1", "insert a 2 2", "insert c 3 1", "insert c 3 2", "insert c 3 3",
	}
	if strings.Join(rows, "|") != strings.Join(want, "|") {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	if len(marks) != 1 || marks[0] != (Watermark{Col: 1, Value: 7}) {
		t.Errorf("watermarks %v, want the input's on column 1", marks)
	}

	// append-only input (no ops); Outer keeps d (0 values) and e (NULL)
	rows, _ = runProjectSet(t, projectSetOf(true, true), []string{"a", "d", "e"}, []int64{2, 0, -1}, nil, nil)
	want = []string{"insert a 2 1 1", "insert a 2 2 2", "insert d 0 <nil> <nil>", "insert e <nil> <nil> <nil>"}
	if strings.Join(rows, "|") != strings.Join(want, "|") {
		t.Errorf("outer with ordinality: rows\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	if got := projectSetOf(true, true).Explain(); got != "StreamProjectSet (outer) (with ordinality): series(n)" {
		t.Errorf("explain %q", got)
	}
}

// TestProjectSetKeep: Keep drops the values that do not meet it; with
// Outer a row none of whose values meets it (or with none) is kept once
// with NULL values, its op its own, and a row with values that do is
// not; each input row's rows stay together and in order.
func TestProjectSetKeep(t *testing.T) {
	keep, err := expr.NewBinary(">=", &expr.ColRef{Idx: 2, T: types.TInt8, Name: "v"}, &expr.Const{V: int64(2), T: types.TInt8})
	if err != nil {
		t.Fatal(err)
	}
	p := projectSetOf(true, true)
	p.Keep = keep
	rows, _ := runProjectSet(t, p, []string{"a", "b", "c", "d", "d"}, []int64{3, 1, 0, 2, 1},
		[]Op{Insert, Delete, Insert, UpdateBefore, UpdateAfter}, nil)
	want := []string{
		"delete b 1 <nil> <nil>", "delete d 2 2 2",
		"insert a 3 2 2", "insert a 3 3 3", "insert c 0 <nil> <nil>", "insert d 1 <nil> <nil>",
	}
	if strings.Join(rows, "|") != strings.Join(want, "|") {
		t.Errorf("outer: rows\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	// without Outer, only the values that meet it
	p = projectSetOf(false, false)
	p.Keep = keep
	rows, _ = runProjectSet(t, p, []string{"a", "b"}, []int64{3, 1}, nil, nil)
	if want := "insert a 3 2|insert a 3 3"; strings.Join(rows, "|") != want {
		t.Errorf("inner: rows %q, want %q", strings.Join(rows, "|"), want)
	}
	if got := p.Explain(); got != "StreamProjectSet: series(n) keeping (v >= '2'::bigint)" {
		t.Errorf("explain %q", got)
	}
}

// TestProjectSetRowError: a row whose function fails gives no row and is
// reported, its insert and its delete alike (so nothing is left behind);
// without OnRowError the chunk fails the operator.
func TestProjectSetRowError(t *testing.T) {
	var errs []error
	rows, _ := runProjectSet(t, projectSetOf(true, false), []string{"a", "x", "x"}, []int64{1, 13, 13},
		[]Op{Insert, Insert, Delete}, &errs)
	if want := "insert a 1 1"; strings.Join(rows, "|") != want {
		t.Errorf("rows %v, want [%s]", rows, want)
	}
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "unlucky") {
		t.Errorf("row errors %v, want two", errs)
	}
	ps := projectSetOf(false, false)
	_, err := ps.expand(newEnv(t), newEnv(t).evalContext(), ps.layout(), nil, nil, &Chunk{Rec: oneRow(t, 13)})
	var pe *pgerr.Error
	if !errors.As(err, &pe) || pe.Code != pgerr.InvalidParameterValue {
		t.Errorf("without OnRowError: %v, want the function's error", err)
	}
}

func oneRow(t *testing.T, n int64) arrow.RecordBatch {
	t.Helper()
	kb := array.NewStringBuilder(memory.DefaultAllocator)
	nb := array.NewInt64Builder(memory.DefaultAllocator)
	kb.Append("k")
	nb.Append(n)
	cols := []types.Column{{Name: "k", Type: types.TText}, {Name: "n", Type: types.TInt8}}
	return array.NewRecordBatch(types.ArrowSchema(cols), []arrow.Array{kb.NewArray(), nb.NewArray()}, 1)
}
