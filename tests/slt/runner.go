package slt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

const (
	defaultTimeout      = 60 * time.Second
	defaultCloseTimeout = 5 * time.Second
	defaultMaxFailures  = 5
)

// DB is one fresh, empty database a script runs in. The Runner that got it
// owns it and calls it from one goroutine.
type DB interface {
	// ConnString is a libpq-style connection string for the database; it may
	// change after Restart.
	ConnString() string
	// Restart restarts the server on the same data (the "restart" record).
	// Servers that cannot be restarted return nil: the runner reconnects anyway.
	Restart(ctx context.Context) error
	// Close drops or discards the database.
	Close() error
}

// Backend hands out a fresh database for each script file. NewDB may be
// called from several goroutines (one Runner each).
type Backend interface {
	NewDB(ctx context.Context, name string) (DB, error)
}

// Options configure a Runner.
type Options struct {
	// Engines are the names this server answers to in skipif/onlyif, e.g.
	// {"postgresql"} for PostgreSQL and {"streamsql", "postgresql"} for ours.
	Engines []string
	// Skip lists records not to run (nil: none).
	Skip *SkipList
	// Out receives the per-file lines and failure details (nil: discarded).
	Out io.Writer
	// Base is the directory file names are reported relative to ("" : as given).
	Base string
	// MaxFailures is how many failures are printed per file (0: 5, <0: none).
	MaxFailures int
	// Timeout bounds one record (0: 60s).
	Timeout time.Duration
	// Rewrite makes RunFile fill FileResult.Rewritten with the script, its
	// query results replaced by what the server returned.
	Rewrite bool
	// Slow, when positive, prints "SLOW file:line: 1.23s" for each record
	// that takes at least that long.
	Slow time.Duration
	// Extended sends each record through the extended query protocol
	// (Parse/Bind/Describe/Execute) instead of a simple Query message; a
	// record must then hold one statement.
	Extended bool
	// Translate, when set, rewrites each statement and query before it is
	// sent (e.g. tests/corpora's adapter for another engine's dialect).
	Translate func(sql string) string
	// Expect, when set, rewrites each expected result line before it is
	// compared (another engine's rendering of the same values, e.g.
	// RisingWave's "+00:00" offsets). Failures still show the file's lines.
	Expect func(line string) string
}

// Failure describes one failed record.
type Failure struct {
	File     string // file name as reported
	Line     int
	SQL      string
	Message  string
	Expected []string
	Actual   []string
}

// FileResult is the outcome of one file.
type FileResult struct {
	Name                    string
	Passed, Failed, Skipped int
	Failures                []Failure
	Duration                time.Duration
	// Rewritten is the script with fresh results (Options.Rewrite only).
	Rewritten string
}

// Totals sums file results.
type Totals struct{ Passed, Failed, Skipped int }

// Add adds one file's counts.
func (t *Totals) Add(r *FileResult) {
	t.Passed += r.Passed
	t.Failed += r.Failed
	t.Skipped += r.Skipped
}

// String is the summary line "N passed, N failed, N skipped".
func (t Totals) String() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", t.Passed, t.Failed, t.Skipped)
}

// Runner runs scripts. It is not safe for concurrent use; use one Runner per
// goroutine.
type Runner struct {
	opt Options

	// per-file state
	db        DB
	c         *conn
	dbName    string
	threshold int
	subst     bool
	vars      map[string]string
	labels    map[string]string
	tmpDir    string
	res       *FileResult
	edits     map[int]edit // top-level record index -> rewrite of it
}

// NewRunner returns a Runner.
func NewRunner(opt Options) *Runner {
	if opt.Out == nil {
		opt.Out = io.Discard
	}
	if opt.MaxFailures == 0 {
		opt.MaxFailures = defaultMaxFailures
	}
	if opt.Timeout == 0 {
		opt.Timeout = defaultTimeout
	}
	return &Runner{opt: opt}
}

// errAbort stops a file: halt, or a connection that could not be restored.
var errAbort = errors.New("abort file")

