package sql

import (
	"strings"

	"github.com/streamsql/streamsql/pgerr"
)

// showWhat recognizes SHOW SOURCES | SINKS | TABLES | MATERIALIZED VIEWS.
func (l *lifter) showWhat() string {
	switch {
	case len(l.toks) == 2 && (l.is(1, "SOURCES") || l.is(1, "SINKS") || l.is(1, "TABLES") || l.is(1, "NODES")):
		return l.word(1)
	case len(l.toks) == 2 && l.is(1, "JOBS"):
		return "JOBS"
	case len(l.toks) == 3 && l.is(1, "MATERIALIZED") && l.is(2, "VIEWS"):
		return "MATERIALIZED VIEWS"
	}
	return ""
}

// drop lifts DROP SOURCE | SINK [IF EXISTS] name [, ...] [CASCADE | RESTRICT].
func (l *lifter) drop() error {
	d := &Drop{}
	kind := KindDropSource
	if l.is(1, "SINK") {
		kind = KindDropSink
	}
	i := 2
	if l.is(i, "IF") && l.is(i+1, "EXISTS") {
		d.IfExists, i = true, i+2
	}
	for {
		name, next, ok := l.name(i)
		if !ok {
			return l.errAt(i)
		}
		if d.Name == "" {
			d.Name, d.NamePos = name, l.toks[i].start
		}
		d.Names, d.NamePositions, i = append(d.Names, name), append(d.NamePositions, l.toks[i].start), next
		if !l.punct(i, ',') {
			break
		}
		i++
	}
	if l.is(i, "CASCADE") || l.is(i, "RESTRICT") {
		d.Cascade, i = l.is(i, "CASCADE"), i+1
	}
	if i < len(l.toks) {
		return l.errAt(i)
	}
	l.ext = &Extensions{Kind: kind, Drop: d}
	l.blank(0, len(l.toks))
	return nil
}

// createSource turns CREATE SOURCE into CREATE TABLE for its column list
// ("()" when there is none) and lifts WITH, FORMAT, INCLUDE and APPEND ONLY.
func (l *lifter) createSource() error {
	src := &Source{}
	ext := l.extensions()
	ext.Kind, ext.Source = KindCreateSource, src
	i := 2
	if l.is(i, "IF") && l.is(i+1, "NOT") && l.is(i+2, "EXISTS") {
		src.IfNotExists, i = true, i+3
	}
	name, next, ok := l.name(i)
	if !ok {
		return l.errAt(i)
	}
	src.Name, src.NamePos, i = name, l.toks[i].start, next
	l.write(l.toks[1].start, "TABLE ") // SOURCE has 6 bytes, so has "TABLE "
	hasColumns := l.punct(i, '(')
	if hasColumns {
		c := l.match(i)
		if c < 0 {
			return nil // unbalanced: PostgreSQL reports it
		}
		if err := l.columnList(i, c); err != nil {
			return err
		}
		i = c + 1
	}
	withAt := -1
	var encOpts Options
	for i < len(l.toks) {
		switch {
		case l.is(i, "WITH") && withAt < 0:
			opts, next, err := l.options(i)
			if err != nil {
				return err
			}
			src.Options, withAt = opts, i
			l.blank(i, next)
			i = next
		case l.is(i, "FORMAT") && src.Format == "":
			f, e, eo, next, err := l.format(i)
			if err != nil {
				return err
			}
			src.Format, src.Encode, encOpts = f, e, eo
			l.blank(i, next)
			i = next
		case l.is(i, "APPEND") && l.is(i+1, "ONLY"):
			ext.AppendOnly = true
			l.blank(i, i+2)
			i += 2
		case l.is(i, "INCLUDE") && withAt < 0:
			next, err := l.include(i, src)
			if err != nil {
				return err
			}
			l.blank(i, next)
			i = next
		default:
			return l.errAt(i)
		}
	}
	if withAt < 0 {
		return l.errAt(i)
	}
	var err error
	if src.Options, err = l.mergeEncodeOptions(src.Options, encOpts); err != nil {
		return err
	}
	if !hasColumns {
		l.write(l.toks[withAt].start, "()") // WITH has room for an empty column list
	}
	return nil
}

