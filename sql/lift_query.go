package sql

import (
	"strings"

	"github.com/streamsql/streamsql/pgerr"
)

// windowFunctions rewrites Flink's window table-function form
//
//	TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND))
//	      TUMBLE(      t,            ts , INTERVAL '10' SECOND)
//
// into the function-in-FROM form by blanking TABLE(...), TABLE and
// DESCRIPTOR(...): every remaining byte keeps its offset. PostgreSQL then
// parses a RangeFunction whose FuncCall has the relation as a ColumnRef
// first argument (then the time column as a ColumnRef); the binder resolves
// that ColumnRef as a relation. Named arguments (size => ...) are
// PostgreSQL's NamedArgExpr. In the arguments, Flink's plural interval units
// (INTERVAL '10' MINUTES) lose their S.
func (l *lifter) windowFunctions() error {
	for i := 0; i+1 < len(l.toks); i++ {
		switch l.word(i) {
		case "TUMBLE", "HOP", "SESSION", "CUMULATE":
		default:
			continue
		}
		if !l.punct(i+1, '(') {
			continue
		}
		c := l.match(i + 1)
		if c < 0 {
			return nil
		}
		flink := false
		for j := i + 2; j < c; j++ {
			switch {
			case l.is(j, "TABLE") && (l.punct(j-1, '(') || l.punct(j-1, ',') || l.op(j-1, "=>")):
				l.blank(j, j+1)
				flink = true
			case l.is(j, "DESCRIPTOR") && l.punct(j+1, '('):
				dc := l.match(j + 1)
				if dc < 0 {
					return nil
				}
				l.blank(j, j+2)
				l.blank(dc, dc+1)
				flink = true
				j = dc
			case l.is(j-2, "INTERVAL") && l.toks[j-1].kind == tokString && isPluralUnit(l.word(j)):
				// Flink's INTERVAL '10' MINUTES: PostgreSQL has only MINUTE.
				l.write(l.toks[j].end-1, " ")
			case l.punct(j, '('):
				j = l.match(j)
				if j < 0 {
					return nil
				}
			}
		}
		if flink && l.is(i-2, "TABLE") && l.punct(i-1, '(') {
			oc := l.match(i - 1)
			if oc != c+1 {
				return l.errAt(c + 1)
			}
			l.blank(i-2, i)
			l.blank(oc, oc+1)
		}
	}
	return nil
}

// isPluralUnit reports Flink's plural interval units (MINUTES, ...).
func isPluralUnit(w string) bool {
	return strings.HasSuffix(w, "S") && isIntervalUnit(w[:len(w)-1])
}

// emitStarts reports whether token i begins an EMIT clause.
func (l *lifter) emitStarts(i int) bool {
	if !l.is(i, "EMIT") {
		return false
	}
	switch l.word(i + 1) {
	case "CHANGES", "FINAL", "EVERY":
		return true
	case "ON":
		return l.is(i+2, "UPDATE") || l.is(i+2, "WINDOW")
	case "AFTER":
		return l.is(i+2, "WATERMARK")
	}
	return false
}

// emit lifts the EMIT clause that ends a query. The clause is followed by
// the end of the statement, a closing parenthesis or a sink's WITH (...).
func (l *lifter) emit() error {
	for i := range l.toks {
		if i == 0 || !l.emitStarts(i) { // a statement cannot start with EMIT
			continue
		}
		ext := l.extensions()
		if ext.Emit != nil {
			return l.errAt(i)
		}
		e := &Emit{Pos: l.toks[i].start}
		j, err := l.emitBody(e, i)
		if err != nil {
			return err
		}
		if j < len(l.toks) && !l.punct(j, ')') && !(l.is(j, "WITH") && l.punct(j+1, '(')) {
			return l.errAt(j)
		}
		ext.Emit = e
		l.blank(i, j)
	}
	return nil
}

