package sql

import (
	"strings"

	"github.com/streamsql/streamsql/pgerr"
)

// lifter rewrites one statement's tokens. It owns buf (the rewritten copy of
// src, allocated on the first change) for the duration of liftExtensions.
type lifter struct {
	src  string
	buf  []byte
	toks []token
	dead []bool // tokens blanked out; dropped by compact
	next int    // offset of the ';' ending the statement, or -1
	ext  *Extensions
}

// statement lifts the streaming parts of one statement. standalone reports
// that nothing is left for PostgreSQL's parser.
func (l *lifter) statement() (ext *Extensions, standalone bool, err error) {
	l.dead = make([]bool, len(l.toks))
	if err := l.windowFunctions(); err != nil {
		return nil, false, err
	}
	l.compact()
	for _, lift := range []func() error{l.emit, l.temporalJoins, l.sessionFrames} {
		if err := lift(); err != nil {
			return nil, false, err
		}
		l.compact()
	}
	n := len(l.toks)
	switch {
	case n == 0:
	case l.is(0, "FLUSH"):
		if n > 1 {
			return nil, false, l.errAt(1)
		}
		l.ext = &Extensions{Kind: KindFlush}
		l.blank(0, n)
		return l.ext, true, nil
	case l.is(0, "ADVANCE") && l.is(1, "CLOCK"):
		if !l.is(2, "BY") {
			return nil, false, l.errAt(2)
		}
		iv, next, err := l.interval(3)
		if err != nil {
			return nil, false, err
		}
		if next < n {
			return nil, false, l.errAt(next)
		}
		l.ext = &Extensions{Kind: KindAdvanceClock, Advance: iv}
		l.blank(0, n)
		return l.ext, true, nil
	case l.is(0, "SHOW") && l.is(1, "CREATE") && (l.is(2, "TABLE") || l.is(2, "SOURCE") || l.is(2, "SINK") || l.is(2, "MATERIALIZED")):
		if err := l.showCreate(); err != nil {
			return nil, false, err
		}
		return l.ext, true, nil
	case l.is(0, "SHOW"):
		if show := l.showWhat(); show != "" {
			l.ext = &Extensions{Kind: KindShow, Show: show}
			l.blank(0, n)
			return l.ext, true, nil
		}
	case l.is(0, "EXPLAIN"):
		if ok, err := l.explainStream(); ok || err != nil {
			return l.ext, ok, err
		}
	case l.is(0, "ALTER") && l.is(1, "MATERIALIZED") && l.is(2, "VIEW") && l.is(n-1, "RESUME"):
		d := &Drop{}
		i := 3
		if l.is(i, "IF") && l.is(i+1, "EXISTS") {
			d.IfExists, i = true, i+2
		}
		name, next, ok := l.name(i)
		if !ok {
			return nil, false, l.errAt(i)
		}
		if next != n-1 {
			return nil, false, l.errAt(next)
		}
		d.Name, d.NamePos = name, l.toks[i].start
		d.Names, d.NamePositions = []string{name}, []int{d.NamePos}
		l.ext = &Extensions{Kind: KindResume, Drop: d}
		l.blank(0, n)
		return l.ext, true, nil
	case l.is(0, "DROP") && (l.is(1, "SOURCE") || l.is(1, "SINK")):
		if err := l.drop(); err != nil {
			return nil, false, err
		}
		return l.ext, true, nil
	case l.is(0, "ALTER") && l.is(1, "SOURCE"):
		l.alterSource()
	case l.is(0, "ALTER") && l.is(1, "SINK"):
		// A sink's name is part of its identity at the destination
		// (Kafka transactional ids and progress records, file names):
		// renaming it needs that identity kept apart first.
		return nil, false, pgerr.New(pgerr.FeatureNotSupported,
			"ALTER SINK is not supported: drop the sink and create it again").
			WithPosition(CharPos(l.src, l.toks[1].start))
	case l.is(0, "CREATE") && l.is(1, "SOURCE"):
		err = l.createSource()
	case l.is(0, "CREATE") && l.is(1, "SINK"):
		err = l.createSink()
	case l.is(0, "CREATE"):
		err = l.createTable()
	case l.is(0, "SUBSCRIBE"):
		err = l.subscribe(0, n, "")
	case l.is(0, "DECLARE"):
		if f := l.findTop(1, n, func(i int) bool { return l.is(i, "FOR") && l.is(i+1, "SUBSCRIBE") }); f >= 0 {
			err = l.subscribe(f+1, n, "DECLARE")
			if err == nil && n > 1 {
				l.ext.Subscribe.Cursor = normName(l.src, l.toks[1])
			}
		}
	case l.is(0, "COPY") && l.punct(1, '(') && l.is(2, "SUBSCRIBE"):
		if c := l.match(1); c > 0 {
			err = l.subscribe(2, c, "COPY")
		}
	}
	if err != nil {
		return nil, false, err
	}
	if l.ext != nil && l.ext.Subscribe != nil {
		l.ext.Subscribe.Emit = l.ext.Emit
		l.ext.Subscribe.TemporalJoins = l.ext.TemporalJoins
		l.ext.Subscribe.SessionFrames = l.ext.SessionFrames
	}
	return l.ext, false, nil
}

