package sql

import (
	"errors"
	"strings"
	"unicode/utf8"

	pg "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"

	"github.com/streamsql/streamsql/pgerr"
)

// Statement is one parsed statement of a query string.
type Statement struct {
	// Source is the whole query string the statement came from; locations in
	// AST are byte offsets into it.
	Source string
	// Offset and Len delimit this statement's text within Source.
	Offset, Len int
	// AST is PostgreSQL's parse tree for the statement. It is nil for the
	// statements that exist only in streamsql (Ext.Kind set); the parts of
	// those that PostgreSQL could parse are in Ext (Source.Stmt, Sink.Stmt,
	// Subscribe.Stmt), their locations also pointing into Source.
	AST *pg.Node
	// Ext holds the streaming clauses lifted out of the text, or nil.
	Ext *Extensions
}

// Text returns the statement's own text, trimmed.
func (s Statement) Text() string {
	return strings.TrimSpace(s.Source[s.Offset : s.Offset+s.Len])
}

// CharPos converts a 0-based byte offset into Source into PostgreSQL's 1-based
// character position for ErrorResponse. A negative offset gives 0 (none).
func (s Statement) CharPos(byteOffset int) int {
	return CharPos(s.Source, byteOffset)
}

// CharPos converts a 0-based byte offset in text to a 1-based character position.
func CharPos(text string, byteOffset int) int {
	if byteOffset < 0 {
		return 0
	}
	if byteOffset > len(text) {
		byteOffset = len(text)
	}
	return utf8.RuneCountInString(text[:byteOffset]) + 1
}

// Parse parses a query string that may hold several statements separated by
// semicolons. An empty or comment-only string gives no statements. A syntax
// error is a *pgerr.Error with SQLSTATE 42601 and the position of the error.
func Parse(text string) ([]Statement, error) {
	if !utf8.ValidString(text) {
		return nil, pgerr.New(pgerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
	}
	cleaned, exts, err := liftExtensions(text)
	if err != nil {
		return nil, err
	}
	if err := checkNesting(cleaned); err != nil {
		return nil, err
	}
	res, err := pg.Parse(cleaned)
	if err != nil {
		if strings.Contains(err.Error(), "exceeded maximum recursion depth") {
			// Go's protobuf decoder refuses trees over 10,000 messages deep.
			return nil, errStackDepth()
		}
		return nil, syntaxError(err, text, cleaned)
	}
	stmts := make([]Statement, 0, len(res.Stmts))
	for _, raw := range res.Stmts {
		off := int(raw.StmtLocation)
		n := int(raw.StmtLen)
		if n == 0 { // the last statement runs to the end of the text
			n = len(text) - off
		}
		st := Statement{Source: text, Offset: off, Len: n, AST: raw.Stmt}
		st.Ext = exts.within(off, off+n)
		if st.Ext != nil && st.Ext.Kind != "" {
			st.Ext.adopt(st.AST)
			st.AST = nil
		}
		stmts = append(stmts, st)
	}
	// Extension-only statements (no PostgreSQL AST) are slotted in by offset.
	stmts = exts.addStandalone(text, stmts)
	return stmts, nil
}

// syntaxError converts pg_query's error. Its cursor position counts
// characters of cleaned, where a lifted multi-byte character became several
// spaces, so it is mapped back to a character position of the user's text.
func syntaxError(err error, text, cleaned string) error {
	var pe *pgparser.Error
	if errors.As(err, &pe) {
		e := pgerr.New(pgerr.SyntaxError, "%s", pe.Message)
		e.Position = pe.Cursorpos
		if pe.Message == "invalid Unicode escape" {
			// PostgreSQL's scanner hints at the form the literal takes
			if pe.Funcname == "str_udeescape" { // U&'...' and U&"..."
				e = e.WithHint(`Unicode escapes must be \XXXX or \+XXXXXX.`)
			} else { // E'...'
				e = e.WithHint(`Unicode escapes must be \uXXXX or \UXXXXXXXX.`)
			}
		}
		if e.Position > 0 && text != cleaned {
			off := 0
			for n := 1; n < e.Position && off < len(cleaned); n++ {
				_, size := utf8.DecodeRuneInString(cleaned[off:])
				off += size
			}
			e.Position = CharPos(text, off)
		}
		return e
	}
	return pgerr.Wrap(err, pgerr.SyntaxError, "%s", err.Error())
}
