package expr

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
)

// A faster leftmost-first matcher for patterns that hold a literal at a
// bounded distance from the start of every match ('(&|^)channel_id=([^&]*)':
// "channel_id=" is 0 or 1 byte after the start). Go's matcher tries every
// position of the string as a start (unless the pattern begins with a
// literal), which for an 80-byte URL is a few hundred instructions even
// when the match is at its end. pivotRegex finds the literal with
// strings.Index and tries only the starts within that distance before
// each of its occurrences, running a backtracker over the same compiled
// program as Go's (same instructions, same order of alternatives, the same
// memo of failed (instruction, position) states), so its matches and
// submatches are Go's. It handles ASCII strings only; any other string,
// and a string too long for the memo, goes to Go's matcher.

// pivotRegex is immutable once built and safe for concurrent use; the
// per-call scratch comes from a pool.
type pivotRegex struct {
	prog      *syntax.Prog
	lit       string // every match holds lit, starting minBefore..maxBefore bytes after the match's start
	minBefore int
	maxBefore int
	ncap      int         // capture slots: 2 per group, group 0 included
	ascii     [][2]uint64 // per instruction, the ASCII bytes a rune instruction accepts
	scratch   sync.Pool   // *pivotScratch
}

type pivotScratch struct {
	stack   []pivotJob
	visited []uint32
	cap     []int
}

// pivotJob is a state to resume: instruction pc at pos, or (slot >= 0)
// the restore of capture slot to pos.
type pivotJob struct {
	pc   uint32
	slot int32
	pos  int
}

// maxPivotVisit bounds the memo (instructions × positions, in bits); Go's
// backtracker has the same kind of bound and uses another algorithm above it.
const maxPivotVisit = 256 * 1024

var pivotRegexes sync.Map // *regexp.Regexp -> *pivotRegex (nil: none)

// pivotFor returns the pivot matcher of re, a leftmost-first (Perl)
// regexp compiled by regexp.Compile, or nil when its pattern has no
// suitable literal.
func pivotFor(re *regexp.Regexp) *pivotRegex {
	if v, ok := pivotRegexes.Load(re); ok {
		p, _ := v.(*pivotRegex)
		return p
	}
	p := newPivotRegex(re.String(), re.NumSubexp())
	if p == nil {
		pivotRegexes.Store(re, (*pivotRegex)(nil))
	} else {
		pivotRegexes.Store(re, p)
	}
	return p
}

// newPivotRegex compiles src as regexp.Compile does and finds its pivot:
// the longest case-sensitive literal that is an item of the pattern's
// top-level concatenation with a bounded width before it.
func newPivotRegex(src string, nsub int) *pivotRegex {
	t, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil
	}
	t = t.Simplify()
	var items []*syntax.Regexp
	switch t.Op {
	case syntax.OpConcat:
		items = t.Sub
	case syntax.OpLiteral:
		items = []*syntax.Regexp{t}
	default:
		return nil
	}
	p := &pivotRegex{maxBefore: -1}
	minW, maxW := 0, 0
	for _, it := range items {
		if it.Op == syntax.OpLiteral && it.Flags&syntax.FoldCase == 0 && maxW >= 0 {
			if lit := string(it.Rune); len(lit) > len(p.lit) {
				p.lit, p.minBefore, p.maxBefore = lit, minW, maxW
			}
		}
		lo, hi := widths(it)
		minW += lo
		if maxW >= 0 {
			if hi < 0 {
				maxW = -1
			} else {
				maxW += hi
			}
		}
	}
	if p.lit == "" {
		return nil
	}
	prog, err := syntax.Compile(t)
	if err != nil {
		return nil
	}
	p.prog, p.ncap = prog, 2*(nsub+1)
	p.ascii = make([][2]uint64, len(prog.Inst))
	for pc := range prog.Inst {
		in := &prog.Inst[pc]
		switch in.Op {
		case syntax.InstRune, syntax.InstRune1:
			for r := rune(0); r < 128; r++ {
				if in.MatchRune(r) {
					p.ascii[pc][r>>6] |= 1 << (r & 63)
				}
			}
		case syntax.InstAltMatch:
			return nil // not emitted by syntax.Compile; not handled here
		}
	}
	return p
}

// widths returns the least and greatest number of bytes a match of re
// spans (greatest -1: unbounded).
func widths(re *syntax.Regexp) (int, int) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0, 0
	case syntax.OpLiteral:
		n := len(string(re.Rune))
		if re.Flags&syntax.FoldCase != 0 {
			return len(re.Rune), 4 * len(re.Rune) // folded forms may differ in length
		}
		return n, n
	case syntax.OpCharClass, syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return 1, 4
	case syntax.OpCapture:
		return widths(re.Sub[0])
	case syntax.OpQuest:
		_, hi := widths(re.Sub[0])
		return 0, hi
	case syntax.OpStar:
		return 0, -1
	case syntax.OpPlus:
		lo, _ := widths(re.Sub[0])
		return lo, -1
	case syntax.OpRepeat:
		lo, hi := widths(re.Sub[0])
		if re.Max < 0 || hi < 0 {
			return lo * re.Min, -1
		}
		return lo * re.Min, hi * re.Max
	case syntax.OpConcat:
		lo, hi := 0, 0
		for _, s := range re.Sub {
			l, h := widths(s)
			lo += l
			if hi >= 0 {
				if h < 0 {
					hi = -1
				} else {
					hi += h
				}
			}
		}
		return lo, hi
	case syntax.OpAlternate:
		lo, hi := -1, 0
		for _, s := range re.Sub {
			l, h := widths(s)
			if lo < 0 || l < lo {
				lo = l
			}
			if hi >= 0 && (h < 0 || h > hi) {
				hi = h
			}
		}
		if lo < 0 {
			lo = 0
		}
		return lo, hi
	}
	return 0, -1 // OpNoMatch and anything new: no bound claimed
}

