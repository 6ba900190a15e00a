package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector"
	"github.com/streamsql/streamsql/connector/pgcdc"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/types"
)

// CDC tables: CREATE TABLE t (...) WITH (connector = 'postgres-cdc', ...)
// keeps t equal to an upstream PostgreSQL table (connector/pgcdc). Its
// ingest is the kafka tables' (ingest.go) with two differences: each batch
// is a changelog (rows to upsert, keys to delete, TOAST-unchanged columns
// to keep) applied with storage.Table.UpsertMeta, and a reader that starts
// with a snapshot (no position, or one taken mid-snapshot) first empties
// the table, so a snapshot cut short by a crash is taken again whole.
// How it works: docs/contributing/pgcdc.md.

// cdcConnector is the connector name of CDC tables.
const cdcConnector = "postgres-cdc"

// cdcSource is what the engine needs of a postgres-cdc source beyond
// connector.Resumable.
type cdcSource interface {
	CheckTable(ctx context.Context, pk []string) error
	NeedsSnapshot(pos []byte) bool
	DropSlot(ctx context.Context) error
}

// cdcDropTimeout bounds dropping the upstream slot of a dropped table.
var cdcDropTimeout = 10 * time.Second

// isCDCTable reports whether rel is a postgres-cdc table.
func isCDCTable(rel *catalog.Relation) bool {
	return isConnectorTable(rel) && strings.EqualFold(rel.Connector, cdcConnector)
}

// cdcTable completes rel, planned from CREATE TABLE ... WITH (connector =
// 'postgres-cdc', ...), and checks the upstream table (connect, columns,
// key, publication) so that a mistake fails here.
func (s *Session) cdcTable(ctx context.Context, rel *catalog.Relation, x *sql.Source, opts map[string]string) error {
	if x.Format != "" || x.Encode != "" {
		return pgerr.New(pgerr.InvalidParameterValue, "a postgres-cdc table cannot have a FORMAT clause").
			WithHint("Changes are decoded from PostgreSQL's logical replication: leave FORMAT out.")
	}
	if len(x.Include) > 0 {
		return pgerr.Unsupported("a postgres-cdc table has no INCLUDE columns")
	}
	if len(rel.Columns) == 0 {
		// CREATE TABLE t FROM src TABLE '...' (or WITH (...)) without
		// columns: the upstream table's, with its primary key.
		cctx, cancel := context.WithTimeout(ctx, sourceCheckTimeout)
		cols, pk, err := connector.PgCDCColumns(cctx, opts)
		cancel()
		if err != nil {
			return err
		}
		for _, c := range cols {
			rel.Columns = append(rel.Columns, catalog.Column{Name: c.Name, Type: c.Type, NotNull: slices.Contains(pk, c.Name)})
		}
		for _, name := range pk {
			rel.PrimaryKey = append(rel.PrimaryKey, slices.IndexFunc(rel.Columns, func(c catalog.Column) bool { return c.Name == name }))
		}
	}
	if len(rel.PrimaryKey) == 0 {
		return pgerr.New(pgerr.InvalidTableDefinition, "a postgres-cdc table needs a PRIMARY KEY").
			WithHint("Declare the upstream table's primary key: updates and deletes find their row by it.")
	}
	if len(rel.Unique) > 0 {
		return pgerr.Unsupported("a postgres-cdc table cannot have UNIQUE constraints besides its primary key").
			WithHint("A change violating one would stop the replication.")
	}
	for i, c := range rel.Columns {
		switch {
		case c.Default != "" || c.Identity != 0 || c.Serial != "":
			return pgerr.Unsupported("column \"%s\" of a postgres-cdc table cannot have a default or be an identity or serial column", c.Name).
				WithHint("Its values come from the upstream table.")
		case c.NotNull && !slices.Contains(rel.PrimaryKey, i):
			return pgerr.Unsupported("column \"%s\" of a postgres-cdc table cannot be NOT NULL", c.Name).
				WithHint("The upstream table enforces its own constraints.")
		}
	}
	rel.Connector, rel.Options, rel.Format = cdcConnector, opts, ""
	src, err := s.eng.openConnector(rel)
	if err != nil {
		return err
	}
	cs, ok := src.(cdcSource)
	if !ok {
		return fmt.Errorf("the %s connector cannot check its table (%T)", cdcConnector, src)
	}
	pk := make([]string, len(rel.PrimaryKey))
	for i, c := range rel.PrimaryKey {
		pk[i] = rel.Columns[c].Name
	}
	cctx, cancel := context.WithTimeout(ctx, sourceCheckTimeout)
	defer cancel()
	return cs.CheckTable(cctx, pk)
}

