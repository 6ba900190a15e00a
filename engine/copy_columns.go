package engine

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// copyForceQuote resolves FORCE_QUOTE into a flag per output column, as
// PostgreSQL's BeginCopyTo does: a table's column that the COPY does not
// copy is 42P10, an unknown column 42703, a repeated one 42701.
func (s *Session) copyForceQuote(c *pg.CopyStmt, o copyOptions, cols []types.Column) ([]bool, error) {
	if !o.forceQuoteAll && len(o.forceQuote) == 0 {
		return nil, nil
	}
	flags := make([]bool, len(cols))
	if o.forceQuoteAll {
		for i := range flags {
			flags[i] = true
		}
		return flags, nil
	}
	// The copied column names, in output order.
	names := make([]string, len(cols))
	for i, col := range cols {
		names[i] = col.Name
	}
	var relCols map[string]bool
	relName := ""
	if c.Query == nil {
		rv := c.Relation
		rel, err := s.eng.cat.Resolve(rv.Schemaname, rv.Relname, s.set.searchPath())
		if err != nil {
			return nil, err
		}
		relName = rel.Name
		relCols = map[string]bool{}
		for _, col := range rel.Columns {
			relCols[col.Name] = true
		}
	}
	seen := map[string]bool{}
	for _, name := range o.forceQuote {
		if relCols != nil && !relCols[name] {
			return nil, pgerr.New(pgerr.UndefinedColumn, "column %q of relation %q does not exist", name, relName)
		}
		at := -1
		for i, n := range names {
			if n == name {
				at = i
				break
			}
		}
		if at < 0 && relCols == nil {
			return nil, pgerr.New(pgerr.UndefinedColumn, "column %q does not exist", name)
		}
		if seen[name] {
			return nil, pgerr.New(pgerr.DuplicateColumn, "column %q specified more than once", name)
		}
		seen[name] = true
		if at < 0 {
			return nil, pgerr.New(pgerr.InvalidColumnReference, "FORCE_QUOTE column %q not referenced by COPY", name)
		}
		flags[at] = true
	}
	return flags, nil
}

// copyFieldFlags resolves FORCE_NOT_NULL or FORCE_NULL (option names
// PostgreSQL's messages use: "FORCE_NOT_NULL") into a flag per data field.
func (c *copyIn) copyFieldFlags(option string, names []string) ([]bool, error) {
	if len(names) == 0 {
		return nil, nil
	}
	flags := make([]bool, len(c.target))
	seen := map[int]bool{}
	for _, name := range names {
		col := c.rel.ColumnIndex(name)
		if col < 0 {
			return nil, pgerr.New(pgerr.UndefinedColumn, "column %q of relation %q does not exist", name, c.rel.Name)
		}
		if seen[col] {
			return nil, pgerr.New(pgerr.DuplicateColumn, "column %q specified more than once", name)
		}
		seen[col] = true
		at := -1
		for i, t := range c.target {
			if t == col {
				at = i
			}
		}
		if at < 0 {
			return nil, pgerr.New(pgerr.InvalidColumnReference, "%s column %q not referenced by COPY", option, name)
		}
		flags[at] = true
	}
	return flags, nil
}

// applyForceNull applies FORCE_NOT_NULL (an unquoted NULL string is a
// value) and FORCE_NULL (a quoted field equal to the NULL string is NULL)
// to the fields of a CSV row, in PostgreSQL's order.
func (c *copyIn) applyForceNull() {
	for i := range c.fields {
		switch {
		case c.isNull[i] && i < len(c.forceNotNull) && c.forceNotNull[i]:
			c.isNull[i] = false
		case !c.isNull[i] && i < len(c.forceNull) && c.forceNull[i] && c.fields[i] == c.opts.null:
			c.isNull[i] = true
		}
	}
}

// matchHeader checks HEADER MATCH: the header line's fields must be the
// copied columns' names, in order.
func (c *copyIn) matchHeader() error {
	if len(c.fields) != len(c.target) {
		return c.errorf(pgerr.BadCopyFileFormat, "wrong number of fields in header line: got %d, expected %d", len(c.fields), len(c.target))
	}
	for i, f := range c.fields {
		want := c.rel.Columns[c.target[i]].Name
		if c.isNull[i] {
			return c.errorf(pgerr.BadCopyFileFormat, "column name mismatch in header line field %d: got null value (\"%s\"), expected \"%s\"", i+1, c.opts.null, want)
		}
		if f != want {
			return c.errorf(pgerr.BadCopyFileFormat, "column name mismatch in header line field %d: got \"%s\", expected \"%s\"", i+1, f, want)
		}
	}
	return nil
}