// RunFile runs one script in a fresh database from backend and prints its
// line ("name: P passed, F failed, S skipped") and first failures to
// Options.Out. Problems with the file itself (unreadable, unparsable) count
// as one failure; without a database, or once ctx is done, every record that
// would have run counts as failed.
func (r *Runner) RunFile(ctx context.Context, backend Backend, path string) *FileResult {
	start := time.Now()
	name := r.displayName(path)
	r.res = &FileResult{Name: name}
	r.threshold, r.subst = 0, false
	r.vars, r.labels, r.edits = map[string]string{}, map[string]string{}, map[int]edit{}
	r.dbName = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	defer r.cleanup()

	script, err := ParseFile(path)
	if err == nil {
		r.db, err = backend.NewDB(ctx, name)
	}
	if err == nil {
		r.c, err = connect(ctx, r.db.ConnString(), r.opt.Extended)
	}
	switch {
	case script == nil:
		r.fail(Failure{File: name, Message: err.Error()})
	case err != nil:
		// No server: every record that would have run fails.
		r.note(Failure{File: name, Message: err.Error()})
		r.failRest(script, script.Records)
	default:
		r.runScript(ctx, script, true)
	}
	if r.opt.Rewrite && script != nil {
		r.res.Rewritten = rewrite(script, r.edits)
	}
	r.res.Duration = time.Since(start)
	fmt.Fprintf(r.opt.Out, "%s: %d passed, %d failed, %d skipped\n", name, r.res.Passed, r.res.Failed, r.res.Skipped)
	for i, f := range r.res.Failures {
		if r.opt.MaxFailures >= 0 && i >= r.opt.MaxFailures {
			fmt.Fprintf(r.opt.Out, "  ... %d more failures in %s\n", len(r.res.Failures)-i, name)
			break
		}
		writeFailure(r.opt.Out, f)
	}
	return r.res
}

func (r *Runner) cleanup() {
	r.c.close()
	r.c = nil
	if r.db != nil {
		if err := r.db.Close(); err != nil {
			fmt.Fprintf(r.opt.Out, "%s: closing database: %v\n", r.res.Name, err)
		}
		r.db = nil
	}
	if r.tmpDir != "" {
		os.RemoveAll(r.tmpDir)
		r.tmpDir = ""
	}
}

