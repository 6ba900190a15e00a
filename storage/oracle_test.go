package storage

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// TestConstraintErrorsMatchPostgres runs the same failing inserts against
// the PostgreSQL 15 on 127.0.0.1:5432 (skipped when it is not there) and
// against storage, and compares SQLSTATE, message and detail.
func TestConstraintErrorsMatchPostgres(t *testing.T) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, "postgres://postgres:postgres@127.0.0.1:5432/postgres?sslmode=disable")
	if err != nil {
		t.Skipf("no PostgreSQL oracle: %v", err)
	}
	defer conn.Close(ctx)
	exec := func(sql string) error { _, err := conn.Exec(ctx, sql); return err }
	if err := exec("SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}

	s := mustOpen(t, t.TempDir())
	defer s.Close()
	cols := []types.Column{
		{Name: "Id", Type: types.TInt4}, {Name: "n", Type: types.TNumeric}, {Name: "s", Type: types.TText},
		{Name: "ts", Type: types.TTimestampTZ}, {Name: "order", Type: types.TInt8},
	}
	const name = "storage_oracle"
	tb, err := s.CreateTable(TableDef{OID: 1, TableName: name, PKName: name + "_pkey", Columns: cols,
		NotNull: []bool{false, false, true, false, false}, PrimaryKey: []int{0, 4}})
	if err != nil {
		t.Fatal(err)
	}
	exec("DROP TABLE IF EXISTS " + name)
	defer exec("DROP TABLE IF EXISTS " + name)
	if err := exec(`CREATE TABLE ` + name + ` ("Id" int4, n numeric, s text NOT NULL, ts timestamptz, "order" int8, PRIMARY KEY ("Id", "order"))`); err != nil {
		t.Fatal(err)
	}
	type r struct {
		id    int32
		n     string
		s     *string
		ts    int64
		order int64
	}
	long := strings.Repeat("abcdefghij", 10)
	longNum := "-" + strings.Repeat("1234567890", 7) + ".5"
	batch := func(rows ...r) arrow.RecordBatch {
		b0, b1, b2 := array.NewInt32Builder(mem), array.NewStringBuilder(mem), array.NewStringBuilder(mem)
		b3, b4 := array.NewTimestampBuilder(mem, cols[3].Type.ArrowType().(*arrow.TimestampType)), array.NewInt64Builder(mem)
		for _, x := range rows {
			b0.Append(x.id)
			b1.Append(x.n)
			if x.s == nil {
				b2.AppendNull()
			} else {
				b2.Append(*x.s)
			}
			b3.Append(arrow.Timestamp(x.ts))
			b4.Append(x.order)
		}
		return array.NewRecordBatch(types.ArrowSchema(cols), []arrow.Array{b0.NewArray(), b1.NewArray(), b2.NewArray(), b3.NewArray(), b4.NewArray()}, int64(len(rows)))
	}
	for _, c := range []struct {
		sql  string
		rows []r
	}{
		{`INSERT INTO ` + name + ` VALUES (1, 1.50, 'a', '2020-01-01 00:00:00+00', 7)`, []r{{1, "1.50", ptr("a"), 1577836800000000, 7}}},
		{`INSERT INTO ` + name + ` VALUES (2, 2, 'b', '1970-01-01 00:00:00.5+00', 7), (1, 1.5, 'c', '1970-01-01 00:00:00+00', 7)`,
			[]r{{2, "2", ptr("b"), 500000, 7}, {1, "1.5", ptr("c"), 0, 7}}},
		{`INSERT INTO ` + name + ` VALUES (3, 3.000, '` + long + `', '1970-01-01 00:00:00+00', 7), (4, ` + longNum + `, NULL, '2000-02-29 12:34:56.789+00', 8)`,
			[]r{{3, "3.000", ptr(long), 0, 7}, {4, longNum, nil, 951827696789000, 8}}},
		{`INSERT INTO ` + name + ` VALUES (5, 5, 'e', '1970-01-01 00:00:00+00', 9), (5, 5, 'f', '1970-01-01 00:00:00+00', 9)`,
			[]r{{5, "5", ptr("e"), 0, 9}, {5, "5", ptr("f"), 0, 9}}},
	} {
		want := exec(c.sql)
		_, got := tb.Insert(ctx, batch(c.rows...))
		var pe *pgconn.PgError
		if want == nil {
			if got != nil {
				t.Fatalf("%s: PostgreSQL succeeded, storage: %v", c.sql, got)
			}
			continue
		}
		if !errors.As(want, &pe) {
			t.Fatal(want)
		}
		g := pgerr.As(got)
		if g == nil || string(g.Code) != pe.Code || g.Message != pe.Message || g.Detail != pe.Detail {
			t.Fatalf("%s:\nstorage:    %v %q %q\npostgresql: %s %q %q", c.sql, g.Code, g.Message, g.Detail, pe.Code, pe.Message, pe.Detail)
		}
	}
}
