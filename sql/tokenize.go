package sql

import "strings"

// tokKind classifies a token of the extension layer's scanner.
type tokKind uint8

const (
	tokWord   tokKind = iota // unquoted identifier or keyword
	tokIdent                 // "double-quoted identifier"
	tokString                // 'string', E'..', B'..', X'..', N'..', $tag$..$tag$
	tokNumber                // 12, 1.5, 1e3
	tokOp                    // a run of operator characters: =, =>, <, >>, ::
	tokPunct                 // one of ( ) [ ] , . ;
)

// token is one lexical token: its kind and its byte span in the text.
type token struct {
	kind       tokKind
	start, end int
}

// scanner state: the whole text and where tokens go.
type scanner struct {
	src  string
	emit func(token)
}

// tokenize splits text into tokens, skipping whitespace and comments (-- and
// nested /* */). It understands the quoting rules of PostgreSQL well enough
// that keywords inside strings, quoted identifiers and comments are never
// seen as tokens. An unterminated quote or comment ends the token list (the
// PostgreSQL parser reports it afterwards).
func tokenize(src string) []token {
	var toks []token
	scanTokens(src, func(t token) { toks = append(toks, t) })
	return toks
}

// scanTokens is tokenize calling emit for each token instead of keeping
// them; it returns the offset where it stopped (len(src), or where an
// unterminated quote or comment starts).
func scanTokens(src string, emit func(token)) int {
	return scanTokensMode(src, false, emit)
}

// scanTokensMode is scanTokens; with escapeStrings a backslash escapes the
// next character in '...' and N'...' too (standard_conforming_strings =
// off, nonstandard.go).
func scanTokensMode(src string, escapeStrings bool, emit func(token)) int {
	s := &scanner{src: src, emit: emit}
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := skipBlockComment(src, i)
			if end < 0 {
				return i
			}
			i = end
		case c == '\'':
			end := skipString(src, i+1, escapeStrings)
			if end < 0 {
				return i
			}
			s.add(tokString, i, end)
			i = end
		case (c == 'e' || c == 'E') && i+1 < len(src) && src[i+1] == '\'':
			end := skipString(src, i+2, true)
			if end < 0 {
				return i
			}
			s.add(tokString, i, end)
			i = end
		case strings.IndexByte("bBxXnN", c) >= 0 && i+1 < len(src) && src[i+1] == '\'':
			end := skipString(src, i+2, escapeStrings && (c == 'n' || c == 'N'))
			if end < 0 {
				return i
			}
			s.add(tokString, i, end)
			i = end
		case c == '"':
			end := skipQuotedIdent(src, i+1)
			if end < 0 {
				return i
			}
			s.add(tokIdent, i, end)
			i = end
		case c == '$' && dollarTag(src, i) > 0:
			tag := src[i:dollarTag(src, i)]
			j := strings.Index(src[i+len(tag):], tag)
			if j < 0 {
				return i
			}
			end := i + len(tag) + j + len(tag)
			s.add(tokString, i, end)
			i = end
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && isIdentCont(src[j]) {
				j++
			}
			s.add(tokWord, i, j)
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := scanNumber(src, i)
			s.add(tokNumber, i, j)
			i = j
		case strings.IndexByte("()[],.;", c) >= 0:
			s.add(tokPunct, i, i+1)
			i++
		case c == '$': // $1 parameters
			j := i + 1
			for j < len(src) && src[j] >= '0' && src[j] <= '9' {
				j++
			}
			s.add(tokOp, i, j)
			i = j
		default:
			j := i
			for j < len(src) && strings.IndexByte("+-*/<>=~!@#%^&|`?:", src[j]) >= 0 {
				if j > i && (src[j] == '-' && j+1 < len(src) && src[j+1] == '-' ||
					src[j] == '/' && j+1 < len(src) && src[j+1] == '*') {
					break
				}
				j++
			}
			if j == i {
				j = i + 1 // a stray character: PostgreSQL will complain about it
			}
			s.add(tokOp, i, j)
			i = j
		}
	}
	return len(src)
}

func (s *scanner) add(k tokKind, start, end int) {
	s.emit(token{kind: k, start: start, end: end})
}

// skipBlockComment returns the offset after the (nested) comment at i, or -1.
func skipBlockComment(src string, i int) int {
	depth := 0
	for i < len(src) {
		switch {
		case strings.HasPrefix(src[i:], "/*"):
			depth++
			i += 2
		case strings.HasPrefix(src[i:], "*/"):
			depth--
			i += 2
			if depth == 0 {
				return i
			}
		default:
			i++
		}
	}
	return -1
}

// skipString returns the offset after the closing quote of a string whose
// body starts at i (a doubled quote is a quote; with backslash, \ escapes), or -1.
func skipString(src string, i int, backslash bool) int {
	for i < len(src) {
		switch src[i] {
		case '\\':
			if backslash {
				i += 2
				continue
			}
		case '\'':
			if i+1 < len(src) && src[i+1] == '\'' {
				i += 2
				continue
			}
			return i + 1
		}
		i++
	}
	return -1
}

// skipQuotedIdent returns the offset after a double-quoted identifier's
// closing quote ("" escapes a quote), or -1.
func skipQuotedIdent(src string, i int) int {
	for i < len(src) {
		if src[i] == '"' {
			if i+1 < len(src) && src[i+1] == '"' {
				i += 2
				continue
			}
			return i + 1
		}
		i++
	}
	return -1
}

// dollarTag returns the end of a dollar-quote opening tag ($$ or $tag$) at i,
// or 0 when there is none.
func dollarTag(src string, i int) int {
	j := i + 1
	if j < len(src) && src[j] >= '0' && src[j] <= '9' {
		return 0
	}
	for j < len(src) && src[j] != '$' {
		if !isIdentCont(src[j]) || src[j] == '$' {
			return 0
		}
		j++
	}
	if j >= len(src) {
		return 0
	}
	return j + 1
}

func scanNumber(src string, i int) int {
	j := i
	for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.' || src[j] == '_') {
		if src[j] == '.' && j+1 < len(src) && src[j+1] == '.' {
			break
		}
		j++
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		k := j + 1
		if k < len(src) && (src[k] == '+' || src[k] == '-') {
			k++
		}
		if k < len(src) && src[k] >= '0' && src[k] <= '9' {
			for k < len(src) && src[k] >= '0' && src[k] <= '9' {
				k++
			}
			j = k
		}
	}
	return j
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isIdentCont(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9' || c == '$'
}
