package sql

import (
	"strings"

	"github.com/streamsql/streamsql/pgerr"
)

// showCreate lifts SHOW CREATE {TABLE | SOURCE | SINK | MATERIALIZED VIEW} name.
func (l *lifter) showCreate() error {
	what, i := "CREATE "+l.word(2), 3
	if l.is(2, "MATERIALIZED") {
		if !l.is(3, "VIEW") {
			return l.errAt(3)
		}
		what, i = "CREATE MATERIALIZED VIEW", 4
	}
	name, next, ok := l.name(i)
	if !ok {
		return l.errAt(i)
	}
	if next != len(l.toks) {
		return l.errAt(next)
	}
	l.ext = &Extensions{Kind: KindShow, Show: what, ShowName: name, ShowNamePos: l.toks[i].start}
	l.blank(0, len(l.toks))
	return nil
}

// explainStream lifts EXPLAIN [ANALYZE] [(option [value], ...)]
// {MATERIALIZED VIEW | SINK} name. ok is false (and nothing lifted) for
// the other EXPLAIN statements, which PostgreSQL's grammar parses. The
// options are ANALYZE [boolean] and DURATION 'interval'; any other is an
// error naming it.
func (l *lifter) explainStream() (ok bool, err error) {
	n := len(l.toks)
	i := 1
	x := &ExplainStream{}
	if l.is(i, "ANALYZE") || l.is(i, "ANALYSE") {
		x.Analyze, i = true, i+1
	}
	opts := -1 // index of the option list's '('
	if l.punct(i, '(') {
		c := l.match(i)
		if c < 0 {
			return false, nil
		}
		opts, i = i, c+1
	}
	switch {
	case l.is(i, "MATERIALIZED") && l.is(i+1, "VIEW"):
		i += 2
	case l.is(i, "SINK"):
		x.Sink, i = true, i+1
	default:
		return false, nil // PostgreSQL's EXPLAIN
	}
	name, next, nameOK := l.name(i)
	if !nameOK {
		return true, l.errAt(i)
	}
	if next != n {
		return true, l.errAt(next)
	}
	x.Name, x.NamePos = name, l.toks[i].start
	if opts >= 0 {
		if err := l.explainOptions(opts+1, l.match(opts), x); err != nil {
			return true, err
		}
	}
	if !x.Analyze && x.Duration.Text != "" {
		return true, errOption("EXPLAIN option DURATION requires ANALYZE", x.Duration.Pos, l.src)
	}
	l.ext = &Extensions{Kind: KindExplainStream, ExplainStream: x}
	l.blank(0, n)
	return true, nil
}

// explainOptions parses the option list between tokens a and b (the
// parentheses excluded) into x.
func (l *lifter) explainOptions(a, b int, x *ExplainStream) error {
	i := a
	for i < b {
		switch {
		case l.is(i, "ANALYZE") || l.is(i, "ANALYSE"):
			x.Analyze, i = true, i+1
			switch {
			case l.is(i, "TRUE") || l.is(i, "ON") || l.tok(i) == "1":
				i++
			case l.is(i, "FALSE") || l.is(i, "OFF") || l.tok(i) == "0":
				x.Analyze, i = false, i+1
			}
		case l.is(i, "DURATION"):
			iv, next, err := l.interval(i + 1)
			if err != nil {
				return err
			}
			x.Duration, i = iv, next
		case i < len(l.toks) && l.toks[i].kind == tokWord:
			return errOption("unrecognized EXPLAIN option \""+strings.ToLower(l.tok(i))+"\" for a materialized view or sink (ANALYZE and DURATION are)", l.toks[i].start, l.src)
		default:
			return l.errAt(i)
		}
		if i < b && !l.punct(i, ',') {
			return l.errAt(i)
		}
		if i < b {
			i++
		}
	}
	return nil
}

// errOption is a syntax-level error about an EXPLAIN option (SQLSTATE
// 22023, as PostgreSQL reports an unknown EXPLAIN option) at byte offset pos.
func errOption(msg string, pos int, src string) error {
	return pgerr.New(pgerr.InvalidParameterValue, "%s", msg).WithPosition(CharPos(src, pos))
}
