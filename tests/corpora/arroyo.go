package corpora

import (
	"fmt"
	"regexp"
	"strings"
)

// Arroyo's SQL tests (../shared/corpora/arroyo: queries/*.sql over
// inputs/*.json, expected rows in golden_outputs/*.json) are translated
// into our dialect here, a query rewrite in the adapter (Arroyo's struct
// valued `window` column has no PostgreSQL counterpart):
//
//   - CREATE TABLE ... WITH (connector = 'single_file', type = 'source',
//     path = '$input_dir/x.json', format = 'json') becomes CREATE SOURCE with
//     the file connector. The event-time column (event_time_field, or the
//     WATERMARK FOR column) gets a watermark: WATERMARK FOR c AS expr as
//     written (without AS: c itself, Arroyo's tight watermark), and for
//     event_time_field alone Arroyo's default, c - 1 second. Every watermark
//     gets idle_timeout = '1s' so that the runner can close the last windows
//     after the finite file ends by advancing the manual clock (Arroyo
//     closes them at the end of its input). Types: BIGINT UNSIGNED is bigint,
//     DOUBLE is double precision.
//   - The sink table (type = 'sink') becomes the materialized view of the
//     INSERT's SELECT, EMIT ON WINDOW CLOSE when it has windows (Arroyo emits
//     a window when the watermark passes it). A CREATE VIEW becomes a WITH
//     query of the sink's query (our plain views cannot read a source).
//   - A window written as a GROUP BY expression, `TUMBLE(size) AS w`,
//     `HOP(slide, size) AS w`, `SESSION(gap) AS w` in a select list over
//     `FROM t [WHERE c] GROUP BY ...`, becomes our table function over t (a
//     WHERE moves into it as a subquery, so that it filters before windows
//     form): the item becomes `window_start AS w_start, window_end AS w_end`,
//     GROUP BY items naming w (or its position) become both, and references
//     elsewhere are rewritten: `x.w.start` is `x.w_start`, `a.w = b.w` is
//     both columns' equality, a bare `x.w` is `x.w_start, x.w_end`.
//   - A subquery in FROM without an alias gets one (PostgreSQL 15 wants it).

// ArroyoQuery is one Arroyo test translated into our statements.
type ArroyoQuery struct {
	Setup []string // CREATE SOURCE statements
	View  string   // the materialized view standing for the sink
	Query string   // its CREATE MATERIALIZED VIEW
	// Cols are the sink's declared columns (nil: the query's own names).
	Cols []string
	// Updating: the sink is Debezium JSON, a changelog whose final state is
	// compared; otherwise every golden line is a row.
	Updating bool
	// Windowed: the view has windows (closed after the input ends).
	Windowed bool
	// Fail is the header's --fail= (Arroyo refuses the query); PK its --pk=.
	Fail, PK string
}

// arroyoTable is a parsed CREATE TABLE.
type arroyoTable struct {
	name   string
	cols   []string // "name" type
	names  []string
	opts   map[string]string
	wmCol  string
	wmExpr string // "" with wmCol: tight
	hasWM  bool
}

var (
	arCreateTable = regexp.MustCompile(`(?is)^create\s+table\s+(\w+)\s*`)
	arCreateView  = regexp.MustCompile(`(?is)^create\s+view\s+(\w+)\s+as\s+(.*)$`)
	arInsert      = regexp.MustCompile(`(?is)^insert\s+into\s+(\w+)\s+(.*)$`)
	arWatermark   = regexp.MustCompile(`(?is)^watermark\s+for\s+(\w+)(?:\s+as\s+(.*))?$`)
	arOption      = regexp.MustCompile(`(?s)(\w+)\s*=\s*'([^']*)'`)
	arWindowCall  = regexp.MustCompile(`(?i)\b(tumble|hop|session)\s*\(`)
	arAlias       = regexp.MustCompile(`(?is)^\s+as\s+(\w+)`)
	arWord        = regexp.MustCompile(`(?i)\b(select|from|where|group\s+by|having|order\s+by|limit|union)\b`)
	arTableName   = regexp.MustCompile(`^\s+(\w+)`)
)

