package planner

import (
	"context"
	"fmt"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	pg "github.com/pganalyze/pg_query_go/v6"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/types"
)

// fakeCatalog is a Catalog over relations registered by tests.
type fakeCatalog struct {
	rels   map[string]*catalog.Relation
	tables map[uint32]*storage.Table
}

func (c *fakeCatalog) Resolve(schema, name string, _ []string) (*catalog.Relation, error) {
	if r, ok := c.rels[name]; ok && (schema == "" || schema == r.Schema) {
		return r, nil
	}
	if schema != "" {
		return nil, pgerr.New(pgerr.UndefinedTable, "relation \"%s.%s\" does not exist", schema, name)
	}
	return nil, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", name)
}

func (c *fakeCatalog) Table(oid uint32) *storage.Table { return c.tables[oid] }

// testDB runs statements through the planner and exec against real storage.
type testDB struct {
	t     *testing.T
	store *storage.Store
	cat   *fakeCatalog
	oid   uint32
}

func newTestDB(t *testing.T, stmts ...string) *testDB {
	t.Helper()
	st, err := storage.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	d := &testDB{t: t, store: st, cat: &fakeCatalog{rels: map[string]*catalog.Relation{}, tables: map[uint32]*storage.Table{}}, oid: 16384}
	for _, s := range stmts {
		d.mustExec(s)
	}
	return d
}

func (d *testDB) env(src string) *Env {
	return &Env{Catalog: d.cat, SearchPath: []string{"public"}, Source: src,
		Eval: &expr.Context{Ctx: context.Background(), Location: time.UTC, Now: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}}
}

func (d *testDB) mustExec(text string) {
	d.t.Helper()
	if _, _, err := d.run(text); err != nil {
		d.t.Fatalf("%s: %v", text, err)
	}
}

// run executes one statement; for queries it returns the rendered rows.
func (d *testDB) run(text string) ([]string, []types.Column, error) {
	stmts, err := sql.Parse(text)
	if err != nil {
		return nil, nil, err
	}
	if len(stmts) != 1 {
		return nil, nil, fmt.Errorf("want one statement, got %d", len(stmts))
	}
	ast := stmts[0].AST
	env := d.env(text)
	ctx := context.Background()
	switch {
	case ast.GetCreateStmt() != nil:
		rel, err := TableDef(env, ast.GetCreateStmt())
		if err != nil {
			return nil, nil, err
		}
		d.oid++
		rel.OID = d.oid
		def := storage.TableDef{OID: rel.OID, Columns: rel.ColumnTypes(), PrimaryKey: rel.PrimaryKey, PKName: rel.PKName, TableName: rel.Name}
		for i, u := range rel.Unique { // the catalog would name unnamed ones; tests name them by position
			if u.Name == "" {
				rel.Unique[i].Name = fmt.Sprintf("%s_u%d", rel.Name, i)
			}
			def.Unique = append(def.Unique, storage.UniqueKey{Name: rel.Unique[i].Name, Columns: u.Columns})
		}
		for _, c := range rel.Columns {
			def.NotNull = append(def.NotNull, c.NotNull)
		}
		tbl, err := d.store.CreateTable(def)
		if err != nil {
			return nil, nil, err
		}
		d.cat.rels[rel.Name], d.cat.tables[rel.OID] = rel, tbl
		return nil, nil, nil
	case ast.GetViewStmt() != nil:
		rel, _, err := ViewDef(env, ast.GetViewStmt(), text)
		if err != nil {
			return nil, nil, err
		}
		d.oid++
		rel.OID = d.oid
		d.cat.rels[rel.Name] = rel
		return nil, nil, nil
	case ast.GetInsertStmt() != nil:
		ins, err := PlanInsert(env, ast.GetInsertStmt())
		if err != nil {
			return nil, nil, err
		}
		if oc := ins.OnConflict; oc != nil {
			return nil, nil, d.write(ins.Source, func(b arrowBatch) error {
				w, err := oc.Resolve(ctx, env.Eval, ins.Rel.ColumnTypes(), ins.Table, b)
				if err == nil && w.Insert.NumRows() > 0 {
					_, err = ins.Table.Insert(ctx, w.Insert)
				}
				if err == nil && len(w.UpdateIDs) > 0 {
					_, err = ins.Table.Update(ctx, w.UpdateIDs, w.Update)
				}
				return err
			})
		}
		return nil, nil, d.write(ins.Source, func(b arrowBatch) error { _, err := ins.Table.Insert(ctx, b); return err })
	case ast.GetUpdateStmt() != nil:
		up, err := PlanUpdate(env, ast.GetUpdateStmt())
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, d.write(up.Source, func(b arrowBatch) error {
			ids := rowIDs(b)
			_, err := up.Table.Update(ctx, ids, dropFirst(b))
			return err
		})
	case ast.GetDeleteStmt() != nil:
		del, err := PlanDelete(env, ast.GetDeleteStmt())
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, d.write(del.Source, func(b arrowBatch) error { _, err := del.Table.Delete(ctx, rowIDs(b)); return err })
	}
	q, err := PlanSelect(env, ast)
	if err != nil {
		return nil, nil, err
	}
	rows, err := d.rows(q.Root, env)
	return rows, q.Columns, err
}

