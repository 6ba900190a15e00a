package sql

import (
	"strings"
	"sync"
	"syscall"

	"github.com/streamsql/streamsql/pgerr"
)

// Why a statement's nesting is bounded before PostgreSQL's parser sees it.
//
// pg_query parses in C on the calling thread's stack: bison itself keeps its
// own bounded stack (10,000 symbols, "memory exhausted" past it), but the raw
// tree is then packed into protobuf by protobuf-c, which recurses once per
// tree level (about 360 bytes of C stack a level for "1+1+...", 700 for
// nested CASE, 1 KB for nested subqueries). A left-deep tree such as
// SELECT 1+1+...+1 with 24,000 terms (48 KB of text) overflows an 8 MB
// thread stack and takes the whole process down with SIGSEGV; nothing in C
// checks the depth. Go's proto.Unmarshal then refuses trees deeper than
// 10,000 messages, and the binder, planner and evaluator recurse in Go.
//
// nestingDepth gives an upper bound, in "units" of about 360 bytes of C
// stack, of the depth of the tree PostgreSQL's grammar builds for a text,
// computed from the tokens alone, and Parse refuses a text whose bound
// exceeds maxNestingDepth with PostgreSQL's 54001 "stack depth limit
// exceeded". Lists (commas; AND and OR, which the grammar flattens; the arms
// of CASE) do not nest, so IN lists, VALUES rows, select lists and long
// boolean conditions of any length stay accepted.

// maxNestingUnits is the largest bound accepted on a thread stack of 8 MB or
// more: 4,000 units, about 1.4 MB of C stack. PostgreSQL 15 (max_stack_depth
// 2MB) accepts SELECT 1+1+... with 3,000 terms and refuses 5,000.
const maxNestingUnits = 4000

// Weights of the estimate, calibrated by experiment (see depth_test.go and
// TestNestingDepthCParserSafe): a bracket (parenthesis, subscript) costs a
// unit, so that with the word before it (a function name, ARRAY) or in it
// (SELECT) it covers a call or a subquery (360 bytes to 1 KB of C stack); a
// CASE ... END two more besides the CASE word; a set operation (UNION,
// INTERSECT, EXCEPT) one more SelectStmt level of everything before it; a
// SELECT three (a subquery is five protobuf messages deep, and Go's decoder
// takes at most 10,000).
// PostgreSQL's canonical text (Deparse) brackets every nested operator,
// "((a + b) + c) + d", so a stored definition costs two units a level.
const (
	bracketUnits = 1
	caseUnits    = 2
	setOpUnits   = 2
	selectUnits  = 3
)

var (
	limitOnce sync.Once
	limit     int
)

// MaxNestingDepth is the largest nesting bound Parse accepts: maxNestingUnits,
// or less where the process's threads get a smaller stack (RLIMIT_STACK under
// 8 MB; glibc gives threads 2 MB when it is unlimited), keeping the C parser
// within a third of the stack.
func MaxNestingDepth() int {
	limitOnce.Do(func() {
		limit = maxNestingUnits
		stack := uint64(2 << 20)
		var rl syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_STACK, &rl); err == nil && rl.Cur != ^uint64(0) && rl.Cur > 0 {
			stack = rl.Cur
		}
		if l := int(stack / 3 / 360); l < limit {
			limit = l
		}
	})
	return limit
}

// errStackDepth is PostgreSQL's error for a statement nested too deeply.
func errStackDepth() error {
	return pgerr.New(pgerr.StatementTooComplex, "stack depth limit exceeded").
		WithHint("streamsql accepts expressions and queries nested at most %d levels deep (an operator, a parenthesis or a subquery each adds a level); split the statement or simplify it.", MaxNestingDepth())
}

// depthFrame is one open bracket of nestingDepth's walk.
type depthFrame struct {
	closer   byte // ')' or ']', or 'E' for CASE ... END; 0 for the statement
	ops      int  // nesting units of the current list element so far
	childMax int  // deepest bracket closed within the current element
	max      int  // deepest element of this bracket so far
	setOps   int  // set operations seen in this bracket
	between  bool // a BETWEEN waits for its AND (which does not separate)
}

// endElement closes the current list element (a comma, AND, OR, WHEN, THEN
// or ELSE was met): its depth is at most its own units over its deepest
// bracket.
func (f *depthFrame) endElement() {
	if d := f.ops + f.childMax; d > f.max {
		f.max = d
	}
	f.ops, f.childMax, f.between = 0, 0, false
}

// depth is the bracket's bound once it closes.
func (f *depthFrame) depth() int {
	f.endElement()
	return f.max + f.setOps*setOpUnits
}