// cdcTableFrom completes rel, planned from CREATE TABLE t (...) FROM src
// TABLE 'schema.table': a postgres-cdc table with the shared source's
// options, the upstream table, and a slot of its own
// (pgcdc.TableOptions). The table keeps a copy of the options: dropping
// or altering the source later does not change it.
func (s *Session) cdcTableFrom(ctx context.Context, rel *catalog.Relation, x *sql.Source) error {
	schema, name := "", x.FromSource
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		schema, name = name[:i], name[i+1:]
	}
	src, err := s.eng.cat.Resolve(schema, name, s.set.searchPath())
	if err != nil {
		return err
	}
	if src.Kind != catalog.KindSource || !strings.EqualFold(src.Connector, cdcConnector) {
		return pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a postgres-cdc source", src.Name).
			WithHint("CREATE SOURCE %s WITH (connector = 'postgres-cdc', hostname = ..., slot.name = ...) first.", quoteIdent(src.Name))
	}
	if _, ok := src.Options["table.name"]; ok {
		return pgerr.New(pgerr.WrongObjectType, "postgres-cdc source \"%s\" reads one table (it has table.name); a table FROM it needs a source without table.name", src.Name)
	}
	opts, err := pgcdc.TableOptions(src.Options, x.FromTable)
	if err != nil {
		return err
	}
	return s.cdcTable(ctx, rel, &sql.Source{}, opts)
}

// ingestCDC runs a CDC table's reader from the table's position until ctx
// is canceled or an error.
func (e *Engine) ingestCDC(ctx context.Context, oid uint32, rel *catalog.Relation, tbl *storage.Table, src connector.Source) error {
	cs, ok := src.(cdcSource)
	if !ok {
		return fmt.Errorf("the %s connector is not a CDC source (%T)", rel.Connector, src)
	}
	start := tbl.Meta()
	if cs.NeedsSnapshot(start) && tbl.RowCount() > 0 {
		if err := tbl.Truncate(ctx); err != nil {
			return fmt.Errorf("empty table %q before its snapshot: %w", rel.Name, err)
		}
	}
	var bad atomic.Int64
	onError := func(err error) {
		if n := bad.Add(1); n <= 10 || n%1000 == 0 {
			e.cfg.Logf("table %q: skipped a change (%d so far): %v", rel.Name, n, err)
		}
	}
	r, err := connector.NewReaderAt(src, start, connector.ReaderOptions{Errors: onError})
	if err != nil {
		return err
	}
	pos, ok := r.(connector.Positioner)
	if !ok {
		return fmt.Errorf("the %s connector's reader reports no position", rel.Connector)
	}
	if rep, ok := r.(connector.Reporter); ok {
		defer e.readers.add(&sourceReader{job: oid, source: oid, rep: rep})()
	}
	defer func() {
		// DROP TABLE: the slot would keep WAL upstream for ever.
		if ctx.Err() != nil && e.cat.Relation(oid) == nil {
			dctx, cancel := context.WithTimeout(context.Background(), cdcDropTimeout)
			defer cancel()
			if err := cs.DropSlot(dctx); err != nil {
				e.cfg.Logf("table %q was dropped, but its replication slot could not be dropped upstream: %v", rel.Name, err)
			}
		}
	}()
	return r.Run(ctx, func(b arrow.RecordBatch) error {
		ups, dels, err := cdcBatch(b, rel, tbl)
		if err == nil {
			_, err = tbl.UpsertMeta(ctx, ups, dels, pos.Position())
		}
		if err != nil {
			if errors.Is(err, context.Canceled) || ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("write to table %q: %w", rel.Name, err)
		}
		return nil
	})
}

