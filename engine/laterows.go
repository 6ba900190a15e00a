package engine

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// LATE ROWS INTO t: the rows a view's operators drop as late
// (stream.Env.OnLate) are appended to table t, whose columns are the late
// row's columns (those of the windowed operator's input), then the view's
// name (text) and the view's watermark when the rows were dropped
// (timestamptz, NULL before the first watermark). The job writes them from
// a goroutine of its own through a bounded queue (dataflow.JobSpec.LateRows):
// operators never wait for the table, and rows that find the queue full are
// counted in streamsql_views.late_rows_lost.

// lateRowsInto returns the table named by the LATE ROWS INTO clause of a
// view's stored query, or "".
func lateRowsInto(viewQuery string) string {
	stmts, err := sql.Parse(viewQuery)
	if err != nil || len(stmts) != 1 || stmts[0].Ext == nil || stmts[0].Ext.Emit == nil {
		return ""
	}
	return stmts[0].Ext.Emit.LateRowsInto
}

// lateColumns returns the columns of the rows plan's operators drop as
// late: the input of its windowed aggregations. ok is false when the plan
// has no such operator (or they disagree), and the shape is then checked
// row by row when they come.
func lateColumns(plan stream.Node) (cols []types.Column, ok bool) {
	var found [][]types.Column
	var walk func(n stream.Node)
	walk = func(n stream.Node) {
		if w, isW := n.(*stream.WindowAgg); isW {
			found = append(found, w.Input.Columns())
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(plan)
	if len(found) == 0 {
		return nil, false
	}
	for _, f := range found[1:] {
		if !sameKinds(f, found[0]) {
			return nil, false
		}
	}
	return found[0], true
}

func sameKinds(a, b []types.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameKind(a[i].Type, b[i].Type) {
			return false
		}
	}
	return true
}

// sameKind compares types without their modifiers (varchar(10) is text's
// storage, numeric(10,2) numeric's).
func sameKind(a, b types.T) bool {
	if a.Kind == types.Varchar || a.Kind == types.Bpchar {
		a.Kind = types.Text
	}
	if b.Kind == types.Varchar || b.Kind == types.Bpchar {
		b.Kind = types.Text
	}
	if a.Kind == types.Array && b.Kind == types.Array {
		return a.Elem != nil && b.Elem != nil && sameKind(*a.Elem, *b.Elem)
	}
	return a.Kind == b.Kind
}

// lateRowsTable resolves and checks LATE ROWS INTO's table for a view
// whose plan is plan: a table (not APPEND ONLY-incompatible: it only gets
// inserts) whose columns are the late rows' columns, then text, then
// timestamptz.
func (e *Engine) lateRowsTable(into string, searchPath []string, plan stream.Node) (*catalog.Relation, error) {
	rel, err := e.cat.Resolve("", into, searchPath)
	if err != nil {
		return nil, err
	}
	if rel.Kind != catalog.KindTable || e.store.Table(rel.OID) == nil {
		return nil, pgerr.New(pgerr.WrongObjectType, "LATE ROWS INTO \"%s\": it is not a table", rel.Name)
	}
	cols, known := lateColumns(plan)
	want := "the late row's columns, then view_name text, then watermark timestamptz"
	if known {
		want = describeColumns(cols) + ", then view_name text, then watermark timestamptz"
	}
	n := len(rel.Columns)
	bad := n < 2 || !sameKind(rel.Columns[n-2].Type, types.TText) || rel.Columns[n-1].Type.Kind != types.TimestampTZ
	if !bad && known {
		got := make([]types.Column, n-2)
		for i, c := range rel.Columns[:n-2] {
			got[i] = types.Column{Name: c.Name, Type: c.Type}
		}
		bad = !sameKinds(got, cols)
	}
	if bad {
		have := make([]types.Column, n)
		for i, c := range rel.Columns {
			have[i] = types.Column{Name: c.Name, Type: c.Type}
		}
		return nil, pgerr.New(pgerr.DatatypeMismatch, "table \"%s\" cannot receive this view's late rows", rel.Name).
			WithDetail("It has (%s); LATE ROWS INTO needs %s.", describeColumns(have), want)
	}
	return rel, nil
}

func describeColumns(cols []types.Column) string {
	s := ""
	for i, c := range cols {
		if i > 0 {
			s += ", "
		}
		s += catalog.QuoteIdent(c.Name) + " " + c.Type.String()
	}
	return s
}

// lateRowsWriter returns the dataflow.JobSpec.LateRows of view name: it
// appends the rows to table oid with the view's name and the watermark.
// The table is looked up at every write: a dropped or altered one makes the
// write fail (the rows are counted as lost).
func (e *Engine) lateRowsWriter(view string, oid uint32) func(arrow.RecordBatch, int64) error {
	return func(rows arrow.RecordBatch, mark int64) error {
		rel, t := e.cat.Relation(oid), e.store.Table(oid)
		if rel == nil || t == nil {
			return fmt.Errorf("the LATE ROWS INTO table (oid %d) no longer exists", oid)
		}
		n := len(rel.Columns)
		if int(rows.NumCols()) != n-2 {
			return fmt.Errorf("late rows have %d columns, table %s has %d plus the view's name and watermark", rows.NumCols(), rel.Name, n-2)
		}
		nr := int(rows.NumRows())
		name := array.NewStringBuilder(memory.DefaultAllocator)
		name.Reserve(nr)
		for i := 0; i < nr; i++ {
			name.Append(view)
		}
		ts := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})
		ts.Reserve(nr)
		for i := 0; i < nr; i++ {
			if mark == math.MinInt64 {
				ts.AppendNull()
			} else {
				ts.Append(arrow.Timestamp(mark))
			}
		}
		cols := append(append([]arrow.Array(nil), rows.Columns()...), name.NewArray(), ts.NewArray())
		cat := make([]types.Column, n)
		for i, c := range rel.Columns {
			cat[i] = types.Column{Name: c.Name, Type: c.Type}
		}
		rec := array.NewRecordBatch(types.ArrowSchema(cat), cols, int64(nr))
		_, err := t.Insert(context.Background(), rec)
		return err
	}
}

// lateRowsTarget checks the LATE ROWS INTO table of view rel (planned as
// plan), if its query has one; nil when it has none.
func (e *Engine) lateRowsTarget(rel *catalog.Relation, plan stream.Node, searchPath []string) (*catalog.Relation, error) {
	into := lateRowsInto(rel.ViewQuery)
	if into == "" {
		return nil, nil
	}
	return e.lateRowsTable(into, searchPath, plan)
}