// extensions returns the statement's Extensions, creating it.
func (l *lifter) extensions() *Extensions {
	if l.ext == nil {
		l.ext = &Extensions{}
	}
	return l.ext
}

// word returns token i upper-cased if it is an unquoted word, else "".
func (l *lifter) word(i int) string {
	if i < 0 || i >= len(l.toks) || l.toks[i].kind != tokWord {
		return ""
	}
	return strings.ToUpper(l.src[l.toks[i].start:l.toks[i].end])
}

// is reports whether token i is the unquoted keyword w (upper-case).
func (l *lifter) is(i int, w string) bool { return l.word(i) == w }

// punct reports whether token i is the punctuation c.
func (l *lifter) punct(i int, c byte) bool {
	return i >= 0 && i < len(l.toks) && l.toks[i].kind == tokPunct && l.src[l.toks[i].start] == c
}

// op reports whether token i is exactly the operator s.
func (l *lifter) op(i int, s string) bool {
	return i >= 0 && i < len(l.toks) && l.toks[i].kind == tokOp && l.tok(i) == s
}

// tok returns the text of token i.
func (l *lifter) tok(i int) string { return l.src[l.toks[i].start:l.toks[i].end] }

// text returns the original text spanning tokens [i, j).
func (l *lifter) text(i, j int) string {
	if j <= i {
		return ""
	}
	return l.src[l.toks[i].start:l.toks[j-1].end]
}