// include lifts "INCLUDE what [AS name] {, what [AS name]}" at i (the
// INCLUDE) into src.Include and returns the index after it. what is any
// word: the connector says which it has (kafka: partition, offset,
// timestamp, key).
func (l *lifter) include(i int, src *Source) (int, error) {
	i++
	for {
		what := l.word(i)
		if what == "" {
			return i, l.errAt(i)
		}
		inc := Include{What: strings.ToLower(what), Pos: l.toks[i].start}
		i++
		if l.is(i, "AS") {
			if i+1 >= len(l.toks) || l.toks[i+1].kind != tokWord && l.toks[i+1].kind != tokIdent {
				return i, l.errAt(i + 1)
			}
			inc.Name, i = normName(l.src, l.toks[i+1]), i+2
		}
		src.Include = append(src.Include, inc)
		if !l.punct(i, ',') {
			return i, nil
		}
		i++
	}
}

// createSink lifts CREATE SINK name FROM view | FROM (query) | AS query
// WITH (...) [FORMAT ...], leaving the query (or "TABLE view") to PostgreSQL.
func (l *lifter) createSink() error {
	sk := &Sink{}
	ext := l.extensions()
	ext.Kind, ext.Sink = KindCreateSink, sk
	n := len(l.toks)
	i := 2
	if l.is(i, "IF") && l.is(i+1, "NOT") && l.is(i+2, "EXISTS") {
		sk.IfNotExists, i = true, i+3
	}
	name, next, ok := l.name(i)
	if !ok {
		return l.errAt(i)
	}
	sk.Name, sk.NamePos, i = name, l.toks[i].start, next
	switch {
	case l.is(i, "FROM") && l.punct(i+1, '('):
		c := l.match(i + 1)
		if c < 0 {
			return l.errAt(n)
		}
		sk.Query, sk.QueryPos = l.text(i+2, c), l.toks[i+2].start
		l.blank(0, i+1)
		i = c + 1
	case l.is(i, "FROM"):
		from, next, ok := l.name(i + 1)
		if !ok {
			return l.errAt(i + 1)
		}
		sk.From, sk.FromPos = from, l.toks[i+1].start
		l.blank(0, i+1)
		l.write(l.toks[0].start, "TABLE")
		i = next
	case l.is(i, "AS"):
		end := l.findTop(i+1, n, func(j int) bool {
			if !l.is(j, "WITH") || !l.punct(j+1, '(') {
				return false
			}
			c := l.match(j + 1)
			return c > 0 && (c+1 == n || l.is(c+1, "FORMAT"))
		})
		if end < 0 {
			end = n
		}
		if end == i+1 {
			return l.errAt(end)
		}
		sk.Query, sk.QueryPos = l.text(i+1, end), l.toks[i+1].start
		l.blank(0, i+1)
		i = end
	default:
		return l.errAt(i)
	}
	seenWith := false
	var encOpts Options
	for i < n {
		switch {
		case l.is(i, "WITH") && !seenWith:
			opts, next, err := l.options(i)
			if err != nil {
				return err
			}
			sk.Options, seenWith = opts, true
			l.blank(i, next)
			i = next
		case l.is(i, "FORMAT") && sk.Format == "":
			f, e, eo, next, err := l.format(i)
			if err != nil {
				return err
			}
			sk.Format, sk.Encode, encOpts = f, e, eo
			l.blank(i, next)
			i = next
		default:
			return l.errAt(i)
		}
	}
	var err error
	sk.Options, err = l.mergeEncodeOptions(sk.Options, encOpts)
	return err
}