// nestingDepth returns the deepest statement's bound of src in nesting
// units. Each operator or keyword token of a list element adds one unit
// (an element's tree is at most as deep as its operators are many, plus its
// deepest bracket), each bracket bracketUnits, each set operation of a
// bracket setOpUnits; identifiers, constants, parameters and type names
// after :: add nothing. Text the scanner could not read (an unterminated
// quote or comment, reported by the parser later) counts one unit per two
// bytes, which bounds any tree built from it.
func nestingDepth(src string) int {
	w := depthWalk{src: src, stack: []depthFrame{{}}}
	// Tokens are looked at one behind the scanner, to see the next one.
	var prev, cur token
	have := 0
	stop := scanTokens(src, func(next token) {
		if have > 0 {
			w.token(cur, &next, have > 1 && w.isCast(prev))
		}
		prev, cur = cur, next
		have++
	})
	if have > 0 {
		w.token(cur, nil, have > 1 && w.isCast(prev))
	}
	w.endStatement()
	if rest := strings.TrimSpace(src[stop:]); rest != "" {
		w.best += len(rest) / 2
	}
	return w.best
}

// depthWalk is nestingDepth's state: the open brackets and the deepest
// statement so far.
type depthWalk struct {
	src   string
	stack []depthFrame
	best  int
}

func (w *depthWalk) isCast(t token) bool {
	return t.kind == tokOp && w.src[t.start:t.end] == "::"
}

func (w *depthWalk) endStatement() {
	for len(w.stack) > 1 { // unbalanced: close what is open
		closeFrame(&w.stack)
	}
	if d := w.stack[0].depth(); d > w.best {
		w.best = d
	}
	w.stack[0] = depthFrame{}
}

// token accounts for t; next is the token after it (nil at the end) and
// afterCast tells whether t follows ::.
func (w *depthWalk) token(t token, next *token, afterCast bool) {
	top := &w.stack[len(w.stack)-1]
	text := w.src[t.start:t.end]
	switch t.kind {
	case tokPunct:
		switch text[0] {
		case '(':
			w.stack = append(w.stack, depthFrame{closer: ')'})
		case '[':
			w.stack = append(w.stack, depthFrame{closer: ']'})
		case ')', ']':
			closeMatching(&w.stack, text[0])
		case ',':
			top.endElement()
		case ';':
			w.endStatement()
		}
	case tokOp:
		if text[0] != '$' { // a parameter is a leaf
			top.ops++
		}
	case tokWord:
		switch keyword(text) {
		case "AND":
			if top.between {
				top.between = false
				top.ops++
			} else {
				top.endElement()
			}
		case "OR", "WHEN", "THEN", "ELSE":
			top.endElement()
		case "BETWEEN":
			top.between = true
			top.ops++
		case "UNION", "INTERSECT", "EXCEPT":
			top.setOps++
		case "SELECT":
			top.ops += selectUnits
		case "CASE":
			top.ops++
			w.stack = append(w.stack, depthFrame{closer: 'E'})
		case "END":
			closeMatching(&w.stack, 'E')
		default:
			if !w.leafWord(text, next, afterCast) {
				top.ops++
			}
		}
	}
}

// depthKeywords are the words nestingDepth treats specially.
var depthKeywords = []string{"AND", "OR", "WHEN", "THEN", "ELSE", "BETWEEN", "UNION", "INTERSECT", "EXCEPT", "CASE", "END", "SELECT"}

// keyword returns word upper-cased when it is one of depthKeywords, else "".
func keyword(word string) string {
	if len(word) < 2 || len(word) > 9 {
		return ""
	}
	for _, k := range depthKeywords {
		if strings.EqualFold(word, k) {
			return k
		}
	}
	return ""
}

// leafWord reports whether a word is an operand (a column name, a constant
// keyword, a type name): one followed by an operator, a closing bracket, a
// comma, a semicolon or nothing, or one after ::. NOT never is.
func (w *depthWalk) leafWord(word string, next *token, afterCast bool) bool {
	if afterCast {
		return true
	}
	if strings.EqualFold(word, "NOT") {
		return false
	}
	if next == nil {
		return true
	}
	switch next.kind {
	case tokOp:
		return w.src[next.start] != '$'
	case tokPunct:
		return strings.IndexByte(")],;", w.src[next.start]) >= 0
	}
	return false
}

// closeMatching closes brackets up to and including the innermost one that
// closer ends; a closer with no open bracket of its kind is ignored (the
// parser reports it).
func closeMatching(stack *[]depthFrame, closer byte) {
	for j := len(*stack) - 1; j > 0; j-- {
		if (*stack)[j].closer == closer {
			for len(*stack) > j {
				closeFrame(stack)
			}
			return
		}
	}
}

// closeFrame pops the innermost bracket into its parent's current element.
func closeFrame(stack *[]depthFrame) {
	s := *stack
	d := s[len(s)-1].depth() + bracketUnits
	if s[len(s)-1].closer == 'E' {
		d = s[len(s)-1].depth() + caseUnits
	}
	s = s[:len(s)-1]
	if p := &s[len(s)-1]; d > p.childMax {
		p.childMax = d
	}
	*stack = s
}

// checkNesting refuses text whose nesting bound exceeds MaxNestingDepth.
func checkNesting(text string) error {
	if nestingDepth(text) > MaxNestingDepth() {
		return errStackDepth()
	}
	return nil
}
