package slt

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Dialect is the flavour of a script; it decides how results are rendered
// and compared.
type Dialect int

const (
	// Classic is sqlite's sqllogictest: one value a line, reals as "%.3f".
	Classic Dialect = iota
	// RS is sqllogictest-rs: one row a line, values in their text form,
	// compared after whitespace folding.
	RS
)

// DialectOf picks the dialect from a file name: ".test" files are Classic,
// everything else (.slt, .slt.part) is RS.
func DialectOf(path string) Dialect {
	if strings.HasSuffix(path, ".test") {
		return Classic
	}
	return RS
}

// Kind is the kind of a record.
type Kind int

// Record kinds.
const (
	Statement     Kind = iota // statement ok | error [regex] | count N
	Query                     // query <types> [sort] [label] | query error [regex]
	HashThreshold             // hash-threshold N
	Halt                      // halt: ignore the rest of the file
	Restart                   // restart: restart the server on the same data, reconnect
	Control                   // control substitution on|off (other controls are ignored)
	System                    // system ok: shell commands, always skipped
	Let                       // let <var>[, <var>...]: run a query, remember its one row
	Include                   // include <file or glob>
)

// SortMode is how query results are ordered before comparison.
type SortMode int

// Sort modes.
const (
	NoSort SortMode = iota
	RowSort
	ValueSort
)

// Condition is one skipif/onlyif line guarding a record.
type Condition struct {
	OnlyIf bool   // onlyif (true) or skipif (false)
	Engine string // engine name as written
}

// Record is one record of a script. Line numbers are 1-based.
type Record struct {
	Kind       Kind
	Line       int // line of the record's first keyword (statement, query, ...)
	Conditions []Condition
	SQL        string

	// ExpectError: statement error / query error. ErrorRegex (may be empty:
	// any error) is searched in the error's text "ERROR: msg (SQLSTATE xxxxx)";
	// ErrorText, when set, is the expected message given after "----".
	ExpectError bool
	ErrorRegex  string
	ErrorText   string
	// Count is the expected affected-row count of "statement count N" (-1: none).
	Count int

	Types   string   // query column type letters
	Sort    SortMode // query sort mode
	Label   string   // query label (classic)
	Results []string // expected result lines after "----"

	Arg string // argument of control records: threshold, path, "substitution on", let's comma-separated names
	N   int    // hash-threshold value

	// sqlEnd is the index (0-based) of the line after the last SQL line, where
	// "----" is or would go; end is the index after the record's last line.
	sqlEnd, end int
}

// Script is a parsed file. It is immutable after Parse.
type Script struct {
	Path    string
	Dialect Dialect
	Lines   []string
	Records []Record
}

// ParseFile reads and parses a script.
func ParseFile(path string) (*Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read script: %w", err)
	}
	return Parse(path, string(b))
}

// Parse parses the text of a script; path names it in errors and picks the
// dialect.
func Parse(path, text string) (*Script, error) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	s := &Script{Path: path, Dialect: DialectOf(path), Lines: lines}
	p := parser{lines: lines, path: path}
	var conds []Condition
	for p.i < len(lines) {
		line := lines[p.i]
		if isBlank(line) || isComment(line) {
			p.i++
			continue
		}
		f := strings.Fields(line)
		rec := Record{Line: p.i + 1, Count: -1}
		switch f[0] {
		case "skipif", "onlyif":
			if len(f) < 2 {
				return nil, p.errorf("%s needs an engine name", f[0])
			}
			conds = append(conds, Condition{OnlyIf: f[0] == "onlyif", Engine: f[1]})
			p.i++
			continue
		case "statement":
			if err := p.statement(&rec, line, f); err != nil {
				return nil, err
			}
		case "query":
			if err := p.query(&rec, line, f); err != nil {
				return nil, err
			}
		case "hash-threshold":
			if len(f) != 2 {
				return nil, p.errorf("hash-threshold needs a number")
			}
			n, err := strconv.Atoi(f[1])
			if err != nil {
				return nil, p.errorf("bad hash-threshold %q", f[1])
			}
			rec.Kind, rec.N, rec.Arg = HashThreshold, n, f[1]
			p.single(&rec)
		case "halt":
			rec.Kind = Halt
			p.single(&rec)
		case "restart":
			rec.Kind = Restart
			p.single(&rec)
		case "control":
			rec.Kind, rec.Arg = Control, strings.Join(f[1:], " ")
			p.single(&rec)
		case "include":
			if len(f) != 2 {
				return nil, p.errorf("include needs one path")
			}
			rec.Kind, rec.Arg = Include, f[1]
			p.single(&rec)
		case "system":
			rec.Kind = System
			p.i++
			rec.SQL = p.block()
			p.skipResults()
			rec.sqlEnd, rec.end = p.i, p.i
		case "let":
			names := strings.Fields(strings.ReplaceAll(restAfter(line, 1), ",", " "))
			if len(names) == 0 {
				return nil, p.errorf("let needs variable names")
			}
			rec.Kind, rec.Arg = Let, strings.Join(names, ",")
			p.i++
			rec.SQL = p.block()
			rec.sqlEnd, rec.end = p.i, p.i
		case "sleep":
			// sqllogictest-rs "sleep 1s": correctness never depends on sleeping.
			p.i++
			continue
		default:
			return nil, p.errorf("unknown record %q", f[0])
		}
		rec.Conditions, conds = conds, nil
		s.Records = append(s.Records, rec)
	}
	return s, nil
}

