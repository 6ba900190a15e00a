package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/storage"
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
	if isConnectorTable(rel) {
		return nil, pgerr.New(pgerr.WrongObjectType, "LATE ROWS INTO \"%s\": the table is fed by a connector (%s)", rel.Name, rel.Connector)
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

// lateStore is the dataflow.LateStore of a view: it appends late rows to
// table oid with the view's name and watermark. With a checkpoint's epoch
// the same write records it as the view's in the table's write metadata
// (storage.Table.InsertBatchesMeta: {"late_rows": {"<view oid>": epoch}}),
// which is how a view resumed after a crash knows which of its
// checkpoint's late rows the table holds. The table is looked up at every
// write: a dropped or altered one makes the write fail (the rows are
// counted as lost).
type lateStore struct {
	e    *Engine
	view *catalog.Relation
	oid  uint32
}

func (e *Engine) lateRowsStore(view *catalog.Relation, oid uint32) *lateStore {
	return &lateStore{e: e, view: view, oid: oid}
}

// lateMeta is a LATE ROWS INTO table's write metadata.
type lateMeta struct {
	LateRows map[string]uint64 `json:"late_rows"` // per view oid: the last checkpoint whose late rows it holds
}

func (s *lateStore) table() (*catalog.Relation, *storage.Table, error) {
	rel, t := s.e.cat.Relation(s.oid), s.e.store.Table(s.oid)
	if rel == nil || t == nil {
		return nil, nil, fmt.Errorf("the LATE ROWS INTO table (oid %d) no longer exists", s.oid)
	}
	if isConnectorTable(rel) {
		return nil, nil, fmt.Errorf("the LATE ROWS INTO table %s is fed by a connector", rel.Name)
	}
	return rel, t, nil
}

func readLateMeta(t *storage.Table) (lateMeta, error) {
	var m lateMeta
	if b := t.Meta(); len(b) > 0 {
		if err := json.Unmarshal(b, &m); err != nil {
			return m, fmt.Errorf("the LATE ROWS INTO table's write metadata: %w", err)
		}
	}
	return m, nil
}

// Stored implements dataflow.LateStore.
func (s *lateStore) Stored() (uint64, error) {
	_, t, err := s.table()
	if err != nil {
		return 0, err
	}
	m, err := readLateMeta(t)
	return m.LateRows[strconv.FormatUint(uint64(s.view.OID), 10)], err
}

// Store implements dataflow.LateStore.
func (s *lateStore) Store(rows []arrow.RecordBatch, marks []int64, epoch uint64) error {
	rel, t, err := s.table()
	if err != nil {
		return err
	}
	n := len(rel.Columns)
	cat := make([]types.Column, n)
	for i, c := range rel.Columns {
		cat[i] = types.Column{Name: c.Name, Type: c.Type}
	}
	recs := make([]arrow.RecordBatch, 0, len(rows))
	for i, r := range rows {
		if int(r.NumCols()) != n-2 {
			return fmt.Errorf("late rows have %d columns, table %s has %d plus the view's name and watermark", r.NumCols(), rel.Name, n-2)
		}
		recs = append(recs, s.withViewAndMark(r, marks[i], cat))
	}
	if epoch == 0 {
		_, err = t.InsertBatches(context.Background(), recs)
		return err
	}
	// one view's write at a time per engine: the metadata is read, changed and written
	s.e.lateMu.Lock()
	defer s.e.lateMu.Unlock()
	m, err := readLateMeta(t)
	if err != nil {
		return err
	}
	if m.LateRows == nil {
		m.LateRows = map[string]uint64{}
	}
	m.LateRows[strconv.FormatUint(uint64(s.view.OID), 10)] = epoch
	meta, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = t.InsertBatchesMeta(context.Background(), recs, meta)
	return err
}

// withViewAndMark is rows with the view's name and watermark mark as two
// more columns, as table columns cat.
func (s *lateStore) withViewAndMark(rows arrow.RecordBatch, mark int64, cat []types.Column) arrow.RecordBatch {
	nr := int(rows.NumRows())
	name := array.NewStringBuilder(memory.DefaultAllocator)
	name.Reserve(nr)
	for i := 0; i < nr; i++ {
		name.Append(s.view.Name)
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
	return array.NewRecordBatch(types.ArrowSchema(cat), cols, int64(nr))
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
