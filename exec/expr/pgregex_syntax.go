package expr

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/streamsql/streamsql/pgerr"
)

// Translation of PostgreSQL's advanced regular expressions (ARE, the
// flavour of ~, SIMILAR TO and the regexp_* functions) into the syntax
// shared by Go's regexp (RE2) and regexp2 (a backtracking engine with
// .NET's syntax). Every construct is written out explicitly so that both
// engines read it the same way, whatever their defaults: ^ and $ become
// \A and \z (or (?m:^) and (?m:$) when newline-sensitive), . becomes
// (?s:.) or [^\n], \d \s \w become PostgreSQL's classes, \b is a
// backspace, \B a backslash, \y \Y word boundaries, \m \M the start and
// end of a word. Back-references and look-around, which RE2 does not
// have, and \m \M mark the pattern as needing the backtracking engine.
// PostgreSQL's errors (2201B) are raised for what it refuses: unbalanced
// parentheses and brackets, a quantifier without an operand, repetition
// counts above 255, unknown escapes and back-references to groups not
// yet opened. Pure functions, safe for concurrent use.

// areOptions are the options in force for one pattern (PostgreSQL's flags
// and embedded options).
type areOptions struct {
	ci       bool // i: ignore case
	nlstop   bool // n, p: . and [^...] do not match a newline
	nlanch   bool // n, w: ^ and $ match at newlines
	expanded bool // x: white space and #-comments are ignored
	quote    bool // q: the pattern is a literal string
}

// flag applies one option letter (a flag argument's or an embedded
// option's); ok is false for a letter PostgreSQL does not know.
func (o *areOptions) flag(f rune) (ok bool, err error) {
	switch f {
	case 'i':
		o.ci = true
	case 'c':
		o.ci = false
	case 's':
		o.nlstop, o.nlanch = false, false
	case 'n', 'm':
		o.nlstop, o.nlanch = true, true
	case 'p':
		o.nlstop, o.nlanch = true, false
	case 'w':
		o.nlstop, o.nlanch = false, true
	case 'q':
		o.quote = true
	case 'x':
		o.expanded = true
	case 'e', 't':
	case 'b':
		return true, pgerr.New(pgerr.FeatureNotSupported, "regular expression option \"b\" (basic syntax) is not supported")
	default:
		return false, nil
	}
	return true, nil
}

func reError(msg string) error {
	return pgerr.New(pgerr.InvalidRegularExpression, "invalid regular expression: %s", msg)
}

// PostgreSQL's classes, written as the contents of a bracket expression.
const (
	wordClass  = `\p{L}\p{Nd}_`
	spaceClass = `\t\n\v\f\r `
	digitClass = `0-9`
)

var namedClasses = map[string]string{
	"alpha":  `\p{L}`,
	"alnum":  `\p{L}\p{Nd}`,
	"digit":  digitClass,
	"upper":  `\p{Lu}`,
	"lower":  `\p{Ll}`,
	"space":  spaceClass,
	"blank":  ` \t`,
	"punct":  `!-/:-@\[-` + "`" + `{-~`,
	"xdigit": `0-9A-Fa-f`,
	"cntrl":  `\x00-\x1f\x7f`,
	"print":  `\x20-\x7e` + "\u00a0-\U0010ffff",
	"graph":  `\x21-\x7e` + "\u00a1-\U0010ffff",
	"word":   wordClass,
}

// translator holds the state of one translation.
type translator struct {
	p       string
	i       int
	out     strings.Builder
	opts    areOptions
	ngroups int  // capture groups opened so far
	needBT  bool // back-references or look-around: regexp2 only
}

// translateARE translates pattern p under opts; it returns the pattern
// in the engines' syntax, its number of capture groups, and whether it
// needs the backtracking engine.
func translateARE(p string, opts areOptions) (string, int, bool, error) {
	t := &translator{p: p, opts: opts}
	if err := t.prefix(); err != nil {
		return "", 0, false, err
	}
	if t.opts.ci {
		t.out.WriteString("(?i)")
	}
	if t.opts.quote {
		for _, r := range t.p[t.i:] {
			t.literal(r)
		}
		return t.out.String(), 0, false, nil
	}
	if err := t.regex(false); err != nil {
		return "", 0, false, err
	}
	return t.out.String(), t.ngroups, t.needBT, nil
}

