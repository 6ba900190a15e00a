package pgsink

import (
	"context"
	"errors"
	"fmt"
	"github.com/streamsql/streamsql/connector/internal/pgclient"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

func init() { sink.Register("postgres", Open) }

// options are the WITH keys the sink takes, with whether each is required.
var options = map[string]bool{
	"hostname": true, "port": false, "username": true, "password": false,
	"database.name": true, "schema.name": false, "table.name": true,
	"progress.table": false, "connect.timeout": false, "ssl.mode": false,
	"primary_key": false,
}

// Sink is a validated PostgreSQL sink: immutable, safe for concurrent use.
type Sink struct {
	spec          sink.Spec
	cfg           *pgconn.Config
	addr          string
	schema, table string
	progress      string // quoted progress table
	key           []int  // nil: append (INSERT only)
	insert        string // INSERT ... [ON CONFLICT ... DO UPDATE]
	del           string // DELETE ... WHERE key
}

func bad(format string, args ...any) *pgerr.Error {
	return pgerr.New(pgerr.InvalidParameterValue, format, args...)
}

// Quoting, shared with the postgres-cdc source.
var (
	quoteIdent = pgclient.QuoteIdent
	quoteLit   = pgclient.QuoteLit
	quoteDSN   = pgclient.QuoteDSN
)

// Open validates the options and the query's shape (a query that
// retracts needs a key: primary_key or the query's own), without
// connecting; the first writer checks the table.
func Open(spec sink.Spec) (sink.Sink, error) {
	opts := spec.Options
	if err := pgclient.CheckOptions(opts, options, "postgres sink", "a postgres sink"); err != nil {
		return nil, err
	}
	if spec.Format != "" || spec.Encode != "" {
		return nil, bad("a postgres sink takes no FORMAT clause").
			WithHint("Rows are written as rows: upserted by the key, or appended when the query only appends.")
	}
	s := &Sink{spec: spec, schema: "public", table: opts["table.name"]}
	if v, ok := opts["schema.name"]; ok {
		s.schema = v
	} else if i := strings.IndexByte(s.table, '.'); i >= 0 {
		s.schema, s.table = s.table[:i], s.table[i+1:]
	}
	port := 5432
	if v, ok := opts["port"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > 65535 {
			return nil, bad("invalid value for postgres sink option \"port\": %q", v)
		}
		port = n
	}
	timeout := 10 * time.Second
	if v, ok := opts["connect.timeout"]; ok {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, bad("invalid value for postgres sink option \"connect.timeout\": %q", v)
		}
		timeout = d
	}
	ssl := "prefer"
	if v, ok := opts["ssl.mode"]; ok {
		switch v {
		case "disable", "allow", "prefer", "require", "verify-ca", "verify-full":
			ssl = v
		default:
			return nil, bad("invalid value for postgres sink option \"ssl.mode\": %q", v)
		}
	}
	progress := "streamsql_sink_progress"
	if v, ok := opts["progress.table"]; ok {
		if v == "" {
			return nil, bad("postgres sink option \"progress.table\" must not be empty")
		}
		progress = v
	}
	s.progress = quoteIdent(s.schema) + "." + quoteIdent(progress)
	dsn := fmt.Sprintf("host=%s port=%d dbname=%s user=%s sslmode=%s connect_timeout=%d",
		quoteDSN(opts["hostname"]), port, quoteDSN(opts["database.name"]), quoteDSN(opts["username"]), ssl, max(1, int(timeout/time.Second)))
	if p := opts["password"]; p != "" {
		dsn += " password=" + quoteDSN(p)
	}
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, bad("invalid postgres sink connection options: %v", err)
	}
	cfg.RuntimeParams["DateStyle"] = "ISO, MDY"
	cfg.RuntimeParams["TimeZone"] = "UTC"
	cfg.RuntimeParams["IntervalStyle"] = "postgres"
	cfg.RuntimeParams["application_name"] = "streamsql-sink"
	s.cfg, s.addr = cfg, fmt.Sprintf("%s:%d", opts["hostname"], port)
	if !spec.AppendOnly {
		if len(spec.Key) == 0 {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "the query of a postgres sink updates or deletes rows but has no key").
				WithHint("Give primary_key = 'col, ...' (the target table's primary key), or make the query append-only.")
		}
	}
	if len(spec.Key) > 0 {
		s.key = spec.Key
	}
	s.statements()
	return s, nil
}

