package engine

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/types"
)

// execCopy runs COPY ... FROM STDIN and COPY ... TO STDOUT.
func (s *Session) execCopy(ctx context.Context, c *pg.CopyStmt, stmt sql.Statement) (*Result, error) {
	if c.Filename != "" || c.IsProgram {
		return nil, pgerr.New(pgerr.InsufficientPrivilege, "COPY to or from a file is not supported; use STDIN/STDOUT (psql's \\copy)")
	}
	opts, err := parseCopyOptions(c.Options, c.IsFrom)
	if err != nil {
		return nil, err
	}
	if c.IsFrom {
		return s.copyFrom(ctx, c, opts)
	}
	return s.copyTo(ctx, c, opts)
}

func (s *Session) copyTo(ctx context.Context, c *pg.CopyStmt, o copyOptions) (*Result, error) {
	query := c.Query
	if query == nil {
		rv := c.Relation
		cols := "*"
		rel, _ := s.eng.cat.Resolve(rv.Schemaname, rv.Relname, s.set.searchPath())
		if len(c.Attlist) > 0 {
			names := make([]string, len(c.Attlist))
			for i, a := range c.Attlist {
				name := a.GetString_().GetSval()
				if rel != nil && rel.Kind == catalog.KindTable {
					if k := rel.ColumnIndex(name); k >= 0 {
						if err := copyGenerated(rel.Columns[k]); err != nil {
							return nil, err
						}
					}
				}
				names[i] = quoteIdent(name)
			}
			cols = strings.Join(names, ", ")
		} else if rel != nil && rel.Kind == catalog.KindTable && planner.HasGenerated(rel) {
			// Generated columns are left out, as PostgreSQL leaves them out.
			var names []string
			for _, col := range rel.Columns {
				if col.Generated == "" {
					names = append(names, quoteIdent(col.Name))
				}
			}
			cols = strings.Join(names, ", ")
		}
		name := quoteIdent(rv.Relname)
		if rv.Schemaname != "" {
			name = quoteIdent(rv.Schemaname) + "." + name
		}
		stmts, err := sql.Parse("SELECT " + cols + " FROM " + name)
		if err != nil {
			return nil, err
		}
		query = stmts[0].AST
	}
	q, err := planner.PlanSelect(s.env(ctx, nil), query)
	if err != nil {
		return nil, err
	}
	if err := refuseRowLocks(q, "COPY"); err != nil { // rowlock.go
		return nil, err
	}
	forceQuote, err := s.copyForceQuote(c, o, q.Columns)
	if err != nil {
		return nil, err
	}
	if err := s.eng.waitViewsStarted(ctx, q.Views); err != nil { // recovery.go
		return nil, err
	}
	ectx := s.execContext(ctx, nil)
	it, err := q.Root.Open(ectx)
	if err != nil {
		closeBudget(ectx)
		return nil, err
	}
	return &Result{Tag: "COPY", Columns: q.Columns, Notices: s.eng.viewNotices(q.Views), CopyOut: &CopyOut{
		Columns: q.Columns, Rows: &cancelIter{it, func() { closeBudget(ectx) }}, Format: o.format, Delimiter: o.delimiter,
		Null: o.null, Header: o.header, Quote: o.quote, Escape: o.escape,
		ForceQuote: forceQuote,
	}}, nil
}