func (r *Runner) displayName(path string) string {
	if r.opt.Base != "" {
		if rel, err := filepath.Rel(r.opt.Base, path); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return path
}

// runScript runs the records of s; top marks the file given to RunFile (as
// opposed to an included one), whose results Rewrite replaces.
func (r *Runner) runScript(ctx context.Context, s *Script, top bool) error {
	for i := range s.Records {
		rec := &s.Records[i]
		if ctx.Err() != nil { // the caller's time budget is spent: the rest fails
			r.note(Failure{File: r.displayName(s.Path), Line: rec.Line, Message: "not run: " + ctx.Err().Error()})
			r.failRest(s, s.Records[i:])
			return errAbort
		}
		if err := r.runRecord(ctx, s, i, rec, top); err != nil {
			if err == errAbort && r.c == nil { // connection lost: the rest fails
				r.failRest(s, s.Records[i+1:])
			}
			return err
		}
	}
	return nil
}

func (r *Runner) runRecord(ctx context.Context, s *Script, idx int, rec *Record, top bool) error {
	name := r.displayName(s.Path)
	counted := rec.Kind == Statement || rec.Kind == Query
	// A let record is skippable too (its failure counts as a failure).
	listed := (counted || rec.Kind == Let) && r.opt.Skip.Has(s.Path, rec.Line)
	if !r.applies(rec) || rec.Kind == System || listed {
		if counted || rec.Kind == System || listed {
			r.res.Skipped++
		}
		return nil
	}
	switch rec.Kind {
	case HashThreshold:
		r.threshold = rec.N
		return nil
	case Halt:
		return errAbort
	case Control:
		switch rec.Arg {
		case "substitution on":
			r.subst = true
		case "substitution off":
			r.subst = false
		}
		return nil
	case Include:
		return r.include(ctx, s, rec)
	case Restart:
		return r.restart(ctx, name, rec)
	}

	sql := rec.SQL
	if r.subst {
		sql = r.substitute(sql, s.Path)
	}
	if r.opt.Translate != nil {
		sql = r.opt.Translate(sql)
	}
	rctx, cancel := context.WithTimeout(ctx, r.opt.Timeout)
	began := time.Now()
	res, err := r.c.run(rctx, sql)
	cancel()
	if took := time.Since(began); r.opt.Slow > 0 && took >= r.opt.Slow {
		fmt.Fprintf(r.opt.Out, "SLOW %s:%d: %.2fs\n", name, rec.Line, took.Seconds())
	}
	if err != nil && ctx.Err() != nil { // the caller's budget ran out during the record
		r.fail(Failure{File: name, Line: rec.Line, SQL: sql, Message: "stopped: " + ctx.Err().Error()})
		r.c.close()
		r.c = nil
		return errAbort
	}
	if err != nil && r.c.broken(err) {
		// Count this record, then try to carry on with a new connection.
		r.fail(Failure{File: name, Line: rec.Line, SQL: sql, Message: "connection lost: " + err.Error()})
		return r.reconnect(ctx, name, rec)
	}
	if r.opt.Rewrite && top && rec.ExpectError && rec.ErrorRegex == "" && rec.ErrorText == "" {
		if h := errorHeader(rec, err); h != "" {
			r.edits[idx] = edit{header: h}
		}
	}
	var f *Failure
	switch rec.Kind {
	case Statement:
		f = r.checkStatement(rec, res, err)
	case Query:
		f = r.checkQuery(s, idx, rec, res, err, top)
	case Let:
		f = r.let(rec, res, err)
	}
	if f != nil {
		f.File, f.Line, f.SQL = name, rec.Line, sql
		r.fail(*f)
	} else if counted {
		r.res.Passed++
	}
	return nil
}

// failRest counts the statements and queries of recs that would have run as
// failed, the others as skipped.
func (r *Runner) failRest(s *Script, recs []Record) {
	for i := range recs {
		rec := &recs[i]
		switch {
		case rec.Kind == Halt && r.applies(rec):
			return
		case rec.Kind != Statement && rec.Kind != Query:
		case !r.applies(rec) || r.opt.Skip.Has(s.Path, rec.Line):
			r.res.Skipped++
		default:
			r.res.Failed++
		}
	}
}

// applies evaluates the record's skipif/onlyif conditions.
func (r *Runner) applies(rec *Record) bool {
	for _, c := range rec.Conditions {
		if r.isEngine(c.Engine) != c.OnlyIf {
			return false
		}
	}
	return true
}

func (r *Runner) isEngine(name string) bool {
	for _, e := range r.opt.Engines {
		if strings.EqualFold(e, name) {
			return true
		}
	}
	return false
}

// fail counts a failed record and reports it.
func (r *Runner) fail(f Failure) {
	r.res.Failed++
	r.note(f)
}

// note reports a failure without counting it (failRest does the counting).
func (r *Runner) note(f Failure) { r.res.Failures = append(r.res.Failures, f) }

func (r *Runner) checkStatement(rec *Record, res *result, err error) *Failure {
	if rec.ExpectError {
		return checkError(rec, err)
	}
	if err != nil {
		return &Failure{Message: "statement failed: " + err.Error()}
	}
	if rec.Count >= 0 && res.Affected != int64(rec.Count) {
		return &Failure{Message: fmt.Sprintf("statement count: expected %d rows, got %d", rec.Count, res.Affected)}
	}
	return nil
}

// errorHeader is the record's first line with a regex matching err exactly
// ("statement error ERROR: division by zero \(SQLSTATE 22012\)"), for
// rewriting; "" if err is not a server error.
func errorHeader(rec *Record, err error) string {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return ""
	}
	kw := "statement"
	if rec.Kind == Query {
		kw = "query"
	}
	return fmt.Sprintf(`%s error %s: %s \(SQLSTATE %s\)`, kw, pe.Severity, regexp.QuoteMeta(pe.Message), pe.Code)
}

// queryHeader is a query line with its type letters set from the result's
// column types: I for integers, R for floating point and numeric, T else;
// a '*' (a column not compared) is kept.
func queryHeader(line string, oids []uint32) string {
	f := strings.Fields(line)
	letters := make([]byte, len(oids))
	for i, oid := range oids {
		if len(f) > 1 && i < len(f[1]) && f[1][i] == '*' {
			letters[i] = '*'
			continue
		}
		switch oid {
		case 20, 21, 23: // int8, int2, int4
			letters[i] = 'I'
		case 700, 701, 1700: // float4, float8, numeric
			letters[i] = 'R'
		default:
			letters[i] = 'T'
		}
	}
	if len(f) < 2 {
		f = append(f, "")
	}
	f[1] = string(letters)
	return strings.Join(f, " ")
}