// prefix reads the director (***= or ***:) and the embedded options
// (?...) at the start of the pattern.
func (t *translator) prefix() error {
	switch {
	case strings.HasPrefix(t.p, "***="):
		t.i, t.opts.quote = 4, true
		return nil
	case strings.HasPrefix(t.p, "***:"):
		t.i = 4
	}
	if !strings.HasPrefix(t.p[t.i:], "(?") || t.opts.quote {
		return nil
	}
	j := t.i + 2
	for j < len(t.p) && t.p[j] != ')' {
		c := rune(t.p[j])
		if c == ':' || c == '=' || c == '!' || c == '<' || c == '#' {
			return nil // a group, not options
		}
		ok, err := t.opts.flag(c)
		if err != nil {
			return err
		}
		if !ok {
			return reError("invalid embedded option")
		}
		j++
	}
	if j >= len(t.p) {
		return reError("invalid embedded option")
	}
	t.i = j + 1
	return nil
}

func (t *translator) eof() bool { return t.i >= len(t.p) }

// skipSpace skips white space and #-comments in expanded mode.
func (t *translator) skipSpace() {
	if !t.opts.expanded {
		return
	}
	for t.i < len(t.p) {
		switch c := t.p[t.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			t.i++
		case c == '#':
			for t.i < len(t.p) && t.p[t.i] != '\n' {
				t.i++
			}
		default:
			return
		}
	}
}

// regex translates branches separated by | up to the end of the pattern
// or, inside a group, its closing parenthesis (consumed).
func (t *translator) regex(inGroup bool) error {
	for {
		t.skipSpace()
		if t.eof() {
			if inGroup {
				return reError("parentheses () not balanced")
			}
			return nil
		}
		switch t.p[t.i] {
		case '|':
			t.i++
			t.out.WriteByte('|')
			continue
		case ')':
			if !inGroup {
				return reError("parentheses () not balanced")
			}
			t.i++
			return nil
		}
		if err := t.piece(); err != nil {
			return err
		}
	}
}

// piece translates an atom and its quantifier.
func (t *translator) piece() error {
	constraint, err := t.atom()
	if err != nil {
		return err
	}
	t.skipSpace()
	q, ok, err := t.quantifier()
	if err != nil || !ok {
		return err
	}
	if constraint {
		return reError("quantifier operand invalid")
	}
	t.out.WriteString(q)
	t.skipSpace()
	if _, again, _ := t.peekQuantifier(); again {
		return reError("quantifier operand invalid")
	}
	return nil
}

// peekQuantifier reports whether a quantifier starts at the current
// position (and its length in bytes when it is a bound).
func (t *translator) peekQuantifier() (int, bool, error) {
	if t.eof() {
		return 0, false, nil
	}
	switch t.p[t.i] {
	case '*', '+', '?':
		return 1, true, nil
	case '{':
		if t.i+1 < len(t.p) && t.p[t.i+1] >= '0' && t.p[t.i+1] <= '9' {
			end := strings.IndexByte(t.p[t.i:], '}')
			if end < 0 {
				return 0, false, reError("braces {} not balanced")
			}
			return end + 1, true, nil
		}
	}
	return 0, false, nil
}

