package sql

import "sort"

// Extensions are the streaming clauses lifted from one statement. The
// streaming issues fill this in (EMIT, WATERMARK FOR, APPEND ONLY, CREATE
// SOURCE/SINK, SUBSCRIBE, FLUSH); the foundation only defines the mechanism.
type Extensions struct {
	// Kind is set for statements that PostgreSQL's grammar has no form for at
	// all (e.g. "FLUSH"); their AST is nil.
	Kind string
	// Clauses lifted out of a PostgreSQL statement, in text order.
	Clauses []Clause
}

// Clause is one lifted clause with its byte span in the original text.
type Clause struct {
	Name       string // "APPEND ONLY", "EMIT", ...
	Start, End int
	Args       map[string]string
}

// lifted is the extension layer's output for the whole text.
type lifted struct {
	clauses    []Clause
	standalone []Statement
}

// liftExtensions blanks out the streaming clauses of text (same byte length,
// so locations stay valid) and returns what it lifted. With no extension
// grammar registered yet it returns the text unchanged.
func liftExtensions(text string) (string, *lifted, error) {
	return text, &lifted{}, nil
}

// within returns the clauses inside [start, end), or nil.
func (l *lifted) within(start, end int) *Extensions {
	var ext *Extensions
	for _, c := range l.clauses {
		if c.Start >= start && c.End <= end {
			if ext == nil {
				ext = &Extensions{}
			}
			ext.Clauses = append(ext.Clauses, c)
		}
	}
	return ext
}

// addStandalone merges extension-only statements into stmts by offset.
func (l *lifted) addStandalone(text string, stmts []Statement) []Statement {
	if len(l.standalone) == 0 {
		return stmts
	}
	stmts = append(stmts, l.standalone...)
	sort.SliceStable(stmts, func(i, j int) bool { return stmts[i].Offset < stmts[j].Offset })
	return stmts
}