// checkError checks the error of a record that expects one.
func checkError(rec *Record, err error) *Failure {
	if err == nil {
		return &Failure{Message: "expected an error, got none"}
	}
	text := err.Error()
	if rec.ErrorRegex != "" {
		re, cerr := regexp.Compile(rec.ErrorRegex)
		if cerr != nil {
			return &Failure{Message: fmt.Sprintf("bad error regex %q: %v", rec.ErrorRegex, cerr)}
		}
		if !re.MatchString(text) {
			return &Failure{Message: "error does not match", Expected: []string{rec.ErrorRegex}, Actual: []string{text}}
		}
	}
	if rec.ErrorText != "" && !strings.Contains(fold(text), fold(rec.ErrorText)) {
		return &Failure{Message: "error text differs", Expected: []string{rec.ErrorText}, Actual: []string{text}}
	}
	return nil
}

// expected returns results rewritten by Options.Expect (results itself when
// unset).
func (r *Runner) expected(results []string) []string {
	if r.opt.Expect == nil {
		return results
	}
	out := make([]string, len(results))
	for i, l := range results {
		out[i] = r.opt.Expect(l)
	}
	return out
}

func (r *Runner) checkQuery(s *Script, idx int, rec *Record, res *result, err error, top bool) *Failure {
	if rec.ExpectError {
		return checkError(rec, err)
	}
	if err != nil {
		return &Failure{Message: "query failed: " + err.Error(), Expected: rec.Results}
	}
	if r.opt.Rewrite && top && res.Columns > 0 && !rec.ExpectError {
		r.edits[idx] = edit{header: queryHeader(s.Lines[rec.Line-1], res.OIDs)}
	}
	if rec.Types != "" && res.Columns != len(rec.Types) && len(res.Rows) > 0 && !r.opt.Rewrite {
		return &Failure{Message: fmt.Sprintf("expected %d columns, got %d", len(rec.Types), res.Columns)}
	}
	rows := sortRendered(rec.Sort, render(s.Dialect, rec.Types, res.Rows))
	vals := flatten(rows)
	if r.opt.Rewrite && rec.Sort == NoSort && len(res.Rows) > 1 && !strings.Contains(strings.ToUpper(rec.SQL), "ORDER BY") {
		fmt.Fprintf(r.opt.Out, "WARN %s:%d: %d rows in no particular order: add ORDER BY or rowsort\n", r.displayName(s.Path), rec.Line, len(res.Rows))
	}
	if r.opt.Rewrite && top {
		e := r.edits[idx]
		e.results = r.resultLines(s.Dialect, rows, vals)
		r.edits[idx] = e
	}
	if !r.opt.Rewrite {
		if msg := compare(s.Dialect, rec.Sort, r.expected(rec.Results), rows); msg != "" {
			return &Failure{Message: msg, Expected: rec.Results, Actual: r.resultLines(s.Dialect, rows, vals)}
		}
	}
	// Queries with the same label must agree (only results that passed
	// their own comparison are remembered, so one wrong answer fails once).
	if rec.Label != "" {
		h := hashLine(vals)
		if prev, ok := r.labels[rec.Label]; ok && prev != h {
			return &Failure{Message: "result differs from an earlier query labelled " + rec.Label,
				Expected: []string{prev}, Actual: []string{h}}
		}
		r.labels[rec.Label] = h
	}
	return nil
}

// resultLines renders results the way a script writes them, hashed when the
// hash threshold says so.
func (r *Runner) resultLines(d Dialect, rows [][]string, vals []string) []string {
	if r.threshold > 0 && len(vals) > r.threshold {
		return []string{hashLine(vals)}
	}
	if d == Classic {
		return append([]string{}, vals...)
	}
	return rowLines(rows)
}

func (r *Runner) let(rec *Record, res *result, err error) *Failure {
	if err != nil {
		return &Failure{Message: "let query failed: " + err.Error()}
	}
	names := strings.Split(rec.Arg, ",")
	if len(res.Rows) != 1 || len(res.Rows[0]) != len(names) {
		return &Failure{Message: fmt.Sprintf("let needs one row of %d values, got %d rows of %d", len(names), len(res.Rows), res.Columns)}
	}
	for i, name := range names {
		r.vars[name] = res.Rows[0][i].Text
	}
	return nil
}