// quantifier reads *, +, ?, {m}, {m,}, {m,n} and a following ? (lazy).
func (t *translator) quantifier() (string, bool, error) {
	n, ok, err := t.peekQuantifier()
	if err != nil || !ok {
		return "", false, err
	}
	q := t.p[t.i : t.i+n]
	if q[0] == '{' {
		body := q[1 : len(q)-1]
		lo, hi, comma := body, "", false
		if k := strings.IndexByte(body, ','); k >= 0 {
			lo, hi, comma = body[:k], body[k+1:], true
		}
		m, err1 := strconv.Atoi(lo)
		mx := m
		var err2 error
		if comma && hi != "" {
			mx, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || m > 255 || mx > 255 || (comma && hi != "" && mx < m) {
			return "", false, reError("invalid repetition count(s)")
		}
	}
	t.i += n
	if !t.eof() && t.p[t.i] == '?' {
		t.i++
		q += "?"
	}
	return q, true, nil
}

// atom translates one atom; constraint is true for the zero-width ones,
// which take no quantifier.
func (t *translator) atom() (constraint bool, err error) {
	r, size := utf8.DecodeRuneInString(t.p[t.i:])
	t.i += size
	switch r {
	case '(':
		return t.group()
	case '[':
		return t.bracket()
	case '.':
		if t.opts.nlstop {
			t.out.WriteString(`[^\n]`)
		} else {
			t.out.WriteString(`(?s:.)`)
		}
	case '^':
		if t.opts.nlanch {
			t.out.WriteString(`(?m:^)`)
		} else {
			t.out.WriteString(`\A`)
		}
		return true, nil
	case '$':
		if t.opts.nlanch {
			t.out.WriteString(`(?m:$)`)
		} else {
			t.out.WriteString(`\z`)
		}
		return true, nil
	case '\\':
		return t.escape()
	case '*', '+', '?':
		return false, reError("quantifier operand invalid")
	case '{':
		t.i -= size
		if _, ok, _ := t.peekQuantifier(); ok {
			return false, reError("quantifier operand invalid")
		}
		t.i += size
		t.literal(r)
	default:
		t.literal(r)
	}
	return false, nil
}

// group translates what follows an opening parenthesis.
func (t *translator) group() (bool, error) {
	rest := t.p[t.i:]
	constraint := false
	switch {
	case strings.HasPrefix(rest, "?#"):
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return false, reError("parentheses () not balanced")
		}
		t.i += end + 1
		t.out.WriteString("(?:)")
		return true, nil
	case strings.HasPrefix(rest, "?:"):
		t.i += 2
		t.out.WriteString("(?:")
	case strings.HasPrefix(rest, "?="), strings.HasPrefix(rest, "?!"):
		t.out.WriteString("(" + rest[:2])
		t.i += 2
		t.needBT, constraint = true, true
	case strings.HasPrefix(rest, "?<="), strings.HasPrefix(rest, "?<!"):
		t.out.WriteString("(" + rest[:3])
		t.i += 3
		t.needBT, constraint = true, true
	case strings.HasPrefix(rest, "?"):
		return false, reError("quantifier operand invalid")
	default:
		t.ngroups++
		t.out.WriteByte('(')
	}
	if err := t.regex(true); err != nil {
		return false, err
	}
	t.out.WriteByte(')')
	return constraint, nil
}

// literal writes r as a literal character.
func (t *translator) literal(r rune) {
	switch {
	case r == 0:
		t.out.WriteString(`\x00`)
	case r < utf8.RuneSelf && strings.IndexByte(`\.+*?()|[]{}^$#- `, byte(r)) >= 0:
		if r == ' ' || r == '-' {
			t.out.WriteByte(byte(r))
			return
		}
		t.out.WriteByte('\\')
		t.out.WriteRune(r)
	default:
		t.out.WriteRune(r)
	}
}

// classLiteral writes r inside a bracket expression.
func (t *translator) classLiteral(sb *strings.Builder, r rune) {
	switch {
	case r == 0:
		sb.WriteString(`\x00`)
	case r < utf8.RuneSelf && strings.IndexByte(`\[]^-`, byte(r)) >= 0:
		sb.WriteByte('\\')
		sb.WriteRune(r)
	default:
		sb.WriteRune(r)
	}
}

