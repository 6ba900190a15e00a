package pgcdc

import (
	"context"
	"errors"
	"fmt"
	"github.com/streamsql/streamsql/connector/internal/pgclient"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// DeleteColumn is the boolean column a postgres-cdc reader adds after the
// table's columns: true for a row whose key is to be deleted (only its key
// columns are set), false for a row to insert or replace.
const DeleteColumn = "_cdc_delete"

// UnchangedColumn is the text column after DeleteColumn: for a replaced
// row, the numbers (0-based, comma-separated) of the columns PostgreSQL did
// not send because their TOASTed value did not change; those columns are
// NULL in the batch and keep the value the table has for the key. When
// the update changed the key, the list starts with "old:" and the columns
// keep the values of the row before, which deletes the old key. Empty for
// every other row.
const UnchangedColumn = "_cdc_unchanged"

// SharedColumn is the one (placeholder) column of a shared source.
const SharedColumn = "_cdc_source"

// Source is a validated postgres-cdc source: immutable, safe for
// concurrent use. Its readers are resumable at LSNs.
type Source struct {
	shared bool // CREATE SOURCE without table.name: read through tables
	cfg    Config
	cols   []types.Column // the table's columns
	out    []types.Column // cols, DeleteColumn, UnchangedColumn
}

// Open validates a postgres-cdc source. cols are the table's declared
// columns (required); format must be empty (the changes are decoded from
// pgoutput, not from a format).
func Open(cols []types.Column, opts map[string]string, format string) (*Source, error) {
	if format != "" {
		return nil, bad("a postgres-cdc table cannot read FORMAT %s", format).
			WithHint("Leave the FORMAT clause out: changes are decoded from PostgreSQL's logical replication.")
	}
	if _, ok := opts["table.name"]; !ok {
		if len(cols) == 0 || len(cols) == 1 && cols[0].Name == SharedColumn {
			return openShared(opts)
		}
		return nil, pgerr.New(pgerr.InvalidTableDefinition, "a postgres-cdc source without table.name has no columns of its own").
			WithHint("Declare the columns on its tables: CREATE TABLE t (...) FROM source TABLE 'schema.table'.")
	}
	if len(cols) == 0 {
		return nil, pgerr.New(pgerr.InvalidTableDefinition, "a postgres-cdc table needs declared columns").
			WithHint("Declare the upstream columns to replicate, with the upstream primary key: CREATE TABLE t (id bigint PRIMARY KEY, ...) WITH (connector = 'postgres-cdc', ...).")
	}
	cfg, err := ParseConfig(opts)
	if err != nil {
		return nil, err
	}
	for _, c := range cols {
		if c.Name == DeleteColumn || c.Name == UnchangedColumn {
			return nil, pgerr.New(pgerr.DuplicateColumn, "column name \"%s\" is reserved by the postgres-cdc connector", c.Name)
		}
	}
	out := append(slices.Clone(cols), types.Column{Name: DeleteColumn, Type: types.TBool},
		types.Column{Name: UnchangedColumn, Type: types.TText})
	return &Source{cfg: cfg, cols: slices.Clone(cols), out: out}, nil
}

// openShared validates a shared source (CREATE SOURCE without table.name):
// the connection, slot and publication options its tables start from.
func openShared(opts map[string]string) (*Source, error) {
	o := make(map[string]string, len(opts)+1)
	for k, v := range opts {
		o[k] = v
	}
	o["table.name"] = "shared"
	cfg, err := ParseConfig(o)
	if err != nil {
		return nil, err
	}
	cfg.Table = ""
	// One placeholder column: a relation has columns; reading it is
	// refused (connector.NewReaderAt).
	return &Source{cfg: cfg, shared: true, out: []types.Column{{Name: SharedColumn, Type: types.TText}}}, nil
}

// Shared reports whether s is a shared source, read only through tables
// created FROM it (TableOptions).
func (s *Source) Shared() bool { return s.shared }

// TableOptions returns the options of a table of the shared source with
// options opts reading upstream table ("schema.table" or "table"): the
// source's, with table.name set and a slot of the table's own (the
// source's slot name, "_", the table's name; at most 63 bytes).
func TableOptions(opts map[string]string, table string) (map[string]string, error) {
	if _, ok := opts["table.name"]; ok {
		return nil, bad("source has table.name: it is a table's source, not a shared one")
	}
	out := make(map[string]string, len(opts)+1)
	for k, v := range opts {
		out[k] = v
	}
	out["table.name"] = table
	var b strings.Builder
	b.WriteString(opts["slot.name"])
	b.WriteByte('_')
	for _, r := range strings.ToLower(table) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	slot := b.String()
	if len(slot) > 63 {
		slot = slot[:63]
	}
	out["slot.name"] = slot
	if _, ok := opts["publication.name"]; !ok {
		out["publication.name"] = opts["slot.name"]
	}
	return out, nil
}

// Config returns the source's configuration.
func (s *Source) Config() Config { return s.cfg }

// Columns are the table's columns, then DeleteColumn and UnchangedColumn.
func (s *Source) Columns() []types.Column { return s.out }

// upstreamColumn is a column of the upstream table.
type upstreamColumn struct {
	name     string
	oid      uint32
	typ      types.T
	typeName string
	ok       bool // typ is known
	identity bool // part of the replica identity (or of the primary key under FULL)
}

// upstreamTable is the upstream table's shape.
type upstreamTable struct {
	cols      []upstreamColumn
	replIdent byte // d, f, i or n
}

// describe reads the upstream table's columns and replica identity.
func (s *Source) describe(ctx context.Context, conn *pgconn.PgConn) (*upstreamTable, error) {
	rows, err := query(ctx, conn, `SELECT c.relreplident::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = `+quoteLit(s.cfg.Schema)+` AND c.relname = `+quoteLit(s.cfg.Table)+` AND c.relkind IN ('r', 'p')`)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, pgerr.New(pgerr.UndefinedTable, "upstream table %s does not exist in database %q at %s", s.cfg.qualified(), s.cfg.Database, s.cfg.addr())
	}
	t := &upstreamTable{replIdent: rows[0][0][0]}
	rows, err = query(ctx, conn, `SELECT a.attname, a.atttypid::int8, format_type(a.atttypid, a.atttypmod),
		coalesce((SELECT bool_or(a.attnum = ANY(i.indkey)) FROM pg_index i WHERE i.indrelid = c.oid AND
			CASE c.relreplident WHEN 'i' THEN i.indisreplident ELSE i.indisprimary END), false)
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = `+quoteLit(s.cfg.Schema)+` AND c.relname = `+quoteLit(s.cfg.Table)+`
		AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		oid, _ := strconv.ParseUint(r[1], 10, 32)
		typ, ok := types.FromOID(uint32(oid))
		t.cols = append(t.cols, upstreamColumn{name: r[0], oid: uint32(oid), typ: typ, typeName: r[2], ok: ok, identity: r[3] == "t"})
	}
	return t, nil
}

// compatible reports whether a value of upstream type u reads as declared
// type d through its text form.
func compatible(d, u types.T) bool {
	switch {
	case d.IsString() && u.IsString():
		return true
	case d.Kind == types.Text && u.Kind == types.UUID:
		return true // its text form, as before streamsql had uuid
	case d.Kind != u.Kind:
		return false
	case d.Kind == types.Array:
		return compatible(*d.Elem, *u.Elem)
	}
	return true
}

// match checks the declared columns against the upstream table: each
// must exist there with a compatible type. It returns, for each declared
// column, its upstream column number.
func (s *Source) match(t *upstreamTable) ([]int, error) {
	idx := make([]int, len(s.cols))
	for i, c := range s.cols {
		j := slices.IndexFunc(t.cols, func(u upstreamColumn) bool { return u.name == c.Name })
		if j < 0 {
			return nil, pgerr.New(pgerr.UndefinedColumn, "column \"%s\" does not exist in upstream table %s", c.Name, s.cfg.qualified()).
				WithHint("Upstream columns: %s.", upstreamNames(t))
		}
		u := t.cols[j]
		if !u.ok && c.Type.Kind == types.Text {
			idx[i] = j // read as its text form (uuid, inet, an enum, ...)
			continue
		}
		if !u.ok {
			return nil, pgerr.Unsupported("upstream column \"%s\" of %s has type %s, which streamsql does not have", c.Name, s.cfg.qualified(), u.typeName).
				WithHint("Declare it as text to read its text form, or leave it out.")
		}
		if !compatible(c.Type, u.typ) {
			return nil, pgerr.New(pgerr.DatatypeMismatch, "column \"%s\" is declared %s but upstream table %s has it as %s", c.Name, c.Type, s.cfg.qualified(), u.typeName)
		}
		idx[i] = j
	}
	return idx, nil
}

func upstreamNames(t *upstreamTable) string {
	names := make([]string, len(t.cols))
	for i, c := range t.cols {
		names[i] = c.name + " " + c.typeName
	}
	return strings.Join(names, ", ")
}

// checkKey checks that the declared primary key (column names) is the
// upstream table's replica identity, which is what PostgreSQL sends to
// identify an updated or deleted row.
func (s *Source) checkKey(t *upstreamTable, pk []string) error {
	var ident []string
	for _, c := range t.cols {
		if c.identity {
			ident = append(ident, c.name)
		}
	}
	sort.Strings(ident)
	want := slices.Clone(pk)
	sort.Strings(want)
	switch {
	case t.replIdent == 'n':
		return pgerr.New(pgerr.ObjectNotInPrerequisiteState, "upstream table %s has REPLICA IDENTITY NOTHING: its updates and deletes cannot be replicated", s.cfg.qualified()).
			WithHint("ALTER TABLE %s REPLICA IDENTITY DEFAULT (with a primary key), or FULL.", s.cfg.qualified())
	case len(ident) == 0 && t.replIdent == 'f':
		return nil // FULL without a primary key: the old row identifies it
	case len(ident) == 0:
		return pgerr.New(pgerr.ObjectNotInPrerequisiteState, "upstream table %s has no primary key (or replica identity index)", s.cfg.qualified()).
			WithHint("Add a primary key upstream, or set REPLICA IDENTITY FULL there.")
	case !slices.Equal(ident, want):
		return pgerr.New(pgerr.InvalidTableDefinition, "the primary key (%s) does not match upstream table %s's key (%s)",
			strings.Join(want, ", "), s.cfg.qualified(), strings.Join(ident, ", ")).
			WithHint("Declare PRIMARY KEY (%s).", strings.Join(ident, ", "))
	}
	return nil
}

// Check connects to the upstream database and checks what CREATE TABLE
// needs: logical replication is on, the table exists with the declared
// columns and key (pk: the primary key's column names), the slot does
// not exist yet, and the publication exists (created when missing) and
// publishes the table.
func (s *Source) Check(ctx context.Context, pk []string) error {
	conn, err := s.connect(ctx, false)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if err := s.checkWALLevel(ctx, conn); err != nil {
		return err
	}
	if err := s.checkReplicationRole(ctx, conn); err != nil {
		return err
	}
	t, err := s.describe(ctx, conn)
	if err != nil {
		return err
	}
	if _, err := s.match(t); err != nil {
		return err
	}
	if err := s.checkKey(t, pk); err != nil {
		return err
	}
	var rows [][]string
	// A fresh table's reader drops and recreates its slot (see Run): the
	// slot must not be another table's, or a leftover someone may need.
	rows, err = query(ctx, conn, "SELECT database FROM pg_replication_slots WHERE slot_name = "+quoteLit(s.cfg.Slot))
	if err != nil {
		return err
	}
	if len(rows) > 0 {
		return pgerr.New(pgerr.DuplicateObject, "replication slot %q already exists upstream (database %q)", s.cfg.Slot, rows[0][0]).
			WithHint("Each postgres-cdc table needs a slot of its own: choose another slot.name, or drop the old slot upstream with SELECT pg_drop_replication_slot('%s').", s.cfg.Slot)
	}
	return s.ensurePublication(ctx, conn)
}

// CheckShared checks a shared source: the server answers and has
// wal_level = logical.
func (s *Source) CheckShared(ctx context.Context) error {
	conn, err := s.connect(ctx, false)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if err := s.checkWALLevel(ctx, conn); err != nil {
		return err
	}
	return s.checkReplicationRole(ctx, conn)
}

// checkReplicationRole checks that the upstream user may use replication
// slots (REPLICATION or superuser), so that CREATE fails with the reason
// rather than the table's reader later.
func (s *Source) checkReplicationRole(ctx context.Context, conn *pgconn.PgConn) error {
	rows, err := query(ctx, conn, "SELECT rolsuper OR rolreplication FROM pg_roles WHERE rolname = current_user")
	if err != nil {
		return err
	}
	if len(rows) == 0 || rows[0][0] != "t" {
		return pgerr.New(pgerr.InsufficientPrivilege, "upstream user %q may not use replication slots: it needs the REPLICATION attribute (or to be a superuser)", s.cfg.User).
			WithHint("ALTER ROLE %s REPLICATION upstream, or connect as another user.", quoteIdent(s.cfg.User))
	}
	return nil
}

func (s *Source) checkWALLevel(ctx context.Context, conn *pgconn.PgConn) error {
	rows, err := query(ctx, conn, "SHOW wal_level")
	if err != nil {
		return err
	}
	if rows[0][0] != "logical" {
		return pgerr.New(pgerr.ObjectNotInPrerequisiteState, "upstream PostgreSQL at %s has wal_level = %s; logical replication needs wal_level = logical", s.cfg.addr(), rows[0][0]).
			WithHint("Set wal_level = logical in postgresql.conf and restart it.")
	}
	return nil
}

// ensurePublication creates the publication for the table when it does
// not exist, and adds the table to it when it does not publish it.
func (s *Source) ensurePublication(ctx context.Context, conn *pgconn.PgConn) error {
	rows, err := query(ctx, conn, "SELECT puballtables FROM pg_publication WHERE pubname = "+quoteLit(s.cfg.Publication))
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		_, err := query(ctx, conn, "CREATE PUBLICATION "+quoteIdent(s.cfg.Publication)+" FOR TABLE "+s.cfg.qualified())
		if err != nil {
			return fmt.Errorf("create publication %q: %w", s.cfg.Publication, err)
		}
		return nil
	}
	rows, err = query(ctx, conn, "SELECT 1 FROM pg_publication_tables WHERE pubname = "+quoteLit(s.cfg.Publication)+
		" AND schemaname = "+quoteLit(s.cfg.Schema)+" AND tablename = "+quoteLit(s.cfg.Table))
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		if _, err := query(ctx, conn, "ALTER PUBLICATION "+quoteIdent(s.cfg.Publication)+" ADD TABLE "+s.cfg.qualified()); err != nil {
			return pgerr.Wrap(err, pgerr.ObjectNotInPrerequisiteState, "upstream publication %q does not publish table %s, and adding it failed: %v", s.cfg.Publication, s.cfg.qualified(), err).
				WithHint("ALTER PUBLICATION %s ADD TABLE %s upstream, or name another publication.", quoteIdent(s.cfg.Publication), s.cfg.qualified())
		}
	}
	return nil
}

// connect opens a connection (a walsender one when replication is set);
// failures are 08001 errors naming the server.
func (s *Source) connect(ctx context.Context, replication bool) (*pgconn.PgConn, error) {
	cfg, err := s.cfg.connConfig(replication)
	if err != nil {
		return nil, err
	}
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return nil, pgerr.Wrap(err, pgerr.Code(pe.Code), "postgres-cdc: cannot connect to %s: %s", s.cfg.addr(), pe.Message)
		}
		return nil, pgerr.Wrap(err, pgerr.Code("08001"), "postgres-cdc: cannot connect to %s: %v", s.cfg.addr(), err)
	}
	return conn, nil
}

// query runs sql (simple protocol) and returns its last result's rows as
// text; NULLs are "". Errors from the server keep their SQLSTATE.
func query(ctx context.Context, conn *pgconn.PgConn, sql string) ([][]string, error) {
	return pgclient.Query(ctx, conn, sql, "upstream PostgreSQL")
}

// upstreamError wraps an error from the upstream server as a pgerr error
// with its SQLSTATE.
func upstreamError(err error) error { return pgclient.WrapError(err, "upstream PostgreSQL") }

// DropSlot drops the source's replication slot upstream, waiting for a
// walsender still using it to exit (ctx bounds the wait). A missing slot
// is not an error. The engine calls it when the table is dropped.
func (s *Source) DropSlot(ctx context.Context) error {
	conn, err := s.connect(ctx, true)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	err = pglogrepl.DropReplicationSlot(ctx, conn, s.cfg.Slot, pglogrepl.DropReplicationSlotOptions{Wait: true})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42704" { // undefined_object: already gone
		return nil
	}
	if err != nil {
		return upstreamError(err)
	}
	return nil
}