// asciiOnly reports whether s has no byte above 0x7F.
func asciiOnly(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if w&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// find returns the submatch indexes of the leftmost-first match of s as
// re.FindStringSubmatchIndex does (nil: no match), appending to dst; ok is
// false when s is not for this matcher (the caller asks Go's). sc is the
// caller's scratch (nil: one from the pool).
func (p *pivotRegex) find(s string, dst []int, sc *pivotScratch) (m []int, ok bool) {
	q := strings.Index(s, p.lit)
	if q < 0 {
		return nil, true
	}
	if !asciiOnly(s) {
		return nil, false
	}
	lo := q - p.maxBefore
	if lo < 0 {
		lo = 0
	}
	width := len(s) - lo + 1
	nbits := len(p.prog.Inst) * width
	if nbits > maxPivotVisit {
		return nil, false
	}
	if sc == nil {
		sc = p.getScratch()
		defer p.scratch.Put(sc)
	}
	words := (nbits + 31) / 32
	if cap(sc.visited) < words {
		sc.visited = make([]uint32, words)
	} else {
		sc.visited = sc.visited[:words]
		clear(sc.visited)
	}
	if cap(sc.cap) < p.ncap {
		sc.cap = make([]int, p.ncap)
	}
	sc.cap = sc.cap[:p.ncap]
	next := lo // the least start not tried yet
	for {
		from, to := q-p.maxBefore, q-p.minBefore
		if from < next {
			from = next
		}
		for st := from; st <= to; st++ {
			if p.try(s, st, lo, width, sc) {
				return append(dst, sc.cap...), true
			}
		}
		if to+1 > next {
			next = to + 1
		}
		k := strings.Index(s[q+1:], p.lit)
		if k < 0 {
			return nil, true
		}
		q += 1 + k
	}
}

// getScratch takes a scratch from the pool; Put it back when done.
func (p *pivotRegex) getScratch() *pivotScratch {
	if sc, ok := p.scratch.Get().(*pivotScratch); ok {
		return sc
	}
	return &pivotScratch{}
}

// try runs the program anchored at st; on a match sc.cap holds it.
func (p *pivotRegex) try(s string, st, lo, width int, sc *pivotScratch) bool {
	for i := range sc.cap {
		sc.cap[i] = -1
	}
	sc.cap[0] = st
	insts := p.prog.Inst
	stack := append(sc.stack[:0], pivotJob{pc: uint32(p.prog.Start), slot: -1, pos: st})
	defer func() { sc.stack = stack[:0] }()
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if j.slot >= 0 {
			sc.cap[j.slot] = j.pos
			continue
		}
		pc, pos := j.pc, j.pos
	step:
		for {
			bit := int(pc)*width + pos - lo
			if sc.visited[bit>>5]&(1<<(bit&31)) != 0 {
				break
			}
			sc.visited[bit>>5] |= 1 << (bit & 31)
			in := &insts[pc]
			switch in.Op {
			case syntax.InstAlt:
				stack = append(stack, pivotJob{pc: in.Arg, slot: -1, pos: pos})
				pc = in.Out
			case syntax.InstRune, syntax.InstRune1:
				if pos >= len(s) {
					break step
				}
				c := s[pos]
				if p.ascii[pc][c>>6]&(1<<(c&63)) == 0 {
					break step
				}
				pos++
				pc = in.Out
			case syntax.InstRuneAny:
				if pos >= len(s) {
					break step
				}
				pos++
				pc = in.Out
			case syntax.InstRuneAnyNotNL:
				if pos >= len(s) || s[pos] == '\n' {
					break step
				}
				pos++
				pc = in.Out
			case syntax.InstCapture:
				if int(in.Arg) < len(sc.cap) {
					stack = append(stack, pivotJob{slot: int32(in.Arg), pos: sc.cap[in.Arg]})
					sc.cap[in.Arg] = pos
				}
				pc = in.Out
			case syntax.InstEmptyWidth:
				r1, r2 := rune(-1), rune(-1)
				if pos > 0 {
					r1 = rune(s[pos-1])
				}
				if pos < len(s) {
					r2 = rune(s[pos])
				}
				if syntax.EmptyOp(in.Arg)&^syntax.EmptyOpContext(r1, r2) != 0 {
					break step
				}
				pc = in.Out
			case syntax.InstNop:
				pc = in.Out
			case syntax.InstMatch:
				sc.cap[1] = pos
				return true
			default: // InstFail
				break step
			}
		}
	}
	return false
}
