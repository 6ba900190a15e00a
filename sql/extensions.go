package sql

import (
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// Kind names a statement form that exists only in streamsql. Extensions.Kind
// is empty for ordinary PostgreSQL statements (which may still carry lifted
// clauses such as EMIT or WATERMARK FOR).
type Kind string

// The streamsql-only statement kinds.
const (
	KindCreateSource Kind = "CREATE SOURCE" // see Extensions.Source
	KindCreateSink   Kind = "CREATE SINK"   // see Extensions.Sink
	KindSubscribe    Kind = "SUBSCRIBE"     // see Extensions.Subscribe
	KindFlush        Kind = "FLUSH"
	KindShow         Kind = "SHOW"         // see Extensions.Show
	KindDropSource   Kind = "DROP SOURCE"  // see Extensions.Drop
	KindDropSink     Kind = "DROP SINK"    // see Extensions.Drop
	KindAlterSource  Kind = "ALTER SOURCE" // see Extensions.AlterSource
	// KindAdvanceClock is ADVANCE CLOCK BY interval (see Extensions.Advance):
	// moves a server's manual clock forward.
	KindAdvanceClock Kind = "ADVANCE CLOCK"
	// KindResume is ALTER MATERIALIZED VIEW [IF EXISTS] name RESUME (see
	// Extensions.Drop for the name): restarts a failed view.
	KindResume Kind = "ALTER MATERIALIZED VIEW RESUME"
	// KindExplainStream is EXPLAIN [ANALYZE] [(options)] MATERIALIZED VIEW
	// | SINK name (see Extensions.ExplainStream): a running view's plan.
	KindExplainStream Kind = "EXPLAIN MATERIALIZED VIEW"
)

// Extensions are the streaming clauses lifted from one statement. All byte
// offsets (…Pos fields) point into Statement.Source, the user's original
// text. An Extensions value is built once by Parse and then only read; it is
// safe to share between goroutines as long as nobody modifies it.
type Extensions struct {
	// Kind is set for statements that PostgreSQL's grammar has no form for.
	// Their Statement.AST is nil, so code that knows only PostgreSQL's
	// statements refuses them; what PostgreSQL could parse of them is in
	// Source.Stmt, Sink.Stmt or Subscribe.Stmt.
	Kind Kind

	// Watermark is the WATERMARK FOR item of CREATE TABLE / CREATE SOURCE.
	Watermark *Watermark
	// AppendOnly is set by CREATE TABLE ... APPEND ONLY.
	AppendOnly bool
	// Structs are the STRUCT<...> column types of CREATE TABLE / SOURCE.
	// PostgreSQL sees them as a type named "struct".
	Structs []StructType
	// Emit is the EMIT clause ending the statement's query, or nil.
	Emit *Emit
	// TemporalJoins are the FOR SYSTEM_TIME AS OF clauses, in text order.
	TemporalJoins []TemporalJoin
	// SessionFrames are the SESSION WITH GAP window frames, in text order.
	SessionFrames []SessionFrame

	// Source describes CREATE SOURCE (Kind == KindCreateSource).
	Source *Source
	// TableConnector is the connector part of CREATE TABLE ... [INCLUDE
	// ...] WITH (connector = ...) [FORMAT ...], a table that stores what
	// the connector reads (Stmt, Name and IfNotExists unused: the
	// statement is PostgreSQL's CREATE TABLE). Nil for other tables.
	TableConnector *Source
	// Sink describes CREATE SINK (Kind == KindCreateSink).
	Sink *Sink
	// Subscribe describes SUBSCRIBE (Kind == KindSubscribe).
	Subscribe *Subscribe
	// Show is what SHOW lists: "SOURCES", "SINKS", "TABLES",
	// "MATERIALIZED VIEWS", "JOBS" or "NODES", or "CREATE TABLE",
	// "CREATE SOURCE", "CREATE SINK", "CREATE MATERIALIZED VIEW" with the
	// object in ShowName (Kind == KindShow).
	Show string
	// ShowName is the (possibly qualified, normalized) name of SHOW
	// CREATE ..., at byte offset ShowNamePos.
	ShowName    string
	ShowNamePos int
	// ExplainStream describes EXPLAIN ... MATERIALIZED VIEW | SINK
	// (Kind == KindExplainStream).
	ExplainStream *ExplainStream
	// Drop describes DROP SOURCE / DROP SINK, and names the view of
	// ALTER MATERIALIZED VIEW ... RESUME (Cascade unused).
	Drop *Drop
	// Advance is the interval of ADVANCE CLOCK BY (Kind == KindAdvanceClock).
	Advance Interval
	// AlterSource is ALTER SOURCE parsed as ALTER TABLE (a RenameStmt or
	// an AlterTableStmt; Kind == KindAlterSource).
	AlterSource *pg.Node
}

// ExplainStream is EXPLAIN [ANALYZE] [(ANALYZE [bool], DURATION 'interval')]
// MATERIALIZED VIEW | SINK name.
type ExplainStream struct {
	Analyze bool
	// Duration is the DURATION option's interval (zero: not given): the
	// figures are then the difference over that long.
	Duration Interval
	Sink     bool // SINK rather than MATERIALIZED VIEW
	Name     string
	NamePos  int
}

// Option is one "key = value" of a WITH (...) list. Key is lower-cased (dots
// kept: "properties.bootstrap.server"); Value is unquoted (doubled quotes undone)
// and lower-cased when it was a bare word (true, on).
type Option struct {
	Key, Value string
	Pos        int // byte offset of the key
}

// Options is a WITH (...) list in text order.
type Options []Option

// Get returns the value of key (lower-case) and whether it was given.
func (o Options) Get(key string) (string, bool) {
	for _, op := range o {
		if op.Key == key {
			return op.Value, true
		}
	}
	return "", false
}

// Watermark is "WATERMARK FOR col AS expr [WITH (options)]". The binder
// parses "SELECT " + Expr and maps a location L of that parse back to
// ExprPos + L - len("SELECT ").
type Watermark struct {
	Column    string // normalized: lower-cased unless quoted
	ColumnPos int
	Expr      string // the expression as written
	ExprPos   int
	Options   Options // e.g. idle_timeout = '10s'
	Pos       int     // offset of the WATERMARK keyword
}

// StructType is a STRUCT<field type, ...> column type. Fields is the text
// between the angle brackets, as written.
type StructType struct {
	Pos       int // offset of the STRUCT keyword
	Fields    string
	FieldsPos int
}

// EmitMode is when a streaming query produces its results.
type EmitMode uint8

// The EMIT modes. EMIT CHANGES is EmitOnUpdate; EMIT FINAL and EMIT AFTER
// WATERMARK are EmitOnWindowClose.
const (
	EmitOnUpdate EmitMode = iota
	EmitOnWindowClose
	EmitEvery
)

// Interval is an interval argument as written, e.g. "INTERVAL '5' SECOND"
// or "'5 seconds'". The zero value means the option was not given.
type Interval struct {
	Text string
	Pos  int
}

// Emit is the EMIT clause of a query.
type Emit struct {
	Mode EmitMode
	// Written is the clause's leading words as written, upper-cased and
	// single-spaced: "EMIT ON UPDATE", "EMIT CHANGES", "EMIT FINAL", ...
	Written string
	Pos     int // offset of the EMIT keyword
	// Options of ON WINDOW CLOSE (Delay also for AFTER WATERMARK).
	Delay, EarlyEvery, AllowLateness Interval
	// LateRowsInto is the table of LATE ROWS INTO (normalized name).
	LateRowsInto    string
	LateRowsIntoPos int
	// Every is the interval of EMIT EVERY.
	Every Interval
}

// TemporalJoin is "FOR SYSTEM_TIME AS OF expr" after a relation in FROM:
// a lookup join against the relation's current rows. The relation is the
// RangeVar of PostgreSQL's tree whose location precedes Pos.
type TemporalJoin struct {
	Pos     int    // offset of FOR
	AsOf    string // the expression as written, e.g. "PROCTIME()"
	AsOfPos int
}

// SessionFrame is the window frame "SESSION WITH GAP interval" of an OVER
// clause; PostgreSQL sees the OVER clause without it. The window is the
// WindowDef of PostgreSQL's tree whose span contains Pos.
type SessionFrame struct {
	Pos int // offset of SESSION
	// Open is the offset of the '(' that opens the window specification
	// the frame ends: PostgreSQL's WindowDef.Location (SessionWindows).
	Open int
	Gap  Interval
}

// Source is CREATE SOURCE [IF NOT EXISTS] name [(columns)] WITH (...)
// [FORMAT f [ENCODE e]].
type Source struct {
	// Stmt is PostgreSQL's CreateStmt for "CREATE TABLE name (columns)": the
	// columns and their types, parsed by the real grammar.
	Stmt        *pg.CreateStmt
	Name        string
	NamePos     int
	IfNotExists bool
	Options     Options
	Format      string // upper-cased: JSON, CSV, PLAIN; "" if not given
	Encode      string // upper-cased ENCODE of FORMAT PLAIN ENCODE JSON
	// Include are the INCLUDE items (connector metadata as columns), in
	// the order written.
	Include []Include
	// FromSource and FromTable are CREATE TABLE t (...) FROM source TABLE
	// 'schema.table' (a table of a shared CDC source); FromPos is the
	// offset of FROM. Options is nil then.
	FromSource, FromTable string
	FromPos               int
}

// Include is one item of CREATE SOURCE's INCLUDE clause: "INCLUDE what [AS
// name]".
type Include struct {
	What string // lower-cased: partition, offset, timestamp, key, ...
	Name string // the column's normalized name; "" for the default
	Pos  int    // byte offset of what in the statement
}

// Sink is CREATE SINK [IF NOT EXISTS] name FROM view | FROM (query) | AS
// query WITH (...) [FORMAT f [ENCODE e]].
type Sink struct {
	// Stmt is the query's parse tree (a SelectStmt node); for "FROM view" it
	// is that of "TABLE view", whose RangeVar points at the view's name.
	Stmt        *pg.Node
	Name        string
	NamePos     int
	IfNotExists bool
	From        string // the view's normalized name, or "" for a query
	FromPos     int
	Query       string // the query as written (without EMIT), or "" for FROM view
	QueryPos    int
	Options     Options
	Format      string
	Encode      string
}

// Subscribe is SUBSCRIBE [TO] name | (query) [WITH (snapshot = b,
// progress = b)], possibly wrapped in DECLARE c CURSOR FOR ... or
// COPY (...) TO STDOUT.
type Subscribe struct {
	// Stmt is the query's parse tree (a SelectStmt node); for the name form
	// it is that of "TABLE name", whose RangeVar points at the name.
	Stmt *pg.Node
	// Outer is the DeclareCursorStmt or CopyStmt node around it, or nil.
	Outer     *pg.Node
	Target    string // the relation's normalized name, or "" for a query
	TargetPos int
	Query     string // the query as written (without EMIT), or ""
	QueryPos  int
	Options   Options
	Snapshot  bool   // default true
	Progress  bool   // default false
	Wrapper   string // "", "DECLARE" or "COPY"
	Cursor    string // the cursor name of DECLARE
	Pos       int    // offset of the SUBSCRIBE keyword
	// Emit is the EMIT clause ending the query (Extensions.Emit), or nil.
	Emit *Emit
	// TemporalJoins are the query's FOR SYSTEM_TIME AS OF clauses
	// (Extensions.TemporalJoins).
	TemporalJoins []TemporalJoin
	// SessionFrames are the query's SESSION WITH GAP window frames
	// (Extensions.SessionFrames).
	SessionFrames []SessionFrame
}

// Drop is DROP SOURCE | SINK [IF EXISTS] name [, ...] [CASCADE | RESTRICT].
type Drop struct {
	Name    string // the first name
	NamePos int
	// Names are every name in order (Names[0] == Name), NamePositions
	// their offsets.
	Names         []string
	NamePositions []int
	IfExists      bool
	Cascade       bool
}

// adopt moves what PostgreSQL parsed of a streamsql-only statement into e.
func (e *Extensions) adopt(ast *pg.Node) {
	switch {
	case e.Source != nil:
		e.Source.Stmt = ast.GetCreateStmt()
	case e.Kind == KindAlterSource:
		e.AlterSource = ast
	case e.Sink != nil:
		e.Sink.Stmt = ast
	case e.Subscribe != nil:
		switch {
		case ast.GetDeclareCursorStmt() != nil:
			e.Subscribe.Outer, e.Subscribe.Stmt = ast, ast.GetDeclareCursorStmt().Query
		case ast.GetCopyStmt() != nil:
			e.Subscribe.Outer, e.Subscribe.Stmt = ast, ast.GetCopyStmt().Query
		default:
			e.Subscribe.Stmt = ast
		}
	}
}

// stmtExt is what was lifted from the statement starting at start.
type stmtExt struct {
	start, end int
	ext        *Extensions
	standalone bool // no PostgreSQL statement is left of it
}

// lifted is the extension layer's output for the whole text.
type lifted struct {
	stmts []stmtExt
}

// liftExtensions blanks out the streaming clauses of text (same byte length,
// so locations stay valid), rewrites streamsql-only statements into their
// parseable PostgreSQL part, and returns what it lifted.
func liftExtensions(text string) (string, *lifted, error) {
	toks := tokenize(text)
	out := &lifted{}
	var buf []byte // copied on first change
	start := 0
	for i := 0; i <= len(toks); i++ {
		if i < len(toks) && !(toks[i].kind == tokPunct && text[toks[i].start] == ';') {
			continue
		}
		if i > start {
			l := &lifter{src: text, buf: buf, toks: toks[start:i], next: -1}
			if i < len(toks) {
				l.next = toks[i].start
			}
			ext, standalone, err := l.statement()
			if err != nil {
				return "", nil, err
			}
			buf = l.buf
			if ext != nil {
				out.stmts = append(out.stmts, stmtExt{
					start: toks[start].start, end: toks[i-1].end, ext: ext, standalone: standalone})
			}
		}
		start = i + 1
	}
	if buf == nil {
		return text, out, nil
	}
	return string(buf), out, nil
}

// within returns the extensions of the statement that starts in [start, end),
// or nil.
func (l *lifted) within(start, end int) *Extensions {
	for _, s := range l.stmts {
		if !s.standalone && s.start >= start && s.start < end {
			return s.ext
		}
	}
	return nil
}

// addStandalone merges extension-only statements into stmts by offset.
func (l *lifted) addStandalone(text string, stmts []Statement) []Statement {
	added := false
	for _, s := range l.stmts {
		if s.standalone {
			stmts = append(stmts, Statement{Source: text, Offset: s.start, Len: s.end - s.start, Ext: s.ext})
			added = true
		}
	}
	if added {
		sort.SliceStable(stmts, func(i, j int) bool { return stmts[i].Offset < stmts[j].Offset })
	}
	return stmts
}

// normName normalizes an identifier token: unquoted words are lower-cased,
// quoted ones lose their quotes.
func normName(src string, t token) string {
	s := src[t.start:t.end]
	if t.kind == tokIdent {
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
	}
	return strings.ToLower(s)
}