// statements builds the INSERT (an upsert with a key) and DELETE.
func (s *Sink) statements() {
	cols := make([]string, len(s.spec.Cols))
	params := make([]string, len(cols))
	for i, c := range s.spec.Cols {
		cols[i], params[i] = quoteIdent(c.Name), "$"+strconv.Itoa(i+1)
	}
	target := quoteIdent(s.schema) + "." + quoteIdent(s.table)
	s.insert = "INSERT INTO " + target + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Join(params, ", ") + ")"
	if s.key == nil {
		return
	}
	var keys, sets, where []string
	isKey := map[int]bool{}
	for n, k := range s.key {
		isKey[k] = true
		keys = append(keys, cols[k])
		where = append(where, cols[k]+" = $"+strconv.Itoa(n+1))
	}
	for i, c := range cols {
		if !isKey[i] {
			sets = append(sets, c+" = EXCLUDED."+c)
		}
	}
	if len(sets) == 0 {
		s.insert += " ON CONFLICT (" + strings.Join(keys, ", ") + ") DO NOTHING"
	} else {
		s.insert += " ON CONFLICT (" + strings.Join(keys, ", ") + ") DO UPDATE SET " + strings.Join(sets, ", ")
	}
	s.del = "DELETE FROM " + target + " WHERE " + strings.Join(where, " AND ")
}

// connect opens a connection; failures keep the server's SQLSTATE, or are
// 08001.
func (s *Sink) connect(ctx context.Context) (*pgconn.PgConn, error) {
	conn, err := pgconn.ConnectConfig(ctx, s.cfg)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return nil, pgerr.Wrap(err, pgerr.Code(pe.Code), "postgres sink: cannot connect to %s: %s", s.addr, pe.Message)
		}
		return nil, pgerr.Wrap(err, "08001", "postgres sink: cannot connect to %s: %v", s.addr, err)
	}
	return conn, nil
}

// prepare checks the target table (its columns, and with a key a unique
// index on exactly the key columns) and creates the progress table.
func (s *Sink) prepare(ctx context.Context, conn *pgconn.PgConn) error {
	rows, err := query(ctx, conn, `SELECT a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = `+quoteLit(s.schema)+` AND c.relname = `+quoteLit(s.table)+`
		AND a.attnum > 0 AND NOT a.attisdropped`)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return pgerr.New(pgerr.UndefinedTable, "postgres sink: table %s.%s does not exist in the target database", quoteIdent(s.schema), quoteIdent(s.table)).
			WithHint("Create it first, with the sink's columns and, for a query with updates, its key as primary key.")
	}
	have := map[string]bool{}
	for _, r := range rows {
		have[r[0]] = true
	}
	for _, c := range s.spec.Cols {
		if !have[c.Name] {
			return pgerr.New(pgerr.UndefinedColumn, "postgres sink: column \"%s\" does not exist in target table %s.%s", c.Name, quoteIdent(s.schema), quoteIdent(s.table))
		}
	}
	if s.key != nil {
		names := make([]string, len(s.key))
		for i, k := range s.key {
			names[i] = quoteLit(s.spec.Cols[k].Name)
		}
		rows, err := query(ctx, conn, `SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = `+quoteLit(s.schema)+` AND c.relname = `+quoteLit(s.table)+` AND i.indisunique AND i.indpred IS NULL
			AND (SELECT array_agg(a.attname::text ORDER BY a.attname) FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum = ANY(i.indkey))
			  = (SELECT array_agg(x ORDER BY x) FROM unnest(ARRAY[`+strings.Join(names, ", ")+`]::text[]) x)`)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return pgerr.New(pgerr.InvalidTableDefinition, "postgres sink: target table %s.%s has no primary key or unique index on the sink's key (%s)",
				quoteIdent(s.schema), quoteIdent(s.table), strings.Join(names, ", ")).
				WithHint("Rows are upserted by the key: ALTER TABLE ... ADD PRIMARY KEY on those columns, or give primary_key.")
		}
	}
	_, err = query(ctx, conn, "CREATE TABLE IF NOT EXISTS "+s.progress+" (sink text PRIMARY KEY, epoch bigint NOT NULL)")
	return err
}

// sinkID names the sink in the progress table: its name and OID, so that
// a sink created again under the same name starts afresh.
func (s *Sink) sinkID() string { return s.spec.Name + "/" + strconv.FormatUint(uint64(s.spec.ID), 10) }

// query runs sql (simple protocol) and returns its last result's rows.
func query(ctx context.Context, conn *pgconn.PgConn, sql string) ([][]string, error) {
	return pgclient.Query(ctx, conn, sql, "postgres sink")
}

// targetError keeps a server error's SQLSTATE.
func targetError(err error) error { return pgclient.WrapError(err, "postgres sink") }

// text renders a value as PostgreSQL text input (nil: NULL).
func text(v types.Value, t types.T) []byte {
	if v == nil {
		return nil
	}
	return []byte(types.FormatText(v, t, &types.DefaultFormat))
}