func (r *Runner) include(ctx context.Context, s *Script, rec *Record) error {
	pattern := rec.Arg
	if !filepath.IsAbs(pattern) {
		pattern = filepath.Join(filepath.Dir(s.Path), pattern)
	}
	paths, err := filepath.Glob(pattern)
	if err == nil && len(paths) == 0 {
		err = fmt.Errorf("no file matches %q", rec.Arg)
	}
	if err != nil {
		r.fail(Failure{File: r.displayName(s.Path), Line: rec.Line, Message: "include: " + err.Error()})
		return nil
	}
	for _, p := range paths {
		inc, err := ParseFile(p)
		if err != nil {
			r.fail(Failure{File: r.displayName(s.Path), Line: rec.Line, Message: err.Error()})
			continue
		}
		if err := r.runScript(ctx, inc, false); err != nil {
			return err
		}
	}
	return nil
}

func (r *Runner) restart(ctx context.Context, name string, rec *Record) error {
	r.c.close()
	r.c = nil
	if err := r.db.Restart(ctx); err != nil {
		r.note(Failure{File: name, Line: rec.Line, Message: "restart: " + err.Error()})
		return errAbort
	}
	return r.reconnect(ctx, name, rec)
}

// reconnect replaces a lost connection; if that fails the file is abandoned
// (and its remaining records count as failed).
func (r *Runner) reconnect(ctx context.Context, name string, rec *Record) error {
	r.c.close()
	c, err := connect(ctx, r.db.ConnString(), r.opt.Extended)
	if err != nil {
		r.c = nil
		r.note(Failure{File: name, Line: rec.Line, Message: "reconnect: " + err.Error()})
		return errAbort
	}
	r.c = c
	return nil
}

var varRE = regexp.MustCompile(`\$\{(\w+)\}|\$(__\w+__)`)

// substitute replaces ${var} (let variables and environment variables) and
// $__TEST_DIR__, $__DATABASE__, $__NOW__ ("control substitution on"), and
// streamsql's $__SCRIPT_DIR__: the absolute directory of script (the file
// holding the record), so that a script can name the data files beside it.
func (r *Runner) substitute(sql, script string) string {
	return varRE.ReplaceAllStringFunc(sql, func(m string) string {
		name := strings.Trim(m, "${}")
		switch name {
		case "__TEST_DIR__":
			if r.tmpDir == "" {
				if d, err := os.MkdirTemp("", "slt-"); err == nil {
					r.tmpDir = d
				}
			}
			return r.tmpDir
		case "__DATABASE__":
			return r.dbName
		case "__NOW__":
			return fmt.Sprint(time.Now().UnixNano())
		case "__SCRIPT_DIR__":
			if dir, err := filepath.Abs(filepath.Dir(script)); err == nil {
				return dir
			}
			return filepath.Dir(script)
		}
		if v, ok := r.vars[name]; ok {
			return v
		}
		if v, ok := os.LookupEnv(name); ok {
			return v
		}
		return m
	})
}

// writeFailure prints a failure: where, the SQL, and the first lines of the
// expected and actual results.
func writeFailure(w io.Writer, f Failure) {
	if f.Line > 0 {
		fmt.Fprintf(w, "FAIL %s:%d: %s\n", f.File, f.Line, f.Message)
	} else {
		fmt.Fprintf(w, "FAIL %s: %s\n", f.File, f.Message)
	}
	if f.SQL != "" {
		fmt.Fprintf(w, "  sql:\n%s", indent(strings.Split(f.SQL, "\n"), 12))
	}
	if f.Expected != nil {
		fmt.Fprintf(w, "  expected:\n%s", indent(f.Expected, 8))
	}
	if f.Actual != nil {
		fmt.Fprintf(w, "  actual:\n%s", indent(f.Actual, 8))
	}
}

func indent(lines []string, max int) string {
	var b strings.Builder
	for i, l := range lines {
		if i == max {
			fmt.Fprintf(&b, "    ... (%d more lines)\n", len(lines)-max)
			break
		}
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}