type parser struct {
	lines []string
	path  string
	i     int // index of the current line
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", p.path, p.i+1, fmt.Sprintf(format, args...))
}

// single finishes a one-line control record.
func (p *parser) single(rec *Record) {
	p.i++
	rec.sqlEnd, rec.end = p.i, p.i
}

// statement parses "statement ok|error [regex]|count N" and its SQL.
func (p *parser) statement(rec *Record, line string, f []string) error {
	rec.Kind = Statement
	if len(f) < 2 {
		return p.errorf("statement needs ok, error or count")
	}
	switch f[1] {
	case "ok":
	case "error":
		rec.ExpectError = true
		rec.ErrorRegex = restAfter(line, 2)
	case "count":
		if len(f) != 3 {
			return p.errorf("statement count needs a number")
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return p.errorf("bad statement count %q", f[2])
		}
		rec.Count = n
	default:
		return p.errorf("unknown statement mode %q", f[1])
	}
	p.i++
	rec.SQL = p.block()
	rec.sqlEnd = p.i
	if p.i < len(p.lines) && p.lines[p.i] == "----" {
		p.i++
		rec.ErrorText = strings.Join(p.results(), "\n")
	}
	rec.end = p.i
	if rec.SQL == "" {
		return fmt.Errorf("%s:%d: statement without SQL", p.path, rec.Line)
	}
	return nil
}

// query parses "query <types> [sort] [label] [retry N backoff Xs]" or
// "query error [regex]", its SQL and expected results.
func (p *parser) query(rec *Record, line string, f []string) error {
	rec.Kind = Query
	if len(f) >= 2 && f[1] == "error" {
		rec.ExpectError = true
		rec.ErrorRegex = restAfter(line, 2)
	} else {
		if len(f) >= 2 {
			rec.Types = f[1]
		}
		for k := 2; k < len(f); k++ {
			switch f[k] {
			case "nosort":
				rec.Sort = NoSort
			case "rowsort":
				rec.Sort = RowSort
			case "valuesort":
				rec.Sort = ValueSort
			case "retry":
				k = len(f) // "retry N backoff Xs": run once, no sleeping
			default:
				rec.Label = f[k]
			}
		}
	}
	p.i++
	rec.SQL = p.block()
	rec.sqlEnd = p.i
	if p.i < len(p.lines) && p.lines[p.i] == "----" {
		p.i++
		res := p.results()
		if rec.ExpectError {
			rec.ErrorText = strings.Join(res, "\n")
		} else {
			rec.Results = res
		}
	}
	rec.end = p.i
	if rec.SQL == "" {
		return fmt.Errorf("%s:%d: query without SQL", p.path, rec.Line)
	}
	return nil
}

// block collects SQL lines up to a blank line or "----", dropping comments.
func (p *parser) block() string {
	var sql []string
	for ; p.i < len(p.lines); p.i++ {
		l := p.lines[p.i]
		if isBlank(l) || l == "----" {
			break
		}
		if isComment(l) {
			continue
		}
		sql = append(sql, l)
	}
	return strings.Join(sql, "\n")
}

// results collects result lines up to a blank line, dropping comments.
func (p *parser) results() []string {
	res := []string{}
	for ; p.i < len(p.lines); p.i++ {
		l := p.lines[p.i]
		if isBlank(l) {
			break
		}
		if isComment(l) {
			continue
		}
		res = append(res, strings.TrimRight(l, " \t"))
	}
	return res
}

func (p *parser) skipResults() {
	if p.i < len(p.lines) && p.lines[p.i] == "----" {
		p.i++
		p.results()
	}
}

func isBlank(l string) bool   { return strings.TrimSpace(l) == "" }
func isComment(l string) bool { return strings.HasPrefix(l, "#") }

// restAfter returns line without its first n whitespace-separated words,
// trimmed: the regex of "statement error <regex>".
func restAfter(line string, n int) string {
	s := strings.TrimSpace(line)
	for ; n > 0; n-- {
		k := strings.IndexAny(s, " \t")
		if k < 0 {
			return ""
		}
		s = strings.TrimLeft(s[k:], " \t")
	}
	return strings.TrimSpace(s)
}