func (s *Session) copyFrom(ctx context.Context, c *pg.CopyStmt, o copyOptions) (*Result, error) {
	rv := c.Relation
	rel, err := s.eng.cat.Resolve(rv.Schemaname, rv.Relname, s.set.searchPath())
	if err != nil {
		return nil, err
	}
	tbl := s.eng.cat.Table(rel.OID)
	if rel.Kind != catalog.KindTable || tbl == nil {
		return nil, pgerr.New(pgerr.WrongObjectType, "cannot copy to %q: it is not a table", rel.Name)
	}
	if err := s.checkPriv(rel, catalog.PrivInsert); err != nil { // grant.go
		return nil, err
	}
	// target[i] is the table column that data field i fills; defCols are
	// the columns left out that have a default, filled by defExprs.
	var target, defCols []int
	var defExprs []expr.Expr
	if len(c.Attlist) == 0 {
		for i, col := range rel.Columns {
			if col.Generated == "" { // generated columns are computed, never read
				target = append(target, i)
			}
		}
	} else {
		seen := map[int]bool{}
		for _, a := range c.Attlist {
			name := a.GetString_().GetSval()
			i := rel.ColumnIndex(name)
			if i < 0 {
				return nil, pgerr.New(pgerr.UndefinedColumn, "column %q of relation %q does not exist", name, rel.Name)
			}
			if err := copyGenerated(rel.Columns[i]); err != nil {
				return nil, err
			}
			if seen[i] {
				return nil, pgerr.New(pgerr.DuplicateColumn, "column %q specified more than once", name)
			}
			seen[i] = true
			target = append(target, i)
		}
		for i, col := range rel.Columns {
			if !seen[i] && (col.Default != "" || col.Domain != 0) { // a domain's default or NULL is checked (domain.go)
				defCols = append(defCols, i)
			}
		}
	}
	if len(defCols) > 0 {
		if defExprs, err = planner.DefaultExprs(s.env(ctx, nil), rel, defCols); err != nil {
			return nil, err
		}
	}
	domChecks, err := planner.DomainChecks(s.env(ctx, nil), rel)
	if err != nil {
		return nil, err
	}
	checks, err := planner.CompileChecks(s.env(ctx, nil), rel) // CHECK constraints (constraints.go)
	if err != nil {
		return nil, err
	}
	gen, err := planner.CompileGenerated(s.env(ctx, nil), rel)
	if err != nil {
		return nil, err
	}
	fmtOpts := s.set.format()
	ci := &copyIn{ctx: ctx, s: s, rel: rel, tbl: tbl, opts: o, target: target, fmt: &fmtOpts, header: o.header,
		defCols: defCols, defExprs: defExprs, domChecks: domChecks, checks: checks, gen: gen}
	if ci.forceNotNull, err = ci.copyFieldFlags("FORCE_NOT_NULL", o.forceNotNull); err != nil {
		return nil, err
	}
	if ci.forceNull, err = ci.copyFieldFlags("FORCE_NULL", o.forceNull); err != nil {
		return nil, err
	}
	ci.reset()
	return &Result{Tag: "COPY", CopyIn: ci}, nil
}

// copyRowsPerBatch is how many rows COPY FROM gathers into one Arrow batch.
const copyRowsPerBatch = 65536

// copyIn parses COPY FROM STDIN data into batches; Finish inserts them all
// in one durable, all-or-nothing call.
type copyIn struct {
	ctx      context.Context
	s        *Session // writes through its transaction block, if any
	rel      *catalog.Relation
	tbl      *storage.Table
	opts     copyOptions
	target   []int
	defCols  []int       // columns left out of the list that have a default
	defExprs []expr.Expr // their defaults, evaluated per batch
	// domChecks are the domain checks of the columns (nil: none), over a
	// batch of the column alone (planner.DomainChecks).
	domChecks  []expr.Expr
	checks     *planner.RowChecks // the table's CHECK constraints, or nil
	gen        *planner.RowGen    // the table's generated columns, or nil
	err        error              // a default that failed to evaluate
	fmt        *types.FormatOptions
	header     bool
	partial    []byte // an incomplete line carried to the next Write
	line       int
	done       bool
	headerDone bool // binary format: the file header was read

	forceNotNull []bool // per data field: FORCE_NOT_NULL (csv)
	forceNull    []bool // per data field: FORCE_NULL (csv)

	builders []array.Builder
	rows     int
	batches  []arrow.RecordBatch
	fields   []string
	isNull   []bool
}

func (c *copyIn) reset() {
	c.builders = make([]array.Builder, len(c.rel.Columns))
	for i, col := range c.rel.Columns {
		c.builders[i] = types.NewBuilder(memAlloc, col.Type)
	}
	c.rows = 0
}

