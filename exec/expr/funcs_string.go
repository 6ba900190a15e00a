package expr

import (
	"crypto/md5"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// String functions, with PostgreSQL's signatures and edge cases (character
// positions are 1-based and count characters, not bytes).

func runeLen(s string) int64 { return int64(utf8.RuneCountInString(s)) }

// substrRunes is substr(s, start, count) over characters; count < 0 means
// "to the end".
func substrRunes(s string, start, count int64, hasCount bool) (string, error) {
	if hasCount && count < 0 {
		return "", pgerr.New("22011", "negative substring length not allowed")
	}
	end := int64(1 << 62)
	if hasCount {
		end = start + count
		if end < start { // overflow
			end = 1 << 62
		}
	}
	if start < 1 {
		start = 1
	}
	if end <= start {
		return "", nil
	}
	var sb strings.Builder
	pos := int64(1)
	for _, r := range s {
		if pos >= end {
			break
		}
		if pos >= start {
			sb.WriteRune(r)
		}
		pos++
	}
	return sb.String(), nil
}

func trimChars(s, chars string, left, right bool) string {
	cut := func(r rune) bool { return strings.ContainsRune(chars, r) }
	if left {
		s = strings.TrimLeftFunc(s, cut)
	}
	if right {
		s = strings.TrimRightFunc(s, cut)
	}
	return s
}

func initcap(s string) string {
	var sb strings.Builder
	inWord := false
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if inWord {
				sb.WriteRune(unicode.ToLower(r))
			} else {
				sb.WriteRune(unicode.ToUpper(r))
			}
			inWord = true
		} else {
			sb.WriteRune(r)
			inWord = false
		}
	}
	return sb.String()
}

// pad is lpad/rpad: fill to n characters, truncating longer input.
func pad(s string, n int64, fill string, left bool) (string, error) {
	if n <= 0 {
		return "", nil
	}
	have := int64(utf8.RuneCountInString(s))
	// PostgreSQL sizes the result for the widest UTF-8 character first.
	if size := n; (fill != "" || have >= n) && size > (membudget.MaxAllocSize-4)/utf8.UTFMax {
		return "", membudget.LengthTooLarge()
	}
	if have >= n {
		i := 0
		for k := int64(0); k < n; k++ {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
		}
		return s[:i], nil
	}
	fr := []rune(fill)
	if len(fr) == 0 {
		return s, nil
	}
	need := int(n - have)
	var sb strings.Builder
	sb.Grow(len(s) + need*utf8.RuneLen(fr[0]))
	if !left {
		sb.WriteString(s)
	}
	for i := 0; i < need; i++ {
		sb.WriteRune(fr[i%len(fr)])
	}
	if left {
		sb.WriteString(s)
	}
	return sb.String(), nil
}

func leftRight(s string, n int64, left bool) string {
	rs := []rune(s)
	l := int64(len(rs))
	var k int64
	if n >= 0 {
		k = min(n, l)
	} else {
		k = max(l+n, 0)
	}
	if left {
		return string(rs[:k])
	}
	return string(rs[l-k:])
}

func splitPart(s, delim string, n int64) (types.Value, error) {
	if n == 0 {
		return nil, errFieldZero
	}
	return splitField(s, delim, n), nil
}

var errFieldZero = pgerr.New(pgerr.InvalidParameterValue, "field position must not be zero")

// splitField is field n (not 0) of s split at delim, counted from the end
// when negative, "" when there is no such field (a slice of s: nothing
// is allocated). An empty delimiter leaves s as one field.
func splitField(s, delim string, n int64) string {
	if s == "" {
		return ""
	}
	if delim == "" {
		if n == 1 || n == -1 {
			return s
		}
		return ""
	}
	if n < 0 {
		n += int64(strings.Count(s, delim)) + 2
		if n < 1 {
			return ""
		}
	}
	for ; n > 1; n-- {
		i := strings.Index(s, delim)
		if i < 0 {
			return ""
		}
		s = s[i+len(delim):]
	}
	if i := strings.Index(s, delim); i >= 0 {
		return s[:i]
	}
	return s
}

