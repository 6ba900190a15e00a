package expr

import (
	"strings"

	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// numProcState is PostgreSQL's NUMProc for to_char: number is the printed
// digits ("123.45", or the '#' filler), np the next of them to write.
type numProcState struct {
	d                  *numDesc
	out                strings.Builder
	number             string
	np                 int
	sign               byte
	signWrote, numIn   bool
	numCount, numCurr  int
	preSpaces, lastRel int
}

// numProc is NUM_processor's to_char direction.
func numProc(nodes []numNode, d *numDesc, number string, sign byte, preSpaces int) string {
	s := &numProcState{d: d, number: number, sign: sign, preSpaces: preSpaces, lastRel: -1}
	if d.roman {
		d.lsign, d.preLsignNum, d.post, d.pre, s.preSpaces = 0, 0, 0, 0, 0
	}
	if d.zeroStart > 0 {
		d.zeroStart--
	}
	if d.plus || d.minus {
		s.signWrote = !(d.plus && !d.minus)
	} else {
		if s.sign != '-' && d.fill {
			d.bracket = false
		}
		s.signWrote = s.sign == '+' && d.fill && !d.lsignF
		if d.lsign == 1 && d.pre == d.preLsignNum {
			d.lsign = 2
		}
	}
	s.numCount = d.post + d.pre - 1
	if d.fill && d.decimal {
		s.lastRel = lastRelevant(s.number)
		if s.lastRel >= 0 && d.zeroEnd > s.preSpaces {
			lastZero := min(len(s.number)-1, d.zeroEnd-s.preSpaces)
			if s.lastRel < lastZero {
				s.lastRel = lastZero
			}
		}
	}
	if !s.signWrote && s.preSpaces == 0 {
		s.numCount++
	}
	for _, n := range nodes {
		if n.id == "" {
			s.out.WriteString(n.lit)
			continue
		}
		switch n.id {
		case "9", "0", ".", "D":
			s.numPart(n.id)
		case ",", "G":
			switch {
			case s.numIn:
				s.out.WriteByte(',')
			case !d.fill:
				s.out.WriteByte(' ')
			}
		case "L":
			s.out.WriteByte(' ')
		case "RN", "rn":
			r := s.number
			if n.id == "rn" {
				r = strings.ToLower(r)
			}
			if !d.fill && len(r) < 15 {
				r = strings.Repeat(" ", 15-len(r)) + r
			}
			s.out.WriteString(r)
		case "TH", "th":
			if d.roman || strings.HasPrefix(s.number, "#") || s.sign == '-' || d.decimal {
				continue
			}
			if suf, err := appendOrdinal(s.number, n.id == "th"); err == nil {
				s.out.WriteString(suf[len(s.number):])
			}
		case "MI":
			switch {
			case s.sign == '-':
				s.out.WriteByte('-')
			case !d.fill:
				s.out.WriteByte(' ')
			}
		case "PL":
			switch {
			case s.sign == '+':
				s.out.WriteByte('+')
			case !d.fill:
				s.out.WriteByte(' ')
			}
		case "SG":
			s.out.WriteByte(s.sign)
		}
	}
	return s.out.String()
}

func (s *numProcState) cur() byte {
	if s.np < len(s.number) {
		return s.number[s.np]
	}
	return 0
}

// predecSpace is IS_PREDEC_SPACE: the leading 0 of "0.x" under 9s.
func (s *numProcState) predecSpace() bool {
	return !s.d.zero && s.np == 0 && strings.HasPrefix(s.number, "0") && s.d.post != 0
}

func (s *numProcState) lastRelIsPoint() bool {
	return s.lastRel >= 0 && s.number[s.lastRel] == '.'
}

// numPart is NUM_numpart_to_char.
func (s *numProcState) numPart(id string) {
	d := s.d
	if d.roman {
		return
	}
	if !s.signWrote &&
		(s.numCurr >= s.preSpaces || d.zero && d.zeroStart == s.numCurr) &&
		(!s.predecSpace() || s.lastRelIsPoint()) {
		switch {
		case d.lsignF:
			if d.lsign == 1 {
				s.out.WriteByte(map[bool]byte{true: '-', false: '+'}[s.sign == '-'])
				s.signWrote = true
			}
		case d.bracket:
			s.out.WriteByte(map[bool]byte{true: ' ', false: '<'}[s.sign == '+'])
			s.signWrote = true
		case s.sign == '+':
			if !d.fill {
				s.out.WriteByte(' ')
			}
			s.signWrote = true
		case s.sign == '-':
			s.out.WriteByte('-')
			s.signWrote = true
		}
	}
	switch {
	case s.numCurr < s.preSpaces && (d.zeroStart > s.numCurr || !d.zero):
		if !d.fill {
			s.out.WriteByte(' ')
		}
	case d.zero && s.numCurr < s.preSpaces && d.zeroStart <= s.numCurr:
		s.out.WriteByte('0')
		s.numIn = true
	default:
		if s.cur() == '.' {
			if !s.lastRelIsPoint() || d.fill {
				s.out.WriteByte('.')
			}
		} else {
			switch {
			case s.lastRel >= 0 && s.np > s.lastRel && id != "0":
			case s.predecSpace():
				if !d.fill {
					s.out.WriteByte(' ')
				} else if s.lastRelIsPoint() {
					s.out.WriteByte('0')
				}
			default:
				if c := s.cur(); c != 0 {
					s.out.WriteByte(c)
				}
				s.numIn = true
			}
		}
		if s.np < len(s.number) {
			s.np++
		}
	}
	end := s.numCount
	if s.preSpaces > 0 {
		end++
	}
	if d.decimal {
		end++
	}
	if s.lastRel >= 0 && s.lastRel == s.np {
		end = s.numCurr
	}
	if s.numCurr+1 == end {
		switch {
		case s.signWrote && d.bracket:
			s.out.WriteByte(map[bool]byte{true: ' ', false: '>'}[s.sign == '+'])
		case d.lsignF && d.lsign == 2:
			s.out.WriteByte(map[bool]byte{true: '-', false: '+'}[s.sign == '-'])
		}
	}
	s.numCurr++
}

func init() {
	TX := types.TText
	define(rowFn("to_char", TX, []types.T{types.TNumeric, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
		return toCharNumber(a[0].(*apd.Decimal), a[1].(string))
	}))
	for _, t := range []types.T{types.TInt4, types.TInt8, types.TFloat4, types.TFloat8} {
		t := t
		define(rowFn("to_char", TX, []types.T{t, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			switch x := a[0].(type) {
			case int64:
				return toCharNumber(apd.New(x, 0), a[1].(string))
			case float64:
				if t.Kind == types.Float4 {
					return toCharFloat(x, a[1].(string), 6)
				}
				return toCharFloat(x, a[1].(string), 15)
			}
			return nil, pgerr.Internal("to_char of %T", a[0])
		}))
	}
}