// emitBody parses the clause starting at EMIT (index i) into e and returns
// the index after it.
func (l *lifter) emitBody(e *Emit, i int) (int, error) {
	words := func(from, to int) string {
		var w []string
		for k := from; k < to; k++ {
			w = append(w, l.word(k))
		}
		return strings.Join(w, " ")
	}
	var err error
	switch l.word(i + 1) {
	case "CHANGES":
		e.Mode, e.Written = EmitOnUpdate, "EMIT CHANGES"
		return i + 2, nil
	case "FINAL":
		e.Mode, e.Written = EmitOnWindowClose, "EMIT FINAL"
		return i + 2, nil
	case "EVERY":
		e.Mode, e.Written = EmitEvery, "EMIT EVERY"
		e.Every, i, err = l.interval(i + 2)
		return i, err
	case "AFTER":
		e.Mode, e.Written = EmitOnWindowClose, "EMIT AFTER WATERMARK"
		i += 3
		if l.is(i, "WITH") && !l.punct(i+1, '(') {
			if !l.is(i+1, "DELAY") {
				return i, l.errAt(i + 1)
			}
			e.Delay, i, err = l.interval(i + 2)
		}
		return i, err
	}
	if l.is(i+2, "UPDATE") {
		e.Mode, e.Written = EmitOnUpdate, "EMIT ON UPDATE"
		return i + 3, nil
	}
	if !l.is(i+3, "CLOSE") {
		return i, l.errAt(i + 3)
	}
	e.Mode, e.Written = EmitOnWindowClose, words(i, i+4)
	i += 4
	for {
		var opt *Interval
		switch {
		case l.is(i, "WITH") && l.punct(i+1, '('):
			return i, nil
		case l.is(i, "WITH"):
			if !l.is(i+1, "DELAY") {
				return i, l.errAt(i + 1)
			}
			opt = &e.Delay
		case l.is(i, "EARLY"):
			if !l.is(i+1, "EVERY") {
				return i, l.errAt(i + 1)
			}
			opt = &e.EarlyEvery
		case l.is(i, "ALLOW"):
			if !l.is(i+1, "LATENESS") {
				return i, l.errAt(i + 1)
			}
			opt = &e.AllowLateness
		case l.is(i, "LATE"):
			if !l.is(i+1, "ROWS") {
				return i, l.errAt(i + 1)
			}
			if !l.is(i+2, "INTO") {
				return i, l.errAt(i + 2)
			}
			if e.LateRowsInto != "" {
				return i, l.errAt(i)
			}
			name, next, ok := l.name(i + 3)
			if !ok {
				return i, l.errAt(i + 3)
			}
			e.LateRowsInto, e.LateRowsIntoPos = name, l.toks[i+3].start
			i = next
			continue
		default:
			return i, nil
		}
		if opt.Text != "" {
			return i, l.errAt(i)
		}
		*opt, i, err = l.interval(i + 2)
		if err != nil {
			return i, err
		}
	}
}

// subscribe lifts SUBSCRIBE [TO] name | (query) [WITH (...)] in the tokens
// [s, e), leaving "TABLE name" or "(query)" for PostgreSQL.
func (l *lifter) subscribe(s, e int, wrapper string) error {
	sub := &Subscribe{Wrapper: wrapper, Pos: l.toks[s].start, Snapshot: true}
	ext := l.extensions()
	ext.Kind, ext.Subscribe = KindSubscribe, sub
	i := s + 1
	if l.is(i, "TO") {
		i++
	}
	if l.punct(i, '(') {
		c := l.match(i)
		if c < 0 || c >= e {
			return l.errAt(e)
		}
		if c == i+1 {
			return l.errAt(c)
		}
		sub.Query, sub.QueryPos = l.text(i+1, c), l.toks[i+1].start
		l.blank(s, i)
		i = c + 1
	} else {
		name, next, ok := l.name(i)
		if !ok || next > e {
			return l.errAt(i)
		}
		sub.Target, sub.TargetPos = name, l.toks[i].start
		l.blank(s, i)
		l.write(l.toks[s].start, "TABLE")
		i = next
	}
	if i < e && l.is(i, "WITH") {
		opts, next, err := l.options(i)
		if err != nil {
			return err
		}
		if next > e {
			return l.errAt(e)
		}
		sub.Options = opts
		for _, o := range opts {
			var b *bool
			switch o.Key {
			case "snapshot":
				b = &sub.Snapshot
			case "progress":
				b = &sub.Progress
			default:
				continue
			}
			v, ok := parseBool(o.Value)
			if !ok {
				return pgerr.New(pgerr.SyntaxError, "%s requires a Boolean value", o.Key).
					WithPosition(CharPos(l.src, o.Pos))
			}
			*b = v
		}
		l.blank(i, next)
		i = next
	}
	if i < e {
		return l.errAt(i)
	}
	return nil
}