// cdcBatch turns a batch of a postgres-cdc reader (the table's columns,
// pgcdc.DeleteColumn, pgcdc.UnchangedColumn) into the rows to upsert and
// the keys to delete: columns a row left unchanged take their value from
// the latest earlier row of the batch with its key, else from the table.
func cdcBatch(b arrow.RecordBatch, rel *catalog.Relation, tbl *storage.Table) (ups, dels arrow.RecordBatch, err error) {
	ncols := len(rel.Columns)
	if int(b.NumCols()) != ncols+2 {
		return nil, nil, fmt.Errorf("cdc batch of %d columns for a table of %d", b.NumCols(), ncols)
	}
	unch, ok := b.Column(ncols + 1).(*array.String)
	if !ok {
		return nil, nil, fmt.Errorf("cdc batch: column %d is %s, not text", ncols+1, b.Column(ncols+1).DataType())
	}
	patch := false
	for i := 0; i < unch.Len() && !patch; i++ {
		patch = unch.Value(i) != ""
	}
	if patch {
		if b, err = patchUnchanged(b, rel, tbl, unch); err != nil {
			return nil, nil, err
		}
	}
	fields := make([]arrow.Field, ncols+1)
	cols := make([]arrow.Array, ncols+1)
	for i := range fields {
		fields[i], cols[i] = b.Schema().Field(i), b.Column(i)
	}
	ups, dels, bad, err := upsertBatch(array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, b.NumRows()), rel)
	if err == nil && len(bad) > 0 {
		err = fmt.Errorf("cdc batch: %d changes without a key", len(bad))
	}
	return ups, dels, err
}

// patchUnchanged returns b with the TOAST-unchanged columns filled in.
func patchUnchanged(b arrow.RecordBatch, rel *catalog.Relation, tbl *storage.Table, unch *array.String) (arrow.RecordBatch, error) {
	ncols := len(rel.Columns)
	n := int(b.NumRows())
	del := b.Column(ncols).(*array.Boolean)
	rows := make([][]types.Value, n)
	latest := map[string][]types.Value{} // key -> the row's values (nil: deleted)
	var snap *storage.Snapshot
	// current returns the values the table holds for key as of the rows
	// of the batch before this one (nil: none).
	current := func(key []types.Value, ks string) []types.Value {
		if old, seen := latest[ks]; seen {
			return old
		}
		id, ok := tbl.LookupKey(key)
		if !ok {
			return nil
		}
		if snap == nil {
			s := tbl.Snapshot()
			snap = &s
		}
		return rowByID(snap, id, rel)
	}
	var prevOld []types.Value // the values of the key row i-1 deleted, when row i needs them
	for i := 0; i < n; i++ {
		row := make([]types.Value, ncols)
		for c := range row {
			row[c] = types.ValueAt(b.Column(c), i, rel.Columns[c].Type)
		}
		key := make([]types.Value, len(rel.PrimaryKey))
		for k, c := range rel.PrimaryKey {
			key[k] = row[c]
		}
		ks := fmt.Sprintf("%#v", key)
		cs, fromOld, err := pgcdc.ParseUnchanged(unch.Value(i))
		if err != nil {
			return nil, fmt.Errorf("cdc batch: %s %q: %w", pgcdc.UnchangedColumn, unch.Value(i), err)
		}
		if len(cs) > 0 {
			old := prevOld
			if !fromOld {
				old = current(key, ks)
			}
			for _, c := range cs {
				if c >= 0 && c < ncols && old != nil {
					row[c] = old[c]
				}
			}
		}
		prevOld = nil
		if del.Value(i) && i+1 < n && strings.HasPrefix(unch.Value(i+1), "old:") {
			prevOld = current(key, ks)
		}
		rows[i] = row
		if del.Value(i) {
			latest[ks] = nil
		} else {
			latest[ks] = row
		}
	}
	cols := make([]arrow.Array, b.NumCols())
	for c := 0; c < ncols; c++ {
		vals := make([]types.Value, n)
		for i := range rows {
			vals[i] = rows[i][c]
		}
		a, err := types.MakeArray(memory.DefaultAllocator, rel.Columns[c].Type, vals)
		if err != nil {
			return nil, err
		}
		cols[c] = a
	}
	cols[ncols], cols[ncols+1] = b.Column(ncols), b.Column(ncols+1)
	return array.NewRecordBatch(b.Schema(), cols, int64(n)), nil
}

// rowByID returns the values of the row with id in snap (nil if absent).
func rowByID(snap *storage.Snapshot, id int64, rel *catalog.Relation) []types.Value {
	cs := snap.Chunks
	k := sort.Search(len(cs), func(i int) bool { return cs[i].FirstRowID > id }) - 1
	if k < 0 || id >= cs[k].FirstRowID+cs[k].Rec.NumRows() {
		return nil
	}
	i := int(id - cs[k].FirstRowID)
	row := make([]types.Value, len(rel.Columns))
	for c := range row {
		row[c] = types.ValueAt(cs[k].Rec.Column(c), i, rel.Columns[c].Type)
	}
	return row
}