// TranslateArroyo translates one Arroyo test file; inputDir replaces
// $input_dir.
func TranslateArroyo(src, inputDir string) (*ArroyoQuery, error) {
	q := &ArroyoQuery{}
	var body strings.Builder
	for _, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "--fail="):
			q.Fail = strings.TrimPrefix(t, "--fail=")
		case strings.HasPrefix(t, "--pk="):
			q.PK = strings.TrimPrefix(t, "--pk=")
		case strings.HasPrefix(t, "--"):
		default:
			body.WriteString(line + "\n")
		}
	}
	tables := map[string]*arroyoTable{}
	windowedViews := map[string]bool{}
	var ctes []string // the CREATE VIEWs, as WITH queries of the sink's query
	for _, stmt := range strings.Split(body.String(), ";") {
		stmt = strings.TrimSpace(stmt)
		if stmt == "" {
			continue
		}
		switch {
		case arCreateTable.MatchString(stmt):
			tb, err := parseArroyoTable(stmt)
			if err != nil {
				return nil, err
			}
			tables[tb.name] = tb
			if tb.opts["type"] == "sink" {
				q.View, q.Cols = tb.name, tb.names
				q.Updating = tb.opts["format"] == "debezium_json"
				continue
			}
			q.Setup = append(q.Setup, tb.source(inputDir))
		case arCreateView.MatchString(stmt):
			m := arCreateView.FindStringSubmatch(stmt)
			sel, windowed, err := rewriteArroyoQuery(m[2], tables)
			if err != nil {
				return nil, fmt.Errorf("view %s: %w", m[1], err)
			}
			windowedViews[strings.ToLower(m[1])] = windowed
			if !strings.HasPrefix(sel, "(") {
				sel = "(" + sel + ")"
			}
			ctes = append(ctes, m[1]+" AS "+sel)
		case arInsert.MatchString(stmt):
			m := arInsert.FindStringSubmatch(stmt)
			sel, windowed, err := rewriteArroyoQuery(m[2], tables)
			if err != nil {
				return nil, fmt.Errorf("insert: %w", err)
			}
			for v, w := range windowedViews {
				if w && regexp.MustCompile(`(?i)\b`+v+`\b`).MatchString(sel) {
					windowed = true
				}
			}
			if len(ctes) > 0 {
				sel = "WITH " + strings.Join(ctes, ", ") + " " + sel
			}
			q.View, q.Windowed = m[1], windowed
			q.Query = "CREATE MATERIALIZED VIEW " + m[1] + " AS " + sel
			if windowed {
				q.Query += " EMIT ON WINDOW CLOSE"
			}
		default:
			return nil, fmt.Errorf("statement not understood: %.60s", stmt)
		}
	}
	if q.Query == "" {
		return nil, fmt.Errorf("no INSERT INTO the sink")
	}
	return q, nil
}

// parseArroyoTable parses CREATE TABLE name [(columns)] WITH (options).
func parseArroyoTable(stmt string) (*arroyoTable, error) {
	m := arCreateTable.FindStringSubmatchIndex(stmt)
	tb := &arroyoTable{name: strings.ToLower(stmt[m[2]:m[3]]), opts: map[string]string{}}
	rest := stmt[m[1]:]
	if strings.HasPrefix(rest, "(") {
		end := closing(rest, 0)
		if end < 0 {
			return nil, fmt.Errorf("table %s: unbalanced parentheses", tb.name)
		}
		for _, def := range splitTop(rest[1:end]) {
			if w := arWatermark.FindStringSubmatch(def); w != nil {
				tb.wmCol, tb.wmExpr, tb.hasWM = strings.ToLower(w[1]), strings.TrimSpace(w[2]), true
				continue
			}
			f := strings.Fields(def)
			if len(f) < 2 {
				return nil, fmt.Errorf("table %s: column %q", tb.name, def)
			}
			name := strings.ToLower(f[0])
			typ := strings.ToLower(strings.Join(f[1:], " "))
			typ = regexp.MustCompile(`\s*(not\s+null|primary\s+key)`).ReplaceAllString(typ, "")
			typ = strings.Replace(typ, " unsigned", "", 1)
			if typ == "double" {
				typ = "double precision"
			}
			tb.names = append(tb.names, name)
			tb.cols = append(tb.cols, fmt.Sprintf("%q %s", name, typ))
		}
		rest = strings.TrimSpace(rest[end+1:])
	}
	if !regexp.MustCompile(`(?i)^with\s*\(`).MatchString(rest) {
		return nil, fmt.Errorf("table %s: no WITH options", tb.name)
	}
	for _, o := range arOption.FindAllStringSubmatch(rest, -1) {
		tb.opts[strings.ToLower(o[1])] = o[2]
	}
	if f := tb.opts["event_time_field"]; f != "" && !tb.hasWM {
		tb.wmCol, tb.wmExpr, tb.hasWM = strings.ToLower(f), fmt.Sprintf("%q - INTERVAL '1 second'", strings.ToLower(f)), true
	}
	return tb, nil
}