func (c *copyIn) Columns() int { return len(c.target) }
func (c *copyIn) Binary() bool { return c.opts.format == "binary" }

func (c *copyIn) Write(data []byte) error {
	if c.done {
		return nil
	}
	if c.opts.format == "binary" {
		return c.writeBinary(data)
	}
	if len(c.partial) > 0 {
		data = append(c.partial, data...)
		c.partial = nil
	}
	for len(data) > 0 {
		end := c.lineEnd(data)
		if end < 0 {
			c.partial = append([]byte(nil), data...)
			return nil
		}
		line := data[:end]
		if err := c.checkEncoding(data[:end+1]); err != nil {
			return err
		}
		data = data[end+1:]
		if err := c.row(line); err != nil {
			return err
		}
		if c.done {
			return nil
		}
	}
	return nil
}

// lineEnd finds the newline ending the next row; in CSV a quoted field may
// hold newlines.
func (c *copyIn) lineEnd(data []byte) int {
	if c.opts.format != "csv" {
		return bytes.IndexByte(data, '\n')
	}
	inQuote := false
	q, e := c.opts.quote[0], c.opts.escape[0]
	for i := 0; i < len(data); i++ {
		b := data[i]
		switch {
		case inQuote && b == e && e != q && i+1 < len(data) && data[i+1] == q:
			i++
		case b == q:
			inQuote = !inQuote
		case b == '\n' && !inQuote:
			return i
		}
	}
	return -1
}

func (c *copyIn) row(line []byte) error {
	c.line++
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if c.header && !c.opts.headerMatch {
		c.header = false
		return nil
	}
	if string(line) == `\.` && !c.header {
		c.done = true
		return nil
	}
	var err error
	if c.opts.format == "csv" {
		err = c.splitCSV(line)
	} else {
		err = c.splitText(line)
	}
	if err != nil {
		return err
	}
	if c.header {
		c.header = false
		return c.matchHeader()
	}
	if c.opts.format == "csv" {
		c.applyForceNull()
	}
	if len(c.fields) != len(c.target) {
		if len(c.fields) < len(c.target) {
			return c.errorf(pgerr.BadCopyFileFormat, "missing data for column %q", c.rel.Columns[c.target[len(c.fields)]].Name)
		}
		return c.errorf(pgerr.BadCopyFileFormat, "extra data after last expected column")
	}
	filled := make([]bool, len(c.rel.Columns))
	for i, f := range c.fields {
		col := c.target[i]
		filled[col] = true
		if c.isNull[i] {
			c.builders[col].AppendNull()
			continue
		}
		if err := c.appendField(col, f); err != nil {
			e := pgerr.As(err)
			if e == nil {
				return err
			}
			e2 := *e
			e2.Detail = fmt.Sprintf("COPY %s, line %d, column %s: %q", c.rel.Name, c.line, c.rel.Columns[col].Name, f)
			return &e2
		}
	}
	for i, ok := range filled {
		if !ok {
			c.builders[i].AppendNull()
		}
	}
	c.rows++
	if c.rows >= copyRowsPerBatch {
		c.flushBatch()
	}
	return nil
}

// appendField parses one value into its column's builder, with fast paths
// for the common numeric and text columns.
func (c *copyIn) appendField(col int, f string) error {
	t := c.rel.Columns[col].Type
	switch b := c.builders[col].(type) {
	case *array.Int64Builder:
		if t.Kind == types.Int8 {
			if v, err := strconv.ParseInt(f, 10, 64); err == nil {
				b.Append(v)
				return nil
			}
		}
	case *array.Int32Builder:
		if v, err := strconv.ParseInt(f, 10, 32); err == nil {
			b.Append(int32(v))
			return nil
		}
	case *array.StringBuilder:
		if t.Kind == types.Text {
			b.Append(f)
			return nil
		}
	}
	v, err := types.ParseText(f, t, c.fmt)
	if err != nil {
		return err
	}
	return types.AppendValue(c.builders[col], v, t)
}

