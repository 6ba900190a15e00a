package pgsink_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/connector/pgcdc/pgtest"
	"github.com/streamsql/streamsql/connector/pgsink"
	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

var cols = []types.Column{{Name: "id", Type: types.TInt8}, {Name: "v", Type: types.TText}}

func batch(t *testing.T, ids []int64, vs []string) arrow.RecordBatch {
	t.Helper()
	iv := make([]types.Value, len(ids))
	sv := make([]types.Value, len(ids))
	for i := range ids {
		iv[i] = ids[i]
		if vs[i] != "" {
			sv[i] = vs[i]
		}
	}
	a, err := types.MakeArray(memory.DefaultAllocator, types.TInt8, iv)
	if err != nil {
		t.Fatal(err)
	}
	b, err := types.MakeArray(memory.DefaultAllocator, types.TText, sv)
	if err != nil {
		t.Fatal(err)
	}
	return arrowBatch(a, b, len(ids))
}

func options(pg *pgtest.Cluster, table string) map[string]string {
	return map[string]string{"hostname": "127.0.0.1", "port": fmt.Sprint(pg.Port), "username": "postgres",
		"database.name": "postgres", "table.name": table}
}

// TestAppendExactlyOnce: an append-only sink (a repeated epoch would
// duplicate rows) through a crash after PreCommit, with and without the
// Commit having run, and a Recover run twice: every epoch lands once.
func TestAppendExactlyOnce(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	pg.Exec(ctx, "CREATE TABLE log (id bigint, v text)")
	up := pg.Connect(ctx)
	s, err := pgsink.Open(sink.Spec{Name: "s", ID: 42, Cols: cols, AppendOnly: true, Options: options(pg, "log")})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.NewWriter(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.Write(ctx, batch(t, []int64{1, 2}, []string{"a", ""}), nil))
	must(w.Barrier(ctx, 1)) // goes with epoch 2
	must(w.Write(ctx, batch(t, []int64{3}, []string{"c's"}), nil))
	p2, err := w.PreCommit(ctx, 2)
	must(err)
	must(w.Commit(ctx, 2, p2))
	must(w.Write(ctx, batch(t, []int64{4}, []string{"d"}), nil))
	p3, err := w.PreCommit(ctx, 3)
	must(err)
	w.Close() // crash before Commit(3)
	w, err = s.Recover(ctx, 0, 3, p3)
	must(err)
	w.Close() // crash again right after recovering
	w, err = s.Recover(ctx, 0, 3, p3)
	must(err)
	must(w.Write(ctx, batch(t, []int64{5}, []string{"e"}), nil))
	p4, err := w.PreCommit(ctx, 4)
	must(err)
	must(w.Commit(ctx, 4, p4))
	w.Close()
	got := strings.Join(pgtest.Rows(ctx, t, up, "SELECT id, v FROM log ORDER BY id"), ",")
	if got != "1|a,2|NULL,3|c's,4|d,5|e" {
		t.Fatalf("log: %s", got)
	}
	if st := strings.Join(pgtest.Rows(ctx, t, up, "SELECT * FROM streamsql_sink_progress"), ","); st != "s/42|4" {
		t.Fatalf("progress: %s", st)
	}
}

// TestUpsertAndErrors: a keyed sink upserts and deletes by key (an update
// of the key too); bad options and targets are refused naming them.
func TestUpsertAndErrors(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	pg.Exec(ctx, "CREATE TABLE kv (id bigint PRIMARY KEY, v text); CREATE TABLE nokey (id bigint, v text)")
	up := pg.Connect(ctx)
	s, err := pgsink.Open(sink.Spec{Name: "k", ID: 7, Cols: cols, Key: []int{0}, Options: options(pg, "public.kv")})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.NewWriter(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	ops := func(o ...stream.Op) []stream.Op { return o }
	steps := []struct {
		ids []int64
		vs  []string
		ops []stream.Op
	}{
		{[]int64{1, 2, 3}, []string{"a", "b", "c"}, nil},
		{[]int64{1, 1, 2, 3, 30}, []string{"a", "a2", "b", "c", "c"}, ops(stream.UpdateBefore, stream.UpdateAfter, stream.Delete, stream.UpdateBefore, stream.UpdateAfter)},
	}
	for i, st := range steps {
		if err := w.Write(ctx, batch(t, st.ids, st.vs), st.ops); err != nil {
			t.Fatal(err)
		}
		p, err := w.PreCommit(ctx, uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(ctx, uint64(i+1), p); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	if got := strings.Join(pgtest.Rows(ctx, t, up, "SELECT id, v FROM kv ORDER BY id"), ","); got != "1|a2,30|c" {
		t.Fatalf("kv: %s", got)
	}
	for _, c := range []struct {
		spec sink.Spec
		code pgerr.Code
		msg  string
	}{
		{sink.Spec{Name: "x", Cols: cols, AppendOnly: true, Options: map[string]string{"hostname": "h", "username": "u", "database.name": "d", "table.name": "t", "colour": "red"}}, pgerr.InvalidParameterValue, "colour"},
		{sink.Spec{Name: "x", Cols: cols, AppendOnly: true, Options: map[string]string{"hostname": "h", "username": "u", "database.name": "d"}}, pgerr.InvalidParameterValue, "table.name"},
		{sink.Spec{Name: "x", Cols: cols, Options: options(pg, "kv")}, pgerr.InvalidParameterValue, "no key"},
		{sink.Spec{Name: "x", Cols: cols, AppendOnly: true, Options: options(pg, "kv"), Format: "JSON"}, pgerr.InvalidParameterValue, "FORMAT"},
	} {
		if _, err := pgsink.Open(c.spec); pgerr.CodeOf(err) != c.code || !strings.Contains(fmt.Sprint(err), c.msg) {
			t.Errorf("%v: %v", c.spec.Options, err)
		}
	}
	for _, c := range []struct {
		table string
		key   []int
		code  pgerr.Code
	}{{"missing", nil, pgerr.UndefinedTable}, {"nokey", []int{0}, pgerr.InvalidTableDefinition}} {
		s, err := pgsink.Open(sink.Spec{Name: "x", Cols: cols, Key: c.key, AppendOnly: c.key == nil, Options: options(pg, c.table)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.NewWriter(ctx, 0); pgerr.CodeOf(err) != c.code {
			t.Errorf("%s: %v", c.table, err)
		}
	}
}