// source is the table as our CREATE SOURCE.
func (tb *arroyoTable) source(inputDir string) string {
	defs := append([]string(nil), tb.cols...)
	if tb.hasWM {
		expr := tb.wmExpr
		if expr == "" {
			expr = fmt.Sprintf("%q", tb.wmCol)
		}
		defs = append(defs, fmt.Sprintf("WATERMARK FOR %q AS %s WITH (idle_timeout = '1s')", tb.wmCol, expr))
	}
	path := strings.ReplaceAll(tb.opts["path"], "$input_dir", inputDir)
	return fmt.Sprintf("CREATE SOURCE %s (%s) WITH (connector = 'file', path = '%s', format = '%s')",
		tb.name, strings.Join(defs, ", "), path, tb.opts["format"])
}

// rewriteArroyoQuery rewrites a query's windows and unaliased subqueries;
// windowed reports whether it had a window.
func rewriteArroyoQuery(sel string, tables map[string]*arroyoTable) (string, bool, error) {
	var aliases []string
	for {
		loc := arWindowCall.FindStringSubmatchIndex(sel)
		if loc == nil {
			break
		}
		var alias string
		var err error
		sel, alias, err = rewriteWindow(sel, loc, tables)
		if err != nil {
			return "", false, err
		}
		if !contains(aliases, alias) {
			aliases = append(aliases, alias)
		}
	}
	for _, a := range aliases {
		sel = rewriteWindowRefs(sel, a)
	}
	sel = strings.ReplaceAll(sel, "__TVF_", "")
	return aliasSubqueries(sel), len(aliases) > 0, nil
}

// rewriteWindow rewrites the window call at loc (a match of arWindowCall)
// and the SELECT it is an item of.
func rewriteWindow(sel string, loc []int, tables map[string]*arroyoTable) (string, string, error) {
	fn := strings.ToUpper(sel[loc[2]:loc[3]])
	open := loc[1] - 1
	end := closing(sel, open)
	if end < 0 {
		return "", "", fmt.Errorf("unbalanced %s(", fn)
	}
	args := strings.TrimSpace(sel[open+1 : end])
	am := arAlias.FindStringSubmatch(sel[end+1:])
	if am == nil {
		return "", "", fmt.Errorf("%s(...) without an alias", fn)
	}
	alias := strings.ToLower(am[1])
	depth := depths(sel)
	d := depth[loc[0]]
	// The enclosing SELECT, its FROM and GROUP BY, at the call's depth.
	selAt, fromAt, whereAt, groupAt, stop := -1, -1, -1, -1, len(sel)
	for _, w := range arWord.FindAllStringSubmatchIndex(sel, -1) {
		if depth[w[0]] != d || !sameLevel(depth, w[0], loc[0], d) {
			continue
		}
		word := strings.ToLower(strings.Join(strings.Fields(sel[w[2]:w[3]]), " "))
		switch {
		case w[0] < loc[0]:
			if word == "select" {
				selAt = w[0]
			}
		case word == "from" && fromAt < 0:
			fromAt = w[0]
		case word == "where" && fromAt >= 0 && whereAt < 0 && groupAt < 0:
			whereAt = w[0]
		case word == "group by" && fromAt >= 0 && groupAt < 0:
			groupAt = w[0]
		case groupAt >= 0 && w[0] < stop && (word == "having" || word == "order by" || word == "limit" || word == "union"):
			stop = w[0]
		}
	}
	for i := loc[0]; i < len(sel); i++ {
		if depth[i] < d {
			stop = min(stop, i)
			break
		}
	}
	if selAt < 0 || fromAt < 0 || groupAt < 0 || groupAt > stop {
		return "", "", fmt.Errorf("%s(...) AS %s is not an item of SELECT ... FROM t GROUP BY", fn, alias)
	}
	items := splitTop(sel[selAt+len("select") : fromAt])
	wi := -1
	for i, it := range items {
		if arWindowCall.MatchString(it) && strings.Contains(strings.ToLower(it), alias) {
			wi = i
		}
	}
	fromEnd := groupAt
	if whereAt >= 0 {
		fromEnd = whereAt
	}
	tm := arTableName.FindStringSubmatch(sel[fromAt+len("from") : fromEnd])
	if tm == nil {
		return "", "", fmt.Errorf("%s(...): FROM is not a table", fn)
	}
	tb := tables[strings.ToLower(tm[1])]
	if tb == nil || !tb.hasWM {
		return "", "", fmt.Errorf("%s(...) over %s, which has no event time", fn, tm[1])
	}
	rel := tb.name
	if whereAt >= 0 {
		rel = "(SELECT * FROM " + tb.name + " " + strings.TrimSpace(sel[whereAt:groupAt]) + ")"
	}
	pair := "window_start, window_end"
	var group []string
	for _, g := range splitTop(sel[groupAt+len("group by") : stop]) {
		g = strings.TrimSpace(g)
		var n int
		if _, err := fmt.Sscanf(g, "%d", &n); err == nil && fmt.Sprint(n) == g && n >= 1 && n <= len(items) {
			if n-1 == wi {
				group = append(group, pair)
				continue
			}
			g = stripAlias(items[n-1])
		}
		if strings.EqualFold(g, alias) {
			g = pair
		}
		group = append(group, g)
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = strings.TrimSpace(it)
		if i == wi {
			out[i] = fmt.Sprintf("window_start AS %s_start, window_end AS %s_end", alias, alias)
		}
	}
	var b strings.Builder
	b.WriteString(sel[:selAt])
	b.WriteString("SELECT " + strings.Join(out, ", "))
	b.WriteString(fmt.Sprintf(" FROM __TVF_%s(%s, %q, %s)", fn, rel, tb.wmCol, args))
	b.WriteString(" GROUP BY " + strings.Join(group, ", ") + " ")
	b.WriteString(sel[stop:])
	return b.String(), alias, nil
}