// parseBool accepts PostgreSQL's spellings of a boolean option value.
func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "on", "yes", "t", "y", "1":
		return true, true
	case "false", "off", "no", "f", "n", "0":
		return false, true
	}
	return false, false
}

// temporalJoins lifts "FOR SYSTEM_TIME AS OF expr" after a relation in FROM
// (a lookup join against a table's current rows; expr is PROCTIME() or a
// column reference).
func (l *lifter) temporalJoins() error {
	for i := 0; i < len(l.toks); i++ {
		if !l.is(i, "FOR") || !l.is(i+1, "SYSTEM_TIME") {
			continue
		}
		if i == 0 || l.toks[i-1].kind != tokWord && l.toks[i-1].kind != tokIdent {
			return pgerr.New(pgerr.SyntaxError, "FOR SYSTEM_TIME AS OF must follow the name of a table or materialized view").
				WithPosition(CharPos(l.src, l.toks[i].start))
		}
		if !l.is(i+2, "AS") {
			return l.errAt(i + 2)
		}
		if !l.is(i+3, "OF") {
			return l.errAt(i + 3)
		}
		_, end, ok := l.name(i + 4)
		if !ok {
			return l.errAt(i + 4)
		}
		if l.punct(end, '(') {
			c := l.match(end)
			if c < 0 {
				return l.errAt(len(l.toks))
			}
			end = c + 1
		}
		ext := l.extensions()
		ext.TemporalJoins = append(ext.TemporalJoins, TemporalJoin{
			Pos: l.toks[i].start, AsOf: l.text(i+4, end), AsOfPos: l.toks[i+4].start})
		l.blank(i, end)
		i = end - 1
	}
	return nil
}

// sessionFrames lifts RisingWave's "SESSION WITH GAP interval" window frame
// of OVER (... ORDER BY ts SESSION WITH GAP '10 minutes').
func (l *lifter) sessionFrames() error {
	for i := 0; i < len(l.toks); i++ {
		if !l.is(i, "SESSION") || !l.is(i+1, "WITH") || l.punct(i+2, '(') {
			continue
		}
		if !l.is(i+2, "GAP") {
			return l.errAt(i + 2)
		}
		gap, end, err := l.interval(i + 3)
		if err != nil {
			return err
		}
		if !l.punct(end, ')') {
			return l.errAt(end)
		}
		open := -1 // the '(' of the window specification the frame ends
		for j, depth := i-1, 0; j >= 0 && open < 0; j-- {
			switch {
			case l.punct(j, ')') || l.punct(j, ']'):
				depth++
			case (l.punct(j, '(') || l.punct(j, '[')) && depth > 0:
				depth--
			case l.punct(j, '('):
				open = l.toks[j].start
			}
		}
		if open < 0 {
			return l.errAt(i)
		}
		ext := l.extensions()
		ext.SessionFrames = append(ext.SessionFrames, SessionFrame{Pos: l.toks[i].start, Open: open, Gap: gap})
		l.blank(i, end)
		i = end
	}
	return nil
}