// escape translates what follows a backslash outside brackets.
func (t *translator) escape() (bool, error) {
	if t.eof() {
		return false, reError("invalid escape \\ sequence")
	}
	c := t.p[t.i]
	switch c {
	case 'd':
		t.i++
		t.out.WriteString("[" + digitClass + "]")
		return false, nil
	case 'D':
		t.i++
		t.negClass(digitClass)
		return false, nil
	case 's':
		t.i++
		t.out.WriteString("[" + spaceClass + "]")
		return false, nil
	case 'S':
		t.i++
		t.negClass(spaceClass)
		return false, nil
	case 'w':
		t.i++
		t.out.WriteString("[" + wordClass + "]")
		return false, nil
	case 'W':
		t.i++
		t.negClass(wordClass)
		return false, nil
	case 'A':
		t.i++
		t.out.WriteString(`\A`)
		return true, nil
	case 'Z':
		t.i++
		t.out.WriteString(`\z`)
		return true, nil
	case 'y':
		t.i++
		t.out.WriteString(`\b`)
		return true, nil
	case 'Y':
		t.i++
		t.out.WriteString(`\B`)
		return true, nil
	case 'm':
		t.i++
		t.wordEdge(true)
		return true, nil
	case 'M':
		t.i++
		t.wordEdge(false)
		return true, nil
	}
	if c >= '1' && c <= '9' {
		return false, t.backref()
	}
	r, err := t.entry()
	if err != nil {
		return false, err
	}
	t.literal(r)
	return false, nil
}

// wordEdge writes \m (start of a word) or \M (its end).
func (t *translator) wordEdge(start bool) {
	t.needBT = true
	if start {
		t.out.WriteString(`\b(?=[` + wordClass + `])`)
	} else {
		t.out.WriteString(`\b(?<=[` + wordClass + `])`)
	}
}

func (t *translator) negClass(class string) {
	t.out.WriteString("[^" + class)
	if t.opts.nlstop {
		t.out.WriteString(`\n`)
	}
	t.out.WriteByte(']')
}

