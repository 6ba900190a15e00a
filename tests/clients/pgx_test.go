package clients

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestPgx runs one pgx v5 session against streamsql and PostgreSQL and
// compares the transcripts: Ping (the "-- ping" query), parameters in every
// exec mode, reads in binary (the statement cache) and text (the simple
// protocol), Describe through Prepare, metadata, errors.
func TestPgx(t *testing.T) {
	ours := pgxSession(t, streamsqlTarget(t))
	var pgOut string
	pg, live := postgresTarget(t)
	if live {
		pgOut = pgxSession(t, pg)
	}
	compareTranscripts(t, "pgx", ours, pgOut, live, nil)
}

// pgxRow is the i-th row the session writes.
func pgxRow(i int) []any {
	var vc any = fmt.Sprintf("vc%d", i)
	if i == 3 {
		vc = nil
	}
	return []any{int32(i), i%2 == 0, int16(-7 * i), int64(1) << (30 + i), float32(i) + 0.25, float64(i) / 3,
		fmt.Sprintf("%d.125", i), fmt.Sprintf("text %d é", i), vc, fmt.Sprintf("c%d", i), []byte{byte(i), 0, 255},
		time.Date(2024, time.Month(i), 10+i, 0, 0, 0, 0, time.UTC),
		pgtype.Time{Microseconds: int64(12*3600+(30+i)*60+i) * 1e6, Valid: true},
		time.Date(2024, 2, i, 10, 11, 12, 500000000, time.UTC),
		time.Date(2024, 3, i, 8, 0, 0, 0, time.UTC),
		pgtype.Interval{Days: int32(i), Microseconds: 2 * 3600 * 1e6, Valid: true},
		fmt.Sprintf(`{"a": %d}`, i), fmt.Sprintf(`{"k": [%d, true], "b": null}`, i),
		[]*int32{ptr(int32(i)), nil, ptr(int32(-i))}, []string{fmt.Sprintf("x%d", i), "y,z"},
	}
}

func ptr[T any](v T) *T { return &v }

// render prints a value pgx decoded the same way whatever the format.
func render(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case pgtype.Numeric:
		b, _ := x.MarshalJSON()
		return string(b)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = render(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprintf("%v", v)
}

func pgxSession(t *testing.T, tg target) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []string
	say := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	conn, err := pgx.Connect(ctx, tg.url())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", tg.host+":"+tg.port, err)
		}
	}
	must(conn.Ping(ctx))
	for _, q := range []string{
		"CREATE TABLE xt (id integer PRIMARY KEY, b boolean, i2 smallint, i8 bigint, f4 real, f8 double precision," +
			" n numeric(12,3), t text NOT NULL, vc varchar(20), ch char(4), by bytea, d date, tm time, ts timestamp," +
			" tz timestamptz, iv interval, j json, jb jsonb, ia integer[], ta text[])",
		"CREATE VIEW xv AS SELECT id, t FROM xt WHERE id > 1",
	} {
		_, err := conn.Exec(ctx, q)
		must(err)
	}
	const ins = "INSERT INTO xt VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)"
	modes := []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
		pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol}
	for i := 1; i <= 10; i++ {
		args := append([]any{modes[i%len(modes)]}, pgxRow(i)...)
		tag, err := conn.Exec(ctx, ins, args...)
		must(err)
		if tag.String() != "INSERT 0 1" {
			say("FAIL insert %d: %s", i, tag)
		}
	}
	// Binary (statement cache) and text (simple protocol) reads must agree.
	read := func(mode pgx.QueryExecMode) []string {
		rows, err := conn.Query(ctx, "SELECT * FROM xt WHERE id >= $1 ORDER BY id", mode, 1)
		must(err)
		defer rows.Close()
		var got []string
		for rows.Next() {
			vals, err := rows.Values()
			must(err)
			parts := make([]string, len(vals))
			for i, v := range vals {
				parts[i] = render(v)
			}
			got = append(got, strings.Join(parts, " | "))
		}
		must(rows.Err())
		return got
	}
	binary := read(pgx.QueryExecModeCacheStatement)
	for run := 0; run < 3; run++ {
		if again := read(pgx.QueryExecModeCacheStatement); strings.Join(again, "\n") != strings.Join(binary, "\n") {
			say("FAIL cached run %d differs", run)
		}
	}
	text := read(pgx.QueryExecModeSimpleProtocol)
	for i := range binary {
		say("row %s", binary[i])
		if i >= len(text) || text[i] != binary[i] {
			say("FAIL text row %d differs: %v", i, text)
		}
	}
	// Describe: the parameter and result types of a prepared statement.
	sd, err := conn.Prepare(ctx, "by_id", "SELECT id, t, n, tz FROM xt WHERE id = $1 AND tz < $2")
	must(err)
	say("describe params %v", sd.ParamOIDs)
	for _, f := range sd.Fields {
		say("describe field %s type=%d size=%d typmod=%d", f.Name, f.DataTypeOID, f.DataTypeSize, f.TypeModifier)
	}
	var id int32
	var tz time.Time
	must(conn.QueryRow(ctx, "by_id", 4, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)).Scan(&id, new(string), new(pgtype.Numeric), &tz))
	say("prepared row %d %s", id, tz.UTC().Format(time.RFC3339))
	// RowDescription names the table column a result column reads as is.
	for _, q := range []string{"SELECT * FROM xv", "SELECT id, t AS x, id + 1, (SELECT 1) FROM xt",
		"SELECT t, count(*) FROM xt GROUP BY t", "SELECT s.id FROM (SELECT id FROM xt) s", "SELECT relname FROM pg_class LIMIT 1"} {
		rows, err := conn.Query(ctx, q)
		must(err)
		fds := rows.FieldDescriptions()
		rows.Close()
		var parts []string
		for _, f := range fds {
			var rel string
			must(conn.QueryRow(ctx, "SELECT CASE WHEN $1::oid = 0 THEN '-' ELSE $1::oid::regclass::text END", f.TableOID).Scan(&rel))
			parts = append(parts, fmt.Sprintf("%s=%s.%d", f.Name, rel, f.TableAttributeNumber))
		}
		say("fields %s: %s", q, strings.Join(parts, " "))
	}
	var tableoid, qualified string
	must(conn.QueryRow(ctx, "SELECT tableoid::regclass::text, c.tableoid::regclass::text FROM pg_class c WHERE relname = 'xt'").Scan(&tableoid, &qualified))
	say("tableoid %s %s", tableoid, qualified)
	// Metadata through information_schema and pg_catalog.
	rows, err := conn.Query(ctx, "SELECT table_name, column_name, data_type, udt_name FROM information_schema.columns"+
		" WHERE table_schema = 'public' ORDER BY table_name, ordinal_position")
	must(err)
	for rows.Next() {
		vals, err := rows.Values()
		must(err)
		say("column %v", vals)
	}
	must(rows.Err())
	// Errors leave the connection usable.
	for _, q := range []string{"SELECT 1/0", "SELECT * FROM nope WHERE a = $1", "INSERT INTO xt (id, t) VALUES (1, 'dup')"} {
		var args []any
		if strings.Contains(q, "$1") {
			args = append(args, 1)
		}
		_, err := conn.Exec(ctx, q, args...)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			say("FAIL %s: %v", q, err)
			continue
		}
		say("error %s %s", pe.Code, pe.Message)
	}
	var n int64
	must(conn.QueryRow(ctx, "SELECT count(*) FROM xt").Scan(&n))
	say("after errors count %d", n)
	return strings.Join(out, "\n") + "\n"
}