// sqlKeywords are the reserved words quote_ident must quote.
var sqlKeywords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric authorization binary both case cast check collate collation column concurrently constraint create cross current_catalog current_date current_role current_schema current_time current_timestamp current_user default deferrable desc distinct do else end except false fetch for foreign freeze from full grant group having ilike in initially inner intersect into is isnull join lateral leading left like limit localtime localtimestamp natural not notnull null offset on only or order outer overlaps placing primary references returning right select session_user similar some symmetric table tablesample then to trailing true union unique user using variadic verbose when where window with between bigint bit boolean char character coalesce dec decimal exists extract float greatest grouping inout int integer interval least national nchar none normalize nullif numeric out overlay position precision real row setof smallint substring time timestamp treat trim values varchar xmlattributes xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse xmlpi xmlroot xmlserialize xmltable`) {
		sqlKeywords[w] = true
	}
}

// quoteIdent quotes an identifier unless it is a plain lower-case name.
func quoteIdent(s string) string {
	plain := s != "" && !sqlKeywords[s]
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && (r >= '0' && r <= '9' || r == '$')) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// quoteLiteral quotes a string literal, using E” when it has backslashes.
func quoteLiteral(s string) string {
	q := "'" + strings.ReplaceAll(s, "'", "''") + "'"
	if strings.Contains(s, `\`) {
		return "E" + strings.ReplaceAll(q, `\`, `\\`)
	}
	return q
}

func toHex(x int64, bits uint) string {
	if x < 0 {
		return strconv.FormatUint(uint64(x)&(1<<bits-1), 16)
	}
	return strconv.FormatInt(x, 16)
}

func init() {
	TX, I4, I8, BA, BP, B := types.TText, types.TInt4, types.TInt8, types.TBytea, types.TBpchar, types.TBool
	s := func(a []types.Value, i int) string { return a[i].(string) }
	n := func(a []types.Value, i int) int64 { return a[i].(int64) }
	str1 := func(name string, f func(string) types.Value, ret types.T) *Func {
		return rowFn(name, ret, []types.T{TX}, func(_ *Context, a []types.Value) (types.Value, error) { return f(s(a, 0)), nil })
	}
	runeCount := func(x string) types.Value { return runeLen(x) }
	bpLen := func(_ *Context, a []types.Value) (types.Value, error) {
		return runeLen(strings.TrimRight(s(a, 0), " ")), nil
	}
	for _, name := range []string{"length", "char_length", "character_length"} {
		define(str1(name, runeCount, I4), rowFn(name, I4, []types.T{BP}, bpLen))
	}
	define(
		rowFn("length", I4, []types.T{BA}, func(_ *Context, a []types.Value) (types.Value, error) { return int64(len(a[0].([]byte))), nil }),
		str1("octet_length", func(x string) types.Value { return int64(len(x)) }, I4),
		rowFn("octet_length", I4, []types.T{BA}, func(_ *Context, a []types.Value) (types.Value, error) { return int64(len(a[0].([]byte))), nil }),
		str1("bit_length", func(x string) types.Value { return int64(8 * len(x)) }, I4),
		str1("lower", func(x string) types.Value { return strings.ToLower(x) }, TX),
		str1("upper", func(x string) types.Value { return strings.ToUpper(x) }, TX),
		str1("initcap", func(x string) types.Value { return initcap(x) }, TX),
		str1("reverse", func(x string) types.Value {
			r := []rune(x)
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			return string(r)
		}, TX),
		str1("md5", func(x string) types.Value { h := md5.Sum([]byte(x)); return hex.EncodeToString(h[:]) }, TX),
		str1("ascii", func(x string) types.Value {
			if x == "" {
				return int64(0)
			}
			r, _ := utf8.DecodeRuneInString(x)
			return int64(r)
		}, I4),
		str1("quote_ident", func(x string) types.Value { return quoteIdent(x) }, TX),
		str1("quote_literal", func(x string) types.Value { return quoteLiteral(x) }, TX),
		str1("btrim", func(x string) types.Value { return trimChars(x, " ", true, true) }, TX),
		str1("ltrim", func(x string) types.Value { return trimChars(x, " ", true, false) }, TX),
		str1("rtrim", func(x string) types.Value { return trimChars(x, " ", false, true) }, TX),
		rowFn("btrim", TX, []types.T{TX, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			return trimChars(s(a, 0), s(a, 1), true, true), nil
		}),
		rowFn("ltrim", TX, []types.T{TX, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			return trimChars(s(a, 0), s(a, 1), true, false), nil
		}),
		rowFn("rtrim", TX, []types.T{TX, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			return trimChars(s(a, 0), s(a, 1), false, true), nil
		}),
		rowFn("chr", TX, []types.T{I4}, func(_ *Context, a []types.Value) (types.Value, error) {
			c := n(a, 0)
			if c < 0 {
				return nil, pgerr.New(pgerr.InvalidParameterValue, "character number must be positive")
			}
			if c == 0 {
				return nil, pgerr.New(pgerr.ProgramLimitExceeded, "null character not permitted")
			}
			if c > unicode.MaxRune {
				return nil, pgerr.New(pgerr.ProgramLimitExceeded, "requested character too large for encoding: %d", c)
			}
			if c >= 0xD800 && c <= 0xDFFF {
				return nil, pgerr.New(pgerr.ProgramLimitExceeded, "requested character not valid for encoding: %d", c)
			}
			return string(rune(c)), nil
		}),
		rowFn("to_hex", TX, []types.T{I4}, func(_ *Context, a []types.Value) (types.Value, error) { return toHex(n(a, 0), 32), nil }),
		rowFn("to_hex", TX, []types.T{I8}, func(_ *Context, a []types.Value) (types.Value, error) { return toHex(n(a, 0), 64), nil }),
		rowFn("repeat", TX, []types.T{TX, I4}, func(_ *Context, a []types.Value) (types.Value, error) {
			k := n(a, 0+1)
			if k <= 0 {
				return "", nil
			}
			if int64(len(s(a, 0)))*k+4 > membudget.MaxAllocSize {
				return nil, pgerr.New(pgerr.ProgramLimitExceeded, "requested length too large")
			}
			return strings.Repeat(s(a, 0), int(k)), nil
		}),
		&Func{Name: "replace", Args: []types.T{TX, TX, TX}, Return: TX, Strict: true, Kernel: replaceKernel},
		&Func{Name: "split_part", Args: []types.T{TX, TX, I4}, Return: TX, Strict: true, Kernel: splitPartKernel},
		rowFn("left", TX, []types.T{TX, I4}, func(_ *Context, a []types.Value) (types.Value, error) { return leftRight(s(a, 0), n(a, 1), true), nil }),
		rowFn("right", TX, []types.T{TX, I4}, func(_ *Context, a []types.Value) (types.Value, error) { return leftRight(s(a, 0), n(a, 1), false), nil }),
		rowFn("lpad", TX, []types.T{TX, I4}, func(_ *Context, a []types.Value) (types.Value, error) { return pad(s(a, 0), n(a, 1), " ", true) }),
		rowFn("rpad", TX, []types.T{TX, I4}, func(_ *Context, a []types.Value) (types.Value, error) { return pad(s(a, 0), n(a, 1), " ", false) }),
		rowFn("lpad", TX, []types.T{TX, I4, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			return pad(s(a, 0), n(a, 1), s(a, 2), true)
		}),
		rowFn("rpad", TX, []types.T{TX, I4, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			return pad(s(a, 0), n(a, 1), s(a, 2), false)
		}),
		rowFn("translate", TX, []types.T{TX, TX, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			if int64(len(s(a, 0)))*utf8.UTFMax+4 > membudget.MaxAllocSize {
				return nil, membudget.LengthTooLarge()
			}
			from, to := []rune(s(a, 1)), []rune(s(a, 2))
			var sb strings.Builder
			for _, r := range s(a, 0) {
				i := strings.IndexRune(string(from), r)
				if i < 0 {
					sb.WriteRune(r)
					continue
				}
				k := len([]rune(string(from)[:i]))
				if k < len(to) {
					sb.WriteRune(to[k])
				}
			}
			return sb.String(), nil
		}),
		rowFn("starts_with", B, []types.T{TX, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			return strings.HasPrefix(s(a, 0), s(a, 1)), nil
		}),
	)
	for _, name := range []string{"strpos", "position"} {
		define(rowFn(name, I4, []types.T{TX, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			i := strings.Index(s(a, 0), s(a, 1))
			if i < 0 {
				return int64(0), nil
			}
			return runeLen(s(a, 0)[:i]) + 1, nil
		}))
	}
	for _, name := range []string{"substr", "substring"} {
		define(
			rowFn(name, TX, []types.T{TX, I4}, func(_ *Context, a []types.Value) (types.Value, error) {
				return substrRunes(s(a, 0), n(a, 1), 0, false)
			}),
			rowFn(name, TX, []types.T{TX, I4, I4}, func(_ *Context, a []types.Value) (types.Value, error) {
				return substrRunes(s(a, 0), n(a, 1), n(a, 2), true)
			}),
		)
	}
	// substring(text FROM pattern): the first match of a POSIX regex (its
	// first parenthesized group when there is one).
	define(rowFn("substring", TX, []types.T{TX, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
		re, err := compileRegex(s(a, 1), false)
		if err != nil {
			return nil, err
		}
		m, err := re.FindSubmatchIndex(s(a, 0))
		if m == nil || err != nil {
			return nil, err
		}
		if len(m) > 2 {
			if m[2] < 0 {
				return nil, nil
			}
			return s(a, 0)[m[2]:m[3]], nil
		}
		return s(a, 0)[m[0]:m[1]], nil
	}))
}

// replacedLength checks, before building it, that replace(s, from, to)
// stays under the largest value, as PostgreSQL's string buffer does.
func replacedLength(s, from, to string) error {
	if from == "" || len(to) <= len(from) {
		return nil
	}
	var have int64
	for {
		i := strings.Index(s, from)
		if i < 0 {
			return membudget.StringBuffer(have, int64(len(s)))
		}
		if err := membudget.StringBuffer(have, int64(i)); err != nil {
			return err
		}
		have += int64(i)
		if err := membudget.StringBuffer(have, int64(len(to))); err != nil {
			return err
		}
		have += int64(len(to))
		s = s[i+len(from):]
	}
}

// quote_literal(anyelement) and quote_nullable(anyelement): the value's
// text output quoted as a literal (quote_nullable: NULL is the word NULL).
// quote_literal(text) is registered above; other types come here.
func init() {
	quote := func(name string, nullable bool) {
		registerBuilder(name, func(args []Expr) (Expr, error) {
			if len(args) != 1 {
				return nil, noFunction(name, typesOf(args))
			}
			args, err := unknownToText(args)
			if err != nil {
				return nil, err
			}
			t := args[0].Type()
			return polyCall(name, args, types.TText, !nullable, func(ctx *Context, a []types.Value) (types.Value, error) {
				switch v := a[0].(type) {
				case nil:
					return "NULL", nil
				case bool: // through the cast to text, which spells the word
					return quoteLiteral(strconv.FormatBool(v)), nil
				}
				return quoteLiteral(textOf(ctx, a[0], t)), nil
			}), nil
		})
	}
	quote("quote_literal", false)
	quote("quote_nullable", true)
}