// rewriteWindowRefs rewrites the references to window alias a (see the
// package comment).
func rewriteWindowRefs(sel, a string) string {
	q := regexp.QuoteMeta(a)
	field := regexp.MustCompile(`(?i)\b(\w+\.)?` + q + `\.(start|end)\b`)
	sel = field.ReplaceAllString(sel, "${1}"+a+"_${2}")
	eq := regexp.MustCompile(`(?i)\b(\w+\.)?` + q + `\s*=\s*(\w+\.)?` + q + `\b`)
	sel = eq.ReplaceAllString(sel, "(${1}"+a+"_start = ${2}"+a+"_start AND ${1}"+a+"_end = ${2}"+a+"_end)")
	bare := regexp.MustCompile(`(?i)\b(\w+\.)?` + q + `\b(\s+as\s+` + q + `\b)?`)
	return bare.ReplaceAllString(sel, "${1}"+a+"_start, ${1}"+a+"_end")
}

// aliasSubqueries gives every subquery in FROM or JOIN without an alias one.
func aliasSubqueries(sel string) string {
	from := regexp.MustCompile(`(?i)\b(from|join)\s*\(`)
	next := regexp.MustCompile(`(?i)^\s*(as\s+)?(\w+)`)
	keywords := map[string]bool{"where": true, "group": true, "order": true, "limit": true, "having": true,
		"join": true, "inner": true, "left": true, "right": true, "full": true, "cross": true, "on": true,
		"union": true, "emit": true, "window": true}
	n := 0
	for pos := 0; ; {
		loc := from.FindStringIndex(sel[pos:])
		if loc == nil {
			return sel
		}
		open := pos + loc[1] - 1
		end := closing(sel, open)
		if end < 0 {
			return sel
		}
		pos = open + 1
		if m := next.FindStringSubmatch(sel[end+1:]); m != nil && (m[1] != "" || !keywords[strings.ToLower(m[2])]) {
			continue
		}
		n++
		sel = sel[:end+1] + fmt.Sprintf(" AS _sub%d", n) + sel[end+1:]
	}
}

// closing returns the index of the parenthesis closing the one at open
// (-1: none), skipping quoted strings.
func closing(s string, open int) int {
	d := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '\'':
			for i++; i < len(s) && s[i] != '\''; i++ {
			}
		case '(':
			d++
		case ')':
			if d--; d == 0 {
				return i
			}
		}
	}
	return -1
}

// depths returns the parenthesis depth at each byte of s.
func depths(s string) []int {
	out := make([]int, len(s)+1)
	d := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ')' {
			d--
		}
		out[i] = d
		if s[i] == '(' {
			d++
		}
	}
	out[len(s)] = d
	return out
}

// sameLevel reports whether nothing between i and j is shallower than d
// (they are in the same parenthesized query).
func sameLevel(depth []int, i, j, d int) bool {
	if i > j {
		i, j = j, i
	}
	for k := i; k <= j; k++ {
		if depth[k] < d {
			return false
		}
	}
	return true
}

// splitTop splits s at its commas outside parentheses and quotes.
func splitTop(s string) []string {
	var out []string
	d, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'':
			for i++; i < len(s) && s[i] != '\''; i++ {
			}
		case '(':
			d++
		case ')':
			d--
		case ',':
			if d == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

// stripAlias drops a select item's trailing "AS name".
func stripAlias(item string) string {
	if m := regexp.MustCompile(`(?is)^(.*)\s+as\s+\w+$`).FindStringSubmatch(strings.TrimSpace(item)); m != nil {
		return m[1]
	}
	return strings.TrimSpace(item)
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
