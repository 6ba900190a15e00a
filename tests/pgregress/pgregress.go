// Package pgregress runs PostgreSQL's own regression files (src/test/regress
// sql/*.sql) through psql against two servers and compares their output
// statement by statement.
//
// A file is split into units: one SQL statement (ended by a semicolon
// outside quotes, dollar quotes and comments) or one psql meta-command line,
// with the comments before it; COPY ... FROM stdin keeps its data up to
// "\.". Instrument appends `\echo` markers after every unit and turns
// `COPY t FROM :'filename'` (a server-side file) into psql's `\copy`, so the
// same script runs on any server; Chunks cuts psql -a's output back into one
// text per unit. Functions here are pure and safe for concurrent use.
package pgregress

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Unit is one statement or meta-command of a script.
type Unit struct {
	Text string // the statement as written, with its leading comments
	Line int    // 1-based line of its first line
}

// SQL is the unit without comments and blank lines.
func (u Unit) SQL() string {
	var out []string
	for _, l := range strings.Split(u.Text, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "--") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

var copyStdin = regexp.MustCompile(`(?is)^\s*copy\b.*\bfrom\s+stdin\b`)

// Split cuts a script into units.
func Split(src string) []Unit {
	lines := strings.Split(src, "\n")
	var units []Unit
	var cur []string
	start := 1
	st := &lexState{}
	flush := func(i int) {
		units = append(units, Unit{Text: strings.Join(cur, "\n"), Line: start})
		cur, start = nil, i+2
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		cur = append(cur, l)
		if st.idle() && strings.HasPrefix(strings.TrimSpace(l), `\`) && onlyComments(cur[:len(cur)-1]) {
			flush(i)
			continue
		}
		if st.feed(l + "\n") {
			if copyStdin.MatchString(stripComments(strings.Join(cur, "\n"))) {
				for i+1 < len(lines) {
					i++
					cur = append(cur, lines[i])
					if lines[i] == `\.` {
						break
					}
				}
			}
			flush(i)
			st = &lexState{}
		}
	}
	if len(cur) > 0 && strings.TrimSpace(strings.Join(cur, "")) != "" {
		units = append(units, Unit{Text: strings.Join(cur, "\n"), Line: start})
	}
	return units
}

func onlyComments(ls []string) bool {
	for _, l := range ls {
		t := strings.TrimSpace(l)
		if t != "" && !strings.HasPrefix(t, "--") {
			return false
		}
	}
	return true
}

func stripComments(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// lexState follows quoting across lines: it tells where a statement ends.
type lexState struct {
	quote     byte   // ', " or 0
	dollar    string // open $tag$
	block     int    // /* */ nesting
	parens    int
	something bool // a statement has begun
}

func (s *lexState) idle() bool { return !s.something && s.quote == 0 && s.dollar == "" && s.block == 0 }

// feed reads a line; true when the statement ended at a semicolon on it.
func (s *lexState) feed(l string) bool {
	ended := false
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case s.block > 0:
			if strings.HasPrefix(l[i:], "*/") {
				s.block--
				i++
			} else if strings.HasPrefix(l[i:], "/*") {
				s.block++
				i++
			}
		case s.dollar != "":
			if strings.HasPrefix(l[i:], s.dollar) {
				i += len(s.dollar) - 1
				s.dollar = ""
			}
		case s.quote != 0:
			if c == s.quote {
				if i+1 < len(l) && l[i+1] == s.quote {
					i++
				} else {
					s.quote = 0
				}
			}
		case strings.HasPrefix(l[i:], "--"):
			return ended
		case strings.HasPrefix(l[i:], "/*"):
			s.block++
			i++
		case c == '\'' || c == '"':
			s.quote = c
			s.something = true
		case c == '$':
			if m := dollarTag.FindString(l[i:]); m != "" && (i == 0 || !isIdent(l[i-1])) {
				s.dollar = m
				i += len(m) - 1
			}
			s.something = true
		case c == '(':
			s.parens++
		case c == ')':
			s.parens--
		case c == ';' && s.parens <= 0:
			if s.something {
				ended = true
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			s.something = true
			if ended {
				ended = false // another statement begins on the same line
			}
		}
	}
	return ended
}

var dollarTag = regexp.MustCompile(`^\$([A-Za-z_][A-Za-z_0-9]*)?\$`)

func isIdent(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// marker is the text psql prints after unit n.
func marker(n int) string { return fmt.Sprintf("@@pgregress %d@@", n) }

var copyFile = regexp.MustCompile(`(?i)^(\s*)COPY\s+(.*?)\s+FROM\s+:'filename'\s*;\s*$`)

// Instrument builds the psql input: every unit followed by a marker.
func Instrument(units []Unit) string {
	var sb strings.Builder
	for i, u := range units {
		text := u.Text
		ls := strings.Split(text, "\n")
		for j, l := range ls {
			if m := copyFile.FindStringSubmatch(l); m != nil {
				ls[j] = m[1] + `\copy ` + m[2] + ` FROM :'filename'`
			}
		}
		sb.WriteString(strings.Join(ls, "\n"))
		sb.WriteString("\n\\echo " + marker(i) + "\n")
	}
	return sb.String()
}

// Chunks cuts psql -a output of an instrumented script into n texts, the
// output of each unit (its echo included); units after a crash are "".
func Chunks(out string, n int) []string {
	chunks := make([]string, n)
	var cur []string
	k := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, `\echo @@pgregress `) {
			continue
		}
		if k < n && l == marker(k) {
			chunks[k] = strings.Join(cur, "\n")
			cur = nil
			k++
			continue
		}
		cur = append(cur, l)
	}
	return chunks
}

var (
	ruleLine  = regexp.MustCompile(`^-+(\+-+)*$`)
	rowsLine  = regexp.MustCompile(`^\(\d+ rows?\)$`)
	commentRe = regexp.MustCompile(`(?s)/\*.*?\*/|--[^\n]*`)
	literalRe = regexp.MustCompile(`'[^']*'`)
	sqlToken  = regexp.MustCompile(`[a-z_][a-z0-9_$]*|[()]|[^\sa-z_()]+`)
	// notCalls are the words before a parenthesis that opens a query or a
	// list, not a function call's or OVER's arguments.
	notCalls = map[string]bool{"as": true, "in": true, "exists": true, "from": true, "join": true,
		"lateral": true, "all": true, "any": true, "some": true, "union": true, "intersect": true,
		"except": true, "select": true, "where": true, "and": true, "or": true, "not": true, "on": true,
		"using": true, "values": true, "with": true, "by": true, "when": true, "then": true, "else": true,
		"case": true, "array": true, "table": true, "into": true, "set": true, "returning": true}
)

// Same says whether a unit printed the same on both servers. A statement
// whose rows' order SQL leaves to the plan (ordered prints it strictly) has
// the rows of each result table psql printed (between the header's rule
// and "(N rows)") compared as multisets; everything else — headers, row
// counts, values, notices, errors, and the order of rows under an ORDER BY
// — must be identical.
func Same(u Unit, want, got string) bool {
	if want == got {
		return true
	}
	if ordered(u.SQL()) {
		return false
	}
	return sortRows(want) == sortRows(got)
}

// ordered reports whether a statement has an ORDER BY that may order its
// output: any ORDER BY but one inside a function call's or OVER's
// parentheses (string_agg(x ORDER BY y), rank() OVER (ORDER BY y)), which
// orders values or window frames, not the rows printed. An ORDER BY in a
// subquery or a WITH query counts (conservatively) as ordering.
func ordered(sql string) bool {
	s := strings.ToLower(commentRe.ReplaceAllString(sql, " "))
	toks := sqlToken.FindAllString(literalRe.ReplaceAllString(s, "''"), -1)
	var calls []bool // per open parenthesis: a call's or OVER's
	inCall := 0
	for i, t := range toks {
		switch {
		case t == "(":
			call := i > 0 && isWord(toks[i-1]) && !notCalls[toks[i-1]]
			calls = append(calls, call)
			if call {
				inCall++
			}
		case t == ")":
			if n := len(calls); n > 0 {
				if calls[n-1] {
					inCall--
				}
				calls = calls[:n-1]
			}
		case t == "order" && i+1 < len(toks) && toks[i+1] == "by" && inCall == 0:
			return true
		}
	}
	return false
}

// sortRows sorts the row lines of each result table in psql's aligned output.
func sortRows(out string) string {
	ls := strings.Split(out, "\n")
	for i := 0; i < len(ls); i++ {
		if !ruleLine.MatchString(ls[i]) {
			continue
		}
		j := i + 1
		for j < len(ls) && !rowsLine.MatchString(ls[j]) {
			j++
		}
		if j == len(ls) {
			break
		}
		sort.Strings(ls[i+1 : j])
		i = j
	}
	return strings.Join(ls, "\n")
}

func isWord(t string) bool { return t[0] == '_' || t[0] >= 'a' && t[0] <= 'z' }