// backref translates \N as PostgreSQL's lexer reads it: one digit is a
// back-reference (to a group opened before it), more digits are one when
// that many groups have been opened and an octal character otherwise.
func (t *translator) backref() error {
	j := t.i
	for j < len(t.p) && t.p[j] >= '0' && t.p[j] <= '9' {
		j++
	}
	digits := t.p[t.i:j]
	n, err := strconv.Atoi(digits)
	if len(digits) == 1 || err == nil && n <= t.ngroups {
		if err != nil || n > t.ngroups {
			return reError("invalid backreference number")
		}
		t.i = j
		t.needBT = true
		t.out.WriteString(`(?:\` + digits + `)`)
		return nil
	}
	k := 0
	v := rune(0)
	for k < 3 && k < len(digits) && digits[k] <= '7' {
		v = v*8 + rune(digits[k]-'0')
		k++
	}
	if k == 0 {
		return reError("invalid escape \\ sequence")
	}
	t.i += k
	t.literal(v)
	return nil
}

// entry reads a character-entry escape (the backslash consumed) and
// returns its character; an escaped non-alphanumeric is itself.
func (t *translator) entry() (rune, error) {
	r, size := utf8.DecodeRuneInString(t.p[t.i:])
	t.i += size
	switch r {
	case 'a':
		return 7, nil
	case 'b':
		return 8, nil
	case 'B':
		return '\\', nil
	case 'e':
		return 27, nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'v':
		return '\v', nil
	case 'c':
		if t.eof() {
			return 0, reError("invalid escape \\ sequence")
		}
		c := t.p[t.i]
		t.i++
		return rune(c) & 0x1f, nil
	case 'u':
		return t.hex(4, 4)
	case 'U':
		return t.hex(8, 8)
	case 'x':
		return t.hex(1, 8)
	case '0':
		v := 0
		for k := 0; k < 2 && !t.eof() && t.p[t.i] >= '0' && t.p[t.i] <= '7'; k++ {
			v = v*8 + int(t.p[t.i]-'0')
			t.i++
		}
		return rune(v), nil
	}
	if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
		return 0, reError("invalid escape \\ sequence")
	}
	return r, nil
}

// hex reads min to max hexadecimal digits as a character.
func (t *translator) hex(min, max int) (rune, error) {
	j := t.i
	for j < len(t.p) && j-t.i < max && strings.IndexByte("0123456789abcdefABCDEF", t.p[j]) >= 0 {
		j++
	}
	if j-t.i < min {
		return 0, reError("invalid escape \\ sequence")
	}
	v, err := strconv.ParseUint(t.p[t.i:j], 16, 32)
	if err != nil || v > utf8.MaxRune {
		return 0, reError("invalid escape \\ sequence")
	}
	t.i = j
	return rune(v), nil
}

// bracket translates a bracket expression (the [ consumed).
func (t *translator) bracket() (bool, error) {
	rest := t.p[t.i:]
	switch {
	case strings.HasPrefix(rest, "[:<:]]"):
		t.i += 6
		t.wordEdge(true)
		return true, nil
	case strings.HasPrefix(rest, "[:>:]]"):
		t.i += 6
		t.wordEdge(false)
		return true, nil
	}
	var sb strings.Builder
	negate := false
	if !t.eof() && t.p[t.i] == '^' {
		negate = true
		t.i++
	}
	first := true
	for {
		if t.eof() {
			return false, reError("brackets [] not balanced")
		}
		if t.p[t.i] == ']' && !first {
			t.i++
			break
		}
		first = false
		lo, class, err := t.bracketItem()
		if err != nil {
			return false, err
		}
		if class != "" {
			sb.WriteString(class)
			continue
		}
		// a range lo-hi, unless the - ends the expression
		if t.i+1 < len(t.p) && t.p[t.i] == '-' && t.p[t.i+1] != ']' {
			t.i++
			hi, class, err := t.bracketItem()
			if err != nil {
				return false, err
			}
			if class != "" || hi < lo {
				return false, reError("invalid character range")
			}
			t.classLiteral(&sb, lo)
			sb.WriteByte('-')
			t.classLiteral(&sb, hi)
			continue
		}
		t.classLiteral(&sb, lo)
	}
	t.out.WriteByte('[')
	if negate {
		t.out.WriteByte('^')
		if t.opts.nlstop {
			sb.WriteString(`\n`)
		}
	}
	if sb.Len() == 0 {
		return false, reError("invalid character range")
	}
	t.out.WriteString(sb.String())
	t.out.WriteByte(']')
	return false, nil
}

// bracketItem reads one element of a bracket expression: a character
// (returned as lo) or a class (its contents returned as class).
func (t *translator) bracketItem() (lo rune, class string, err error) {
	rest := t.p[t.i:]
	if len(rest) >= 2 && rest[0] == '[' && strings.IndexByte(":.=", rest[1]) >= 0 {
		delim := rest[1]
		end := strings.Index(rest[2:], string(delim)+"]")
		if end < 0 {
			return 0, "", reError("brackets [] not balanced")
		}
		name := rest[2 : 2+end]
		t.i += end + 4
		switch delim {
		case ':':
			c, ok := namedClasses[name]
			if !ok {
				return 0, "", reError("invalid character class")
			}
			return 0, c, nil
		default:
			if r, size := utf8.DecodeRuneInString(name); size == len(name) && size > 0 {
				return r, "", nil
			}
			if r, ok := collatingNames[name]; ok {
				return r, "", nil
			}
			return 0, "", reError("invalid collating element")
		}
	}
	r, size := utf8.DecodeRuneInString(rest)
	t.i += size
	if r != '\\' {
		return r, "", nil
	}
	if t.eof() {
		return 0, "", reError("invalid escape \\ sequence")
	}
	switch t.p[t.i] {
	case 'd':
		t.i++
		return 0, digitClass, nil
	case 's':
		t.i++
		return 0, spaceClass, nil
	case 'w':
		t.i++
		return 0, wordClass, nil
	case 'D', 'S', 'W':
		c := t.p[t.i]
		t.i++
		return 0, `\` + string(c), nil
	}
	r, err = t.entry()
	return r, "", err
}

// collatingNames are the POSIX names of characters PostgreSQL accepts in
// [. .] (the common ones).
var collatingNames = map[string]rune{
	"NUL": 0, "tab": '\t', "newline": '\n', "carriage-return": '\r', "space": ' ',
	"hyphen": '-', "hyphen-minus": '-', "period": '.', "full-stop": '.', "slash": '/',
	"solidus": '/', "backslash": '\\', "reverse-solidus": '\\', "underscore": '_',
	"low-line": '_', "left-square-bracket": '[', "right-square-bracket": ']',
	"circumflex": '^', "circumflex-accent": '^', "comma": ',', "colon": ':',
	"semicolon": ';', "zero": '0', "one": '1', "two": '2', "three": '3', "four": '4',
	"five": '5', "six": '6', "seven": '7', "eight": '8', "nine": '9',
}