func (d *testDB) write(src exec.Node, f func(arrowBatch) error) error {
	var all []arrowBatch
	if err := d.each(src, d.env(""), func(b arrowBatch) error { b.Retain(); all = append(all, b); return nil }); err != nil {
		return err
	}
	for _, b := range all {
		if err := f(b); err != nil {
			return err
		}
	}
	return nil
}

func (d *testDB) each(n exec.Node, env *Env, f func(arrowBatch) error) error {
	it, err := n.Open(&exec.Context{Eval: env.Eval})
	if err != nil {
		return err
	}
	defer it.Close()
	for {
		b, err := it.Next()
		if err != nil {
			return err
		}
		if b == nil {
			return nil
		}
		if err := f(b); err != nil {
			return err
		}
	}
}

func (d *testDB) rows(n exec.Node, env *Env) ([]string, error) {
	cols := n.Columns()
	var out []string
	err := d.each(n, env, func(b arrowBatch) error {
		for i := 0; i < int(b.NumRows()); i++ {
			var parts []string
			for j, c := range cols {
				v := types.ValueAt(b.Column(j), i, c.Type)
				if v == nil {
					parts = append(parts, "NULL")
				} else {
					parts = append(parts, types.FormatText(v, c.Type, nil))
				}
			}
			out = append(out, strings.Join(parts, "|"))
		}
		return nil
	})
	return out, err
}

func rowIDs(b arrowBatch) []int64 {
	ids := make([]int64, b.NumRows())
	for i := range ids {
		ids[i] = types.ValueAt(b.Column(0), i, types.TInt8).(int64)
	}
	return ids
}

func dropFirst(b arrowBatch) arrowBatch {
	cols := b.Columns()[1:]
	fields := b.Schema().Fields()[1:]
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, b.NumRows())
}

// query runs a query that must succeed.
func (d *testDB) query(text string) []string {
	d.t.Helper()
	rows, _, err := d.run(text)
	if err != nil {
		d.t.Fatalf("%s: %v", text, err)
	}
	return rows
}

// plan returns EXPLAIN output of a query.
func (d *testDB) explain(text string) string {
	d.t.Helper()
	stmts, err := sql.Parse(text)
	if err != nil {
		d.t.Fatal(err)
	}
	q, err := PlanSelect(d.env(text), stmts[0].AST)
	if err != nil {
		d.t.Fatalf("%s: %v", text, err)
	}
	return exec.Explain(q.Root)
}

func sorted(rows []string) []string {
	out := append([]string(nil), rows...)
	sort.Strings(out)
	return out
}

func mustParse(t *testing.T, text string) *pg.Node {
	t.Helper()
	stmts, err := sql.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return stmts[0].AST
}

func (d *testDB) ctx() context.Context { return context.Background() }
