package storage

import (
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// NOT NULL, primary key and UNIQUE checks, with PostgreSQL 15's errors.
//
// PostgreSQL checks a row's NOT NULL constraints, then inserts its key, row
// after row; the first failing row decides the error. checkRows does the
// same: it finds the first row with a NULL in a NOT NULL column (vectorized),
// then adds keys to the index row by row up to that row. On any failure the
// index is restored, so a failed call changes nothing.

// checkRows validates rows that will get row ids first, first+1, ... and
// adds their keys to the index. olds are the rows an update replaces: their
// keys are removed first (and put back on failure). Holds t.mu.
func (t *Table) checkRows(rec arrow.RecordBatch, first int64, olds []rowRef) error {
	nullRow, nullCol := t.firstNull(rec)
	limit := int(rec.NumRows())
	if nullRow >= 0 {
		limit = nullRow
	}
	if len(t.keys) > 0 {
		for _, o := range olds {
			for _, x := range t.keys {
				x.remove(o.rec, o.row, o.id)
			}
		}
		for i := 0; i < limit; i++ {
			id := first + int64(i)
			for k, x := range t.keys {
				if _, ok := x.add(rec, i, id); !ok {
					for _, y := range t.keys[:k] {
						y.remove(rec, i, id)
					}
					t.unindex(rec, first, i)
					t.reindex(olds)
					return duplicateKeyError(&t.def, x, rec, i)
				}
			}
		}
		if nullRow >= 0 {
			t.unindex(rec, first, limit)
			t.reindex(olds)
		}
	}
	if nullRow >= 0 {
		return t.notNullError(rec, nullRow, nullCol)
	}
	return nil
}

// unindex removes the keys of rec's first n rows (row ids first, ...).
func (t *Table) unindex(rec arrow.RecordBatch, first int64, n int) {
	for _, x := range t.keys {
		for i := 0; i < n; i++ {
			x.remove(rec, i, first+int64(i))
		}
	}
}

// reindex puts back the keys of rows.
func (t *Table) reindex(rows []rowRef) {
	for _, x := range t.keys {
		for _, r := range rows {
			x.add(r.rec, r.row, r.id)
		}
	}
}

// firstNull returns the first row with a NULL in a NOT NULL column and the
// first such column of that row, or -1, -1.
func (t *Table) firstNull(rec arrow.RecordBatch) (row, col int) {
	row, col = -1, -1
	for c, notNull := range t.def.NotNull {
		if !notNull {
			continue
		}
		a := rec.Column(c)
		if a.NullN() == 0 {
			continue
		}
		end := a.Len()
		if row >= 0 {
			end = row
		}
		for i := 0; i < end; i++ {
			if a.IsNull(i) {
				row, col = i, c
				break
			}
		}
	}
	return row, col
}

func (t *Table) notNullError(rec arrow.RecordBatch, row, col int) error {
	return pgerr.New(pgerr.NotNullViolation,
		`null value in column "%s" of relation "%s" violates not-null constraint`,
		t.def.Columns[col].Name, t.def.TableName).
		WithDetail("Failing row contains (%s).", FailingRow(rec, row, t.def.Columns))
}

// FailingRow renders row of rec (columns cols) as PostgreSQL's "Failing
// row contains (...)" detail does: text forms, NULL as null, each value
// clipped to 64 bytes.
func FailingRow(rec arrow.RecordBatch, row int, cols []types.Column) string {
	var b strings.Builder
	for c, column := range cols {
		if c > 0 {
			b.WriteString(", ")
		}
		v := types.ValueAt(rec.Column(c), row, column.Type)
		if v == nil {
			b.WriteString("null")
			continue
		}
		b.WriteString(clipValue(types.FormatText(v, column.Type, &types.DefaultFormat)))
	}
	return b.String()
}

func duplicateKeyError(def *TableDef, x *pkIndex, rec arrow.RecordBatch, row int) error {
	names, vals := keyText(def, x.cols, rec, row)
	return pgerr.New(pgerr.UniqueViolation, `duplicate key value violates unique constraint "%s"`, x.name).
		WithDetail("Key (%s)=(%s) already exists.", names, vals)
}

// clipValue shortens a value for "Failing row contains" as PostgreSQL does:
// at most 64 bytes, cut at a character boundary, then "...".
func clipValue(s string) string {
	const maxField = 64
	if len(s) <= maxField {
		return s
	}
	n := maxField
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// quoteIdent quotes an identifier as PostgreSQL's quote_identifier does:
// unless it is lower case letters, digits and underscores not starting with
// a digit, and not a reserved keyword.
func quoteIdent(s string) string {
	safe := s != ""
	for i := 0; i < len(s) && safe; i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c == '_':
		case c >= '0' && c <= '9' && i > 0:
		default:
			safe = false
		}
	}
	if safe && !reservedKeywords[s] {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// reservedKeywords are PostgreSQL 15's keywords that are not unreserved
// (pg_get_keywords() with catcode <> 'U'): quote_identifier quotes them.
var reservedKeywords = func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric authorization
		between bigint binary bit boolean both case cast char character check coalesce collate collation
		column concurrently constraint create cross current_catalog current_date current_role
		current_schema current_time current_timestamp current_user dec decimal default deferrable desc
		distinct do else end except exists extract false fetch float for foreign freeze from full grant
		greatest group grouping having ilike in initially inner inout int integer intersect interval into
		is isnull join lateral leading least left like limit localtime localtimestamp national natural
		nchar none normalize not notnull null nullif numeric offset on only or order out outer overlaps
		overlay placing position precision primary real references returning right row select
		session_user setof similar smallint some substring symmetric table tablesample then time
		timestamp to trailing treat trim true union unique user using values varchar variadic verbose
		when where window with xmlattributes xmlconcat xmlelement xmlexists xmlforest xmlnamespaces
		xmlparse xmlpi xmlroot xmlserialize xmltable`) {
		m[w] = true
	}
	return m
}()
