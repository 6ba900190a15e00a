package storage

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Alter gives the table a new definition (same OID) and rewrites its rows
// in the new layout, for ALTER TABLE. convert receives each chunk's batch in
// the old layout and returns the same rows in def's layout (ADD COLUMN
// appends a filled column, DROP COLUMN leaves one out, a type change casts);
// a nil convert keeps the batches, for changes of names or constraints only.
//
// The live rows are checked against def's NOT NULL and primary key, with
// PostgreSQL's ALTER TABLE errors (23502 `column "z" of relation "t"
// contains null values`; 23505 `could not create unique index "t_pkey"`,
// detail `Key (id)=(1) is duplicated.`); on error nothing changes. Row ids
// are kept. The change is atomic and durable on return: the log is rewritten
// as a snapshot under the new header and renamed over the old one.
//
// The table's writers wait meanwhile. Snapshots taken before keep the old
// layout: the caller must keep statements planned against the old
// definition from running alongside (the catalog's lock on the relation).
//
// Each of checks, if any, sees every converted chunk with its deleted-row
// bitmap (nil: none deleted; LSB-first) and may refuse the change (CHECK
// constraints of the rows already there).
func (t *Table) Alter(ctx context.Context, def TableDef, convert func(arrow.RecordBatch) (arrow.RecordBatch, error), checks ...func(rec arrow.RecordBatch, deleted []byte) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkDef(def); err != nil {
		return err
	}
	def = cloneDef(def)
	for _, c := range def.PrimaryKey {
		def.NotNull[c] = true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writable(); err != nil {
		return err
	}
	if t.owner != nil {
		return t.errLocked("alter")
	}
	if def.OID != t.def.OID {
		return fmt.Errorf("storage: alter of table %d to oid %d", t.def.OID, def.OID)
	}
	if err := t.barrier(); err != nil {
		return err
	}
	schema := types.ArrowSchema(def.Columns)
	st := &state{next: t.w.next, live: t.w.live, meta: t.w.meta, pos: &feedPos{seq: t.w.pos.seq + 1, rows: t.w.pos.rows, bytes: t.w.pos.bytes}}
	for i, c := range t.w.chunks {
		rec := c.Rec
		if convert != nil {
			out, err := convert(rec)
			if err != nil {
				return err
			}
			if out.NumRows() != rec.NumRows() {
				return fmt.Errorf("storage: alter of %q: convert returned %d rows for %d", def.TableName, out.NumRows(), rec.NumRows())
			}
			rec = out
		}
		if err := conformSchema(def.TableName, schema, rec); err != nil {
			return err
		}
		for _, check := range checks {
			if err := check(rec, c.Deleted); err != nil {
				return err
			}
		}
		st.chunks = append(st.chunks, Chunk{Rec: array.NewRecordBatch(schema, rec.Columns(), rec.NumRows()), FirstRowID: c.FirstRowID, Deleted: c.Deleted})
		st.dead = append(st.dead, t.w.dead[i])
	}
	if err := checkNotNullLive(&def, st); err != nil {
		return err
	}
	pk, keys := newIndexes(&def)
	for _, x := range keys {
		if err := indexLive(&def, x, st); err != nil {
			return err
		}
	}

	path := t.log.path
	tmp := path + ".tmp"
	lsn := st.pos.seq // ALTER starts a new LSN space (lsn.go)
	h := headerDef{Def: def, Format: logFormat, LSN: lsn, Base: lsn, Hist: lsn, Meta: st.meta}
	f, size, markAt, err := writeSnapshot(tmp, h, st, t.ret.marks, nil)
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("storage: %w", err)
	}
	old := t.log.f
	t.log.f, t.log.markAt = f, markAt
	t.log.size.Store(size)
	old.Close()
	t.endFeeds(fmt.Errorf("%w: table %q was altered", ErrFeedEnded, t.def.TableName))
	t.def, t.schema, t.pk, t.keys, t.w = def, schema, pk, keys, st
	t.pub.Store(st)
	t.ret.base = lsn
	t.ret.setRoot(nil, 0)
	if t.ret.marks.n > 0 {
		t.ret.setRoot(st.pos, 0)
	}
	t.resetCompactionCheck()
	return syncDir(t.store.dir)
}

// conformSchema checks that rec has schema's column types.
func conformSchema(table string, schema *arrow.Schema, rec arrow.RecordBatch) error {
	if int(rec.NumCols()) != schema.NumFields() {
		return fmt.Errorf("storage: table %q: batch has %d columns, want %d", table, rec.NumCols(), schema.NumFields())
	}
	for i, c := range rec.Columns() {
		if want := schema.Field(i).Type; !arrow.TypeEqual(c.DataType(), want) {
			return fmt.Errorf("storage: table %q column %d: arrow type %s, want %s", table, i, c.DataType(), want)
		}
		if int64(c.Len()) != rec.NumRows() {
			return fmt.Errorf("storage: table %q column %d: %d rows in a batch of %d", table, i, c.Len(), rec.NumRows())
		}
	}
	return nil
}

// checkNotNullLive finds the first live row (in row id order) with a NULL
// in a NOT NULL column, as PostgreSQL's table rewrite does.
func checkNotNullLive(def *TableDef, st *state) error {
	for _, c := range st.chunks {
		row, col := -1, -1
		for ci, notNull := range def.NotNull {
			a := c.Rec.Column(ci)
			if !notNull || a.NullN() == 0 {
				continue
			}
			end := a.Len()
			if row >= 0 {
				end = row
			}
			for i := 0; i < end; i++ {
				if a.IsNull(i) && (c.Deleted == nil || !bitutil.BitIsSet(c.Deleted, i)) {
					row, col = i, ci
					break
				}
			}
		}
		if row >= 0 {
			return pgerr.New(pgerr.NotNullViolation, `column "%s" of relation "%s" contains null values`,
				def.Columns[col].Name, def.TableName)
		}
	}
	return nil
}

// indexLive adds every live row's key to pk; a duplicate fails as
// PostgreSQL's CREATE UNIQUE INDEX does.
func indexLive(def *TableDef, pk *pkIndex, st *state) error {
	for _, c := range st.chunks {
		for i := 0; i < int(c.Rec.NumRows()); i++ {
			if c.Deleted != nil && bitutil.BitIsSet(c.Deleted, i) {
				continue
			}
			if _, ok := pk.add(c.Rec, i, c.FirstRowID+int64(i)); !ok {
				names, vals := keyText(def, pk.cols, c.Rec, i)
				return pgerr.New(pgerr.UniqueViolation, `could not create unique index "%s"`, pk.name).
					WithDetail("Key (%s)=(%s) is duplicated.", names, vals)
			}
		}
	}
	return nil
}

// keyText renders row i's key (columns cols) as PostgreSQL's error details
// do: quoted column names and the values' text output, comma separated.
func keyText(def *TableDef, cols []int, rec arrow.RecordBatch, row int) (names, vals string) {
	var nb, vb strings.Builder
	for j, c := range cols {
		if j > 0 {
			nb.WriteString(", ")
			vb.WriteString(", ")
		}
		column := def.Columns[c]
		nb.WriteString(quoteIdent(column.Name))
		vb.WriteString(types.FormatText(types.ValueAt(rec.Column(c), row, column.Type), column.Type, &types.DefaultFormat))
	}
	return nb.String(), vb.String()
}