// createTable lifts WATERMARK FOR, STRUCT<...> and APPEND ONLY from
// CREATE [TEMP|UNLOGGED] TABLE [IF NOT EXISTS] name (...).
func (l *lifter) createTable() error {
	i := 1
	for l.is(i, "TEMP") || l.is(i, "TEMPORARY") || l.is(i, "UNLOGGED") || l.is(i, "GLOBAL") || l.is(i, "LOCAL") {
		i++
	}
	if !l.is(i, "TABLE") {
		return nil
	}
	i++
	if l.is(i, "IF") && l.is(i+1, "NOT") && l.is(i+2, "EXISTS") {
		i += 3
	}
	_, i, ok := l.name(i)
	if !ok {
		return nil
	}
	// No column list: a CDC table whose columns are read from the
	// upstream catalog (CREATE TABLE t FROM src TABLE '...', or WITH
	// (connector = ...)); "()" is written where FROM or WITH was.
	noCols := false
	if !l.punct(i, '(') {
		switch {
		case l.is(i, "FROM"):
			noCols = true
		case l.is(i, "WITH") && l.punct(i+1, '('):
			opts, _, err := l.options(i)
			_, ok := opts.Get("connector")
			noCols = err == nil && ok // else PostgreSQL's storage parameters (CREATE TABLE t WITH (...) AS ...)
		}
		if !noCols {
			return nil
		}
	}
	c := i - 1
	if !noCols {
		if c = l.match(i); c < 0 {
			return nil
		}
		if err := l.columnList(i, c); err != nil {
			return err
		}
	}
	clauseAt := -1 // byte offset of the blanked WITH (connector ...) or FROM
	// A table that stores what a connector reads: CREATE TABLE t (...)
	// [APPEND ONLY] [INCLUDE ...] WITH (connector = ..., ...) [FORMAT ...].
	// A WITH list without connector is PostgreSQL's (storage parameters).
	var conn *Source
	var encOpts Options
	formatAt, includeAt := -1, -1
	for j := c + 1; j < len(l.toks); {
		switch {
		case l.is(j, "APPEND") && l.is(j+1, "ONLY"):
			l.extensions().AppendOnly = true
			l.blank(j, j+2)
			j += 2
		case l.is(j, "INCLUDE") && includeAt < 0:
			if conn == nil {
				conn = &Source{}
			}
			next, err := l.include(j, conn)
			if err != nil {
				return err
			}
			l.blank(j, next)
			includeAt, j = j, next
		case l.is(j, "WITH") && l.punct(j+1, '('):
			opts, next, err := l.options(j)
			if _, ok := opts.Get("connector"); err != nil || !ok {
				j++ // PostgreSQL's WITH (storage parameters)
				continue
			}
			if conn == nil {
				conn = &Source{}
			}
			conn.Options = opts
			if clauseAt < 0 {
				clauseAt = l.toks[j].start
			}
			l.blank(j, next)
			j = next
		case l.is(j, "FROM") && conn == nil:
			// FROM source TABLE 'schema.table' (RisingWave's shared CDC source).
			src, next, ok := l.name(j + 1)
			if !ok || !l.is(next, "TABLE") || next+1 >= len(l.toks) || l.toks[next+1].kind != tokString {
				return pgerr.New(pgerr.SyntaxError, "syntax error at or near \"FROM\"").
					WithHint("A table of a CDC source: CREATE TABLE t (...) FROM source TABLE 'schema.table'.").
					WithPosition(CharPos(l.src, l.toks[j].start))
			}
			conn = &Source{FromSource: src, FromTable: unquote(l.tok(next + 1)), FromPos: l.toks[j].start}
			if clauseAt < 0 {
				clauseAt = l.toks[j].start
			}
			l.blank(j, next+2)
			j = next + 2
		case l.is(j, "FORMAT") && formatAt < 0:
			f, e, eo, next, err := l.format(j)
			if err != nil {
				return err
			}
			if conn == nil {
				conn = &Source{}
			}
			conn.Format, conn.Encode, encOpts = f, e, eo
			l.blank(j, next)
			formatAt, j = j, next
		default:
			j++
		}
	}
	if conn != nil && conn.FromSource != "" && (conn.Options != nil || formatAt >= 0 || includeAt >= 0) {
		return pgerr.New(pgerr.SyntaxError, "a table FROM a source takes no WITH (connector = ...), FORMAT or INCLUDE").
			WithHint("The source's options apply.").WithPosition(CharPos(l.src, conn.FromPos))
	}
	if conn != nil && conn.Options == nil && conn.FromSource == "" {
		at := max(formatAt, includeAt)
		return pgerr.New(pgerr.SyntaxError, "%s needs WITH (connector = '...') on CREATE TABLE", l.word(at)).
			WithHint("A table that stores what a connector reads: CREATE TABLE t (...) WITH (connector = 'kafka', ...) FORMAT ....").
			WithPosition(CharPos(l.src, l.toks[at].start))
	}
	if noCols && (conn == nil || clauseAt < 0) {
		return nil // not ours: PostgreSQL reports the missing column list
	}
	if conn != nil {
		var err error
		if conn.Options, err = l.mergeEncodeOptions(conn.Options, encOpts); err != nil {
			return err
		}
		l.extensions().TableConnector = conn
	}
	if noCols {
		l.write(clauseAt, "()")
	}
	return nil
}

