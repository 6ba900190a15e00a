package streamprop

import (
	"fmt"
	"strconv"
	"strings"
)

// kind is a column type with the small value domain the generator draws
// from: few distinct values, so groups and join keys collide.
type kind struct {
	sqlType string
	quote   bool     // literals need quotes
	domain  []string // text forms of the non-NULL values
}

// Numeric values never equal each other at different scales (2.5 and 2.50):
// which of two equal values min, max or DISTINCT keeps is not determined.
var (
	kInt     = kind{sqlType: "int", domain: []string{"0", "1", "2", "3", "4"}}
	kBigint  = kind{sqlType: "bigint", domain: []string{"1", "2", "3", "5", "8", "10000000000"}}
	kText    = kind{sqlType: "text", quote: true, domain: []string{"x", "y", "z", "p", ""}}
	kNumeric = kind{sqlType: "numeric", domain: []string{"0", "1.5", "-2.25", "10", "3.333", "2.50"}}
	kFloat   = kind{sqlType: "float8", domain: []string{"0.1", "0.5", "-1.25", "3", "0.2", "1e-3"}}
	kTS      = kind{sqlType: "timestamp", quote: true, domain: []string{
		"2024-01-01 00:00:00", "2024-01-01 12:30:00", "2024-01-02 08:00:00",
		"2024-03-01 23:59:59.5", "2023-12-31 23:00:00"}}
)

// goValue converts a text form to the Go value pgx's binary COPY encodes.
func (k kind) goValue(text string) (any, error) {
	switch k.sqlType {
	case "int":
		v, err := strconv.ParseInt(text, 10, 32)
		return int32(v), err
	case "bigint":
		return strconv.ParseInt(text, 10, 64)
	case "float8":
		return strconv.ParseFloat(text, 64)
	case "text":
		return text, nil
	}
	return nil, fmt.Errorf("no binary COPY value for %s", k.sqlType)
}

type column struct {
	name string
	kind kind
	pk   bool
}

type table struct {
	name       string
	cols       []column
	appendOnly bool // APPEND ONLY in streamsql (PostgreSQL has no such tables)
}

// The schema: a and c have primary keys (int, bigint), b has none, so it
// holds duplicate rows. Columns share domains across tables: a.k, b.k and
// c.w join; a.g, b.s and c.g join.
var (
	tableA = &table{name: "a", cols: []column{
		{"id", kInt, true}, {"k", kInt, false}, {"g", kText, false},
		{"n", kNumeric, false}, {"f", kFloat, false}, {"ts", kTS, false}}}
	tableB = &table{name: "b", cols: []column{
		{"k", kInt, false}, {"v", kBigint, false}, {"s", kText, false}, {"f", kFloat, false}}}
	tableC = &table{name: "c", cols: []column{
		{"id", kBigint, true}, {"g", kText, false}, {"w", kInt, false}, {"ts", kTS, false}}}
	// d only ever gets inserts: the planner keeps less state over it
	// (running extremes, only the top rows of a top-N).
	tableD = &table{name: "d", appendOnly: true, cols: []column{
		{"k", kInt, false}, {"v", kBigint, false}, {"s", kText, false}, {"ts", kTS, false}}}
	tables = []*table{tableA, tableB, tableC, tableD}
	// mutable are the tables UPDATE, DELETE and TRUNCATE may change.
	mutable = []*table{tableA, tableB, tableC}
)

// ddl is t's CREATE TABLE, for streamsql or (without APPEND ONLY) for
// PostgreSQL.
func (t *table) ddl(streamsql bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (", t.name)
	for i, c := range t.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", c.name, c.kind.sqlType)
		if c.pk {
			b.WriteString(" PRIMARY KEY")
		}
	}
	b.WriteString(")")
	if streamsql && t.appendOnly {
		b.WriteString(" APPEND ONLY")
	}
	return b.String()
}

func (t *table) col(name string) int {
	for i, c := range t.cols {
		if c.name == name {
			return i
		}
	}
	panic("streamprop: no column " + t.name + "." + name)
}

// value is one generated value: its text form, or NULL.
type value struct {
	text string
	null bool
	kind kind
}

// literal is the value as SQL.
func (v value) literal() string {
	if v.null {
		return "NULL"
	}
	if v.kind.quote {
		return "'" + strings.ReplaceAll(v.text, "'", "''") + "'"
	}
	if strings.HasPrefix(v.text, "-") {
		return "(" + v.text + ")"
	}
	return v.text
}

// copyStep is a COPY of rows into some columns of a table.
type copyStep struct {
	table  string
	cols   []column
	rows   [][]value
	binary bool // pgx's binary CopyFrom instead of text COPY
}

func (c *copyStep) colNames() []string {
	out := make([]string, len(c.cols))
	for i, col := range c.cols {
		out[i] = col.name
	}
	return out
}

func (c *copyStep) statement() string {
	return fmt.Sprintf("COPY %s (%s) FROM STDIN", c.table, strings.Join(c.colNames(), ", "))
}

// textData is the rows in COPY's text format (the domains hold no tabs,
// newlines or backslashes).
func (c *copyStep) textData() []byte {
	var b strings.Builder
	for _, r := range c.rows {
		for j, v := range r {
			if j > 0 {
				b.WriteByte('\t')
			}
			if v.null {
				b.WriteString(`\N`)
			} else {
				b.WriteString(v.text)
			}
		}
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// script is the COPY as psql runs it.
func (c *copyStep) script() string {
	kind := ""
	if c.binary {
		kind = " -- sent as binary COPY"
	}
	return c.statement() + ";" + kind + "\n" + string(c.textData()) + "\\.\n"
}