func (c *copyIn) flushBatch() {
	if c.rows == 0 {
		return
	}
	cols := make([]arrow.Array, len(c.builders))
	for i, b := range c.builders {
		cols[i] = b.NewArray()
	}
	rec := array.NewRecordBatch(types.ArrowSchema(c.rel.ColumnTypes()), cols, int64(c.rows))
	if len(c.defCols) > 0 && c.err == nil {
		ectx := c.s.evalContext(c.ctx, nil)
		for k, i := range c.defCols {
			a, err := c.defExprs[k].Eval(ectx, rec)
			if err != nil {
				c.err = err
				break
			}
			cols[i] = a
		}
		rec = array.NewRecordBatch(rec.Schema(), cols, int64(c.rows))
	}
	if c.domChecks != nil && c.err == nil {
		c.err = c.checkDomains(cols)
	}
	c.batches = append(c.batches, rec)
	c.reset()
}

// checkDomains applies the domain checks of the data's columns (the
// defaults' are in defExprs).
func (c *copyIn) checkDomains(cols []arrow.Array) error {
	ectx := c.s.evalContext(c.ctx, nil)
	for _, i := range c.target {
		chk := c.domChecks[i]
		if chk == nil {
			continue
		}
		one := array.NewRecordBatch(types.ArrowSchema([]types.Column{{Name: c.rel.Columns[i].Name, Type: c.rel.Columns[i].Type}}), cols[i:i+1], int64(c.rows))
		a, err := chk.Eval(ectx, one)
		one.Release()
		if err != nil {
			return err
		}
		a.Release()
	}
	return nil
}

func (c *copyIn) errorf(code pgerr.Code, format string, args ...any) error {
	e := pgerr.New(code, format, args...)
	e.Detail = fmt.Sprintf("COPY %s, line %d", c.rel.Name, c.line)
	return e
}

// checkEncoding refuses a raw line of text or csv COPY data (with its
// newline) that is not valid UTF-8 or holds a NUL byte, as PostgreSQL
// verifies its input before splitting it: 22021 for the whole COPY, which
// then stores nothing.
func (c *copyIn) checkEncoding(raw []byte) error {
	if bytes.IndexByte(raw, 0) < 0 && utf8.Valid(raw) {
		return nil
	}
	err := types.CheckUTF8(string(raw))
	if e := pgerr.As(err); e != nil {
		e2 := *e
		e2.Detail = fmt.Sprintf("COPY %s, line %d", c.rel.Name, c.line+1)
		return &e2
	}
	return err
}

// splitText splits a text-format line into fields, undoing backslash escapes.
// A field in which an escape made a NUL or a non-ASCII byte is verified
// again, as PostgreSQL does (COPY t FROM STDIN with a\377b or \000 is 22021).
func (c *copyIn) splitText(line []byte) error {
	c.fields, c.isNull = c.fields[:0], c.isNull[:0]
	delim := c.opts.delimiter[0]
	var cur []byte
	raw := 0 // start of the current field in line, to compare with NULL
	escaped := false
	for i := 0; i <= len(line); i++ {
		if i == len(line) || line[i] == delim {
			rawField := string(line[raw:i])
			isNull := rawField == c.opts.null
			if escaped && !isNull {
				if err := types.CheckUTF8(string(cur)); err != nil {
					if e := pgerr.As(err); e != nil {
						e2 := *e
						e2.Detail = fmt.Sprintf("COPY %s, line %d: \"%s\"", c.rel.Name, c.line, line)
						return &e2
					}
					return err
				}
			}
			escaped = false
			c.isNull = append(c.isNull, isNull)
			c.fields = append(c.fields, string(cur))
			cur = cur[:0]
			raw = i + 1
			continue
		}
		b := line[i]
		if b != '\\' || i+1 >= len(line) {
			cur = append(cur, b)
			continue
		}
		i++
		switch n := line[i]; n {
		case 'b':
			cur = append(cur, '\b')
		case 'f':
			cur = append(cur, '\f')
		case 'n':
			cur = append(cur, '\n')
		case 'r':
			cur = append(cur, '\r')
		case 't':
			cur = append(cur, '\t')
		case 'v':
			cur = append(cur, '\v')
		case 'x':
			j := i + 1
			for j < len(line) && j < i+3 && isHex(line[j]) {
				j++
			}
			if j == i+1 {
				cur = append(cur, 'x')
				continue
			}
			v, _ := strconv.ParseUint(string(line[i+1:j]), 16, 8)
			cur = append(cur, byte(v))
			escaped = escaped || v == 0 || v >= 0x80
			i = j - 1
		default:
			if n >= '0' && n <= '7' {
				j := i
				for j < len(line) && j < i+3 && line[j] >= '0' && line[j] <= '7' {
					j++
				}
				v, _ := strconv.ParseUint(string(line[i:j]), 8, 8)
				cur = append(cur, byte(v))
				escaped = escaped || v == 0 || v >= 0x80
				i = j - 1
				continue
			}
			cur = append(cur, n)
		}
	}
	return nil
}