// columnList lifts the WATERMARK FOR item and STRUCT<...> types of the
// column list between the parentheses at open and close.
func (l *lifter) columnList(open, close int) error {
	l.structs(open+1, close) // first: the commas inside STRUCT<...> are dead after
	a := open + 1
	for a < close {
		b := l.findTop(a, close, func(j int) bool { return l.punct(j, ',') && !l.dead[j] })
		if b < 0 {
			b = close
		}
		if l.is(a, "WATERMARK") && l.is(a+1, "FOR") {
			if err := l.watermark(a, b, open, close); err != nil {
				return err
			}
		}
		a = b + 1
	}
	return nil
}

// watermark lifts "WATERMARK FOR col AS expr [WITH (...)]", the item [a, b)
// of the column list (open, close), with its separating comma.
func (l *lifter) watermark(a, b, open, close int) error {
	ext := l.extensions()
	if ext.Watermark != nil {
		return pgerr.New(pgerr.SyntaxError, "multiple WATERMARK FOR clauses are not allowed").
			WithPosition(CharPos(l.src, l.toks[a].start))
	}
	w := &Watermark{Pos: l.toks[a].start}
	if a+2 >= b || l.toks[a+2].kind != tokWord && l.toks[a+2].kind != tokIdent {
		return l.errAt(a + 2)
	}
	w.Column, w.ColumnPos = normName(l.src, l.toks[a+2]), l.toks[a+2].start
	if a+3 >= b || !l.is(a+3, "AS") {
		return l.errAt(a + 3)
	}
	end := l.findTop(a+4, b, func(j int) bool { return l.is(j, "WITH") && l.punct(j+1, '(') })
	if end < 0 {
		end = b
	}
	if end == a+4 {
		return l.errAt(end)
	}
	w.Expr, w.ExprPos = l.text(a+4, end), l.toks[a+4].start
	if end < b {
		opts, next, err := l.options(end)
		if err != nil {
			return err
		}
		if next != b {
			return l.errAt(next)
		}
		w.Options = opts
	}
	ext.Watermark = w
	switch {
	case a-1 > open: // "..., WATERMARK ..." : take the comma before
		l.blank(a-1, b)
	case b < close: // first item: take the comma after
		l.blank(a, b+1)
	default:
		l.blank(a, b)
	}
	return nil
}

// structs blanks the <...> of STRUCT<...> types in the tokens [a, b).
func (l *lifter) structs(a, b int) {
	for k := a; k+1 < b; k++ {
		if !l.is(k, "STRUCT") || l.toks[k+1].kind != tokOp || l.tok(k + 1)[0] != '<' {
			continue
		}
		depth := 0
		for m := k + 1; m < b; m++ {
			if l.toks[m].kind != tokOp {
				continue
			}
			for _, ch := range l.tok(m) {
				switch ch {
				case '<':
					depth++
				case '>':
					depth--
				}
			}
			if depth <= 0 {
				ext := l.extensions()
				ext.Structs = append(ext.Structs, StructType{
					Pos:       l.toks[k].start,
					Fields:    l.src[l.toks[k+1].start+1 : l.toks[m].end-1],
					FieldsPos: l.toks[k+1].start + 1,
				})
				l.blank(k+1, m+1)
				k = m
				break
			}
		}
	}
}

// alterSource lifts ALTER SOURCE: PostgreSQL parses it as ALTER TABLE
// ("SOURCE" becomes "TABLE ", of the same length) and the engine applies it
// to sources only (Kind == KindAlterSource, the statement in AlterSource).
func (l *lifter) alterSource() {
	l.write(l.toks[1].start, "TABLE ")
	l.extensions().Kind = KindAlterSource
}