// match returns the index of the bracket closing the one at i, or -1.
func (l *lifter) match(i int) int {
	depth := 0
	for j := i; j < len(l.toks); j++ {
		switch {
		case l.punct(j, '(') || l.punct(j, '['):
			depth++
		case l.punct(j, ')') || l.punct(j, ']'):
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// findTop returns the first index in [from, to) at bracket depth 0 (relative
// to from) for which pred holds, or -1.
func (l *lifter) findTop(from, to int, pred func(i int) bool) int {
	depth := 0
	for i := from; i < to; i++ {
		if depth == 0 && pred(i) {
			return i
		}
		switch {
		case l.punct(i, '(') || l.punct(i, '['):
			depth++
		case l.punct(i, ')') || l.punct(i, ']'):
			depth--
		}
	}
	return -1
}

// blank replaces the text of tokens [i, j) (and what lies between them) with
// spaces, keeping newlines, and marks the tokens dead.
func (l *lifter) blank(i, j int) {
	if j <= i {
		return
	}
	l.own()
	for k := l.toks[i].start; k < l.toks[j-1].end; k++ {
		if l.buf[k] != '\n' {
			l.buf[k] = ' '
		}
	}
	for k := i; k < j; k++ {
		l.dead[k] = true
	}
}

// write overwrites the rewritten text at byte offset off with s.
func (l *lifter) write(off int, s string) {
	l.own()
	copy(l.buf[off:], s)
}

func (l *lifter) own() {
	if l.buf == nil {
		l.buf = []byte(l.src)
	}
}

// compact drops dead tokens.
func (l *lifter) compact() {
	live := l.toks[:0:0]
	for i, t := range l.toks {
		if !l.dead[i] {
			live = append(live, t)
		}
	}
	l.toks = live
	l.dead = make([]bool, len(live))
}

// errAt is PostgreSQL's syntax error pointing at token i (or at the end of
// the statement when i is past its last token).
func (l *lifter) errAt(i int) error {
	if i >= 0 && i < len(l.toks) {
		return pgerr.New(pgerr.SyntaxError, "syntax error at or near \"%s\"", l.tok(i)).
			WithPosition(CharPos(l.src, l.toks[i].start))
	}
	if l.next >= 0 {
		return pgerr.New(pgerr.SyntaxError, "syntax error at or near \";\"").WithPosition(CharPos(l.src, l.next))
	}
	return pgerr.New(pgerr.SyntaxError, "syntax error at end of input").WithPosition(CharPos(l.src, len(l.src)))
}

// name parses a possibly qualified name at i; it returns the normalized name
// and the index after it, or ok == false.
func (l *lifter) name(i int) (name string, next int, ok bool) {
	var parts []string
	for {
		if i >= len(l.toks) || l.toks[i].kind != tokWord && l.toks[i].kind != tokIdent {
			return "", i, false
		}
		parts = append(parts, normName(l.src, l.toks[i]))
		i++
		if !l.punct(i, '.') {
			return strings.Join(parts, "."), i, true
		}
		i++
	}
}

// options parses "WITH ( key = value, ... )" with WITH at i; it returns the
// options and the index after the closing parenthesis.
func (l *lifter) options(i int) (Options, int, error) {
	if !l.is(i, "WITH") || !l.punct(i+1, '(') {
		return nil, i, l.errAt(i)
	}
	return l.optionList(i + 1)
}

// optionList parses "( key = value, ... )" with the parenthesis at i.
func (l *lifter) optionList(i int) (Options, int, error) {
	if !l.punct(i, '(') {
		return nil, i, l.errAt(i)
	}
	var opts Options
	i++
	for {
		if l.punct(i, ')') && len(opts) == 0 {
			return opts, i + 1, nil
		}
		start := i
		var key []string
		for {
			if i >= len(l.toks) || l.toks[i].kind != tokWord && l.toks[i].kind != tokIdent {
				return nil, i, l.errAt(i)
			}
			part := normName(l.src, l.toks[i])
			i++
			// Flink's keys have hyphens (sink.delivery-guarantee): a
			// word, "-" and a word written without spaces are one part.
			for l.op(i, "-") && i+1 < len(l.toks) && l.toks[i+1].kind == tokWord &&
				l.toks[i].start == l.toks[i-1].end && l.toks[i+1].start == l.toks[i].end {
				part += "-" + normName(l.src, l.toks[i+1])
				i += 2
			}
			key = append(key, part)
			if !l.punct(i, '.') {
				break
			}
			i++
		}
		if !l.op(i, "=") {
			return nil, i, l.errAt(i)
		}
		i++
		val, next, ok := l.value(i)
		if !ok {
			return nil, i, l.errAt(i)
		}
		opts = append(opts, Option{Key: strings.Join(key, "."), Value: val, Pos: l.toks[start].start})
		i = next
		switch {
		case l.punct(i, ','):
			i++
		case l.punct(i, ')'):
			return opts, i + 1, nil
		default:
			return nil, i, l.errAt(i)
		}
	}
}

// value parses an option value: a string, a (signed) number or a word.
func (l *lifter) value(i int) (string, int, bool) {
	if i >= len(l.toks) {
		return "", i, false
	}
	sign := ""
	if l.op(i, "-") || l.op(i, "+") {
		sign = l.tok(i)
		i++
		if i >= len(l.toks) || l.toks[i].kind != tokNumber {
			return "", i, false
		}
	}
	t := l.toks[i]
	switch t.kind {
	case tokString:
		return unquote(l.tok(i)), i + 1, true
	case tokNumber:
		return sign + l.tok(i), i + 1, true
	case tokWord, tokIdent:
		return normName(l.src, t), i + 1, true
	}
	return "", i, false
}

// unquote returns the value of a string token.
func unquote(s string) string {
	if s[0] == '$' {
		tag := s[:strings.IndexByte(s[1:], '$')+2]
		return s[len(tag) : len(s)-len(tag)]
	}
	if s[0] != '\'' { // E'..', B'..', ...
		s = s[1:]
	}
	return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
}

// interval parses an interval argument: INTERVAL 'text' [unit [TO unit]]
// or a bare string.
func (l *lifter) interval(i int) (Interval, int, error) {
	start := i
	if l.is(i, "INTERVAL") {
		i++
	}
	if i >= len(l.toks) || l.toks[i].kind != tokString {
		return Interval{}, i, l.errAt(i)
	}
	i++
	if l.is(start, "INTERVAL") && isIntervalUnit(l.word(i)) {
		i++
		if l.is(i, "TO") && isIntervalUnit(l.word(i+1)) {
			i += 2
		}
	}
	return Interval{Text: l.text(start, i), Pos: l.toks[start].start}, i, nil
}

func isIntervalUnit(w string) bool {
	switch w {
	case "YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND":
		return true
	}
	return false
}

// format parses "FORMAT f [ENCODE e [(key = value, ...)]]" at i: the
// options after ENCODE (RisingWave's ENCODE AVRO (schema.registry = '...'))
// are returned apart, for mergeEncodeOptions.
func (l *lifter) format(i int) (format, encode string, eopts Options, next int, err error) {
	if l.word(i+1) == "" {
		return "", "", nil, i, l.errAt(i + 1)
	}
	format, i = l.word(i+1), i+2
	if l.is(i, "ENCODE") {
		if l.word(i+1) == "" {
			return "", "", nil, i, l.errAt(i + 1)
		}
		encode, i = l.word(i+1), i+2
		if l.punct(i, '(') {
			if eopts, i, err = l.optionList(i); err != nil {
				return "", "", nil, i, err
			}
		}
	}
	return format, encode, eopts, i, nil
}

// mergeEncodeOptions adds the options of ENCODE e (...) to the WITH
// options: the connector reads them alike. A key given in both is a 42601
// error.
func (l *lifter) mergeEncodeOptions(with Options, eopts Options) (Options, error) {
	for _, o := range eopts {
		if _, dup := with.Get(o.Key); dup {
			return nil, pgerr.New(pgerr.SyntaxError, "option \"%s\" is given both in WITH and after ENCODE", o.Key).
				WithPosition(CharPos(l.src, o.Pos))
		}
		with = append(with, o)
	}
	return with, nil
}