// splitCSV splits a CSV line; an unquoted field equal to NULL is NULL.
func (c *copyIn) splitCSV(line []byte) error {
	c.fields, c.isNull = c.fields[:0], c.isNull[:0]
	delim, q, e := c.opts.delimiter[0], c.opts.quote[0], c.opts.escape[0]
	i := 0
	for {
		var cur []byte
		quoted := false
		start := i
		for i < len(line) && line[i] != delim {
			if line[i] == q {
				quoted = true
				i++
				for i < len(line) {
					b := line[i]
					if b == e && i+1 < len(line) && (line[i+1] == q || line[i+1] == e) && (e != q || line[i+1] == q) {
						cur = append(cur, line[i+1]) // escaped quote (or escape)
						i += 2
						continue
					}
					if b == q {
						break // closing quote
					}
					cur = append(cur, b)
					i++
				}
				if i >= len(line) {
					return c.errorf(pgerr.BadCopyFileFormat, "unterminated CSV quoted field")
				}
				i++ // closing quote
				continue
			}
			cur = append(cur, line[i])
			i++
		}
		c.fields = append(c.fields, string(cur))
		c.isNull = append(c.isNull, !quoted && string(line[start:i]) == c.opts.null)
		if i >= len(line) {
			return nil
		}
		i++ // delimiter
	}
}

func isHex(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'
}

func (c *copyIn) Finish() (string, error) {
	if c.opts.format == "binary" && len(c.partial) > 0 {
		return "", c.errorf(pgerr.BadCopyFileFormat, "unexpected EOF in COPY data")
	}
	if len(c.partial) > 0 {
		line := c.partial
		c.partial = nil
		if err := c.checkEncoding(line); err != nil {
			return "", err
		}
		if err := c.row(line); err != nil {
			return "", err
		}
	}
	c.flushBatch()
	if c.err != nil {
		return "", c.err
	}
	batches := c.batches
	c.batches = nil
	var n int64
	for _, b := range batches {
		n += b.NumRows()
	}
	if n > 0 {
		if err := c.s.copyWrite(c.ctx, c.rel, c.tbl, c.checks, c.gen, batches); err != nil { // constraints.go
			return "", err
		}
	}
	return fmt.Sprintf("COPY %d", n), nil
}

func (c *copyIn) Abort(string) { c.batches = nil; c.reset() }

// quoteIdent quotes an identifier when PostgreSQL would need it.
func quoteIdent(s string) string {
	ok := s != ""
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_' || (i > 0 && (r >= '0' && r <= '9' || r == '$'))) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// copyGenerated refuses a generated column in COPY's column list, as
// PostgreSQL does.
func copyGenerated(col catalog.Column) error {
	if col.Generated == "" {
		return nil
	}
	return pgerr.New(pgerr.InvalidColumnReference, "column \"%s\" is a generated column", col.Name).
		WithDetail("Generated columns cannot be used in COPY.")
}
