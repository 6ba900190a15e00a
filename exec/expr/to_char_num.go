package expr

import (
	"math"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/pgerr"
)

// to_char for numbers, following PostgreSQL's formatting.c NUM_processor in
// the C locale (D is ".", G ",", L a space, S "+"/"-"): the template is
// parsed into numKeywords and literal characters, numDesc counts the digit
// positions and flags, the value is rounded and printed once (numeric_out,
// or printf's %.*f for floats, %e for EEEE), and numProc walks the template
// writing digits, signs, separators and literals. Pure and safe for
// concurrent use.

// numKeywords are in PostgreSQL's search order per first character.
var numKeywords = []string{
	",", ".", "0", "9", "B", "C", "D", "EEEE", "FM", "G", "L", "MI", "PL", "PR", "RN", "SG", "SP", "S", "TH", "V",
	"b", "c", "d", "eeee", "fm", "g", "l", "mi", "pl", "pr", "rn", "sg", "sp", "s", "th", "v",
}

// numNode is a parsed template item: a keyword (upper-cased id, except rn
// and th which keep their case) or a literal.
type numNode struct {
	id  string
	lit string
}

// numDesc is PostgreSQL's NUMDesc.
type numDesc struct {
	pre, post, multi           int
	zeroStart, zeroEnd         int
	preLsignNum                int
	lsign                      int // 0 none, 1 pre, 2 post
	zero, blank, fill, decimal bool
	lsignF, bracket, minus     bool
	plus, roman, multiF, eeee  bool
}

func numParse(f string) ([]numNode, *numDesc, error) {
	var nodes []numNode
	d := &numDesc{}
	for i := 0; i < len(f); {
		kw := ""
		for _, k := range numKeywords {
			if strings.HasPrefix(f[i:], k) {
				kw = k
				break
			}
		}
		if kw == "" {
			switch {
			case f[i] == '"':
				i++
				for i < len(f) {
					if f[i] == '"' {
						i++
						break
					}
					if f[i] == '\\' && i+1 < len(f) {
						i++
					}
					nodes = append(nodes, numNode{lit: f[i : i+1]})
					i++
				}
			case f[i] == '\\' && i+1 < len(f) && f[i+1] == '"':
				nodes = append(nodes, numNode{lit: `"`})
				i += 2
			default:
				nodes = append(nodes, numNode{lit: f[i : i+1]})
				i++
			}
			continue
		}
		i += len(kw)
		id := strings.ToUpper(kw)
		if kw == "rn" || kw == "th" {
			id = kw
		}
		if err := d.prepare(id); err != nil {
			return nil, nil, err
		}
		nodes = append(nodes, numNode{id: id})
	}
	return nodes, d, nil
}

func numSyntax(format string, args ...any) *pgerr.Error {
	return pgerr.New(pgerr.SyntaxError, format, args...)
}

// prepare is NUMDesc_prepare: it counts and checks one keyword.
func (d *numDesc) prepare(id string) error {
	if d.eeee && id != "EEEE" {
		return numSyntax(`"EEEE" must be the last pattern used`)
	}
	switch id {
	case "9":
		if d.bracket {
			return numSyntax(`"9" must be ahead of "PR"`)
		}
		switch {
		case d.multiF:
			d.multi++
		case d.decimal:
			d.post++
		default:
			d.pre++
		}
	case "0":
		if d.bracket {
			return numSyntax(`"0" must be ahead of "PR"`)
		}
		if !d.zero && !d.decimal {
			d.zero = true
			d.zeroStart = d.pre + 1
		}
		if !d.decimal {
			d.pre++
		} else {
			d.post++
		}
		d.zeroEnd = d.pre + d.post
	case "B":
		if d.pre == 0 && d.post == 0 && !d.zero {
			d.blank = true
		}
	case "D", ".":
		if d.decimal {
			return numSyntax("multiple decimal points")
		}
		if d.multiF {
			return numSyntax(`cannot use "V" and decimal point together`)
		}
		d.decimal = true
	case "FM":
		d.fill = true
	case "S":
		if d.lsignF {
			return numSyntax(`cannot use "S" twice`)
		}
		if d.plus || d.minus || d.bracket {
			return numSyntax(`cannot use "S" and "PL"/"MI"/"SG"/"PR" together`)
		}
		if !d.decimal {
			d.lsign, d.preLsignNum, d.lsignF = 1, d.pre, true
		} else if d.lsign == 0 {
			d.lsign, d.lsignF = 2, true
		}
	case "MI", "PL", "SG":
		if d.lsignF {
			return numSyntax(`cannot use "S" and "%s" together`, id)
		}
		if id != "PL" {
			d.minus = true
		}
		if id != "MI" {
			d.plus = true
		}
	case "PR":
		if d.lsignF || d.plus || d.minus {
			return numSyntax(`cannot use "PR" and "S"/"PL"/"MI"/"SG" together`)
		}
		d.bracket = true
	case "RN", "rn":
		d.roman = true
	case "V":
		if d.decimal {
			return numSyntax(`cannot use "V" and decimal point together`)
		}
		d.multiF = true
	case "EEEE":
		if d.eeee {
			return numSyntax(`cannot use "EEEE" twice`)
		}
		if d.blank || d.fill || d.lsignF || d.bracket || d.minus || d.plus || d.roman || d.multiF {
			return numSyntax(`"EEEE" is incompatible with other formats`).
				WithDetail(`"EEEE" may only be used together with digit and decimal point patterns.`)
		}
		d.eeee = true
	}
	return nil
}

// romanNumeral is int_to_roman: 15 '#' outside 1..3999.
func romanNumeral(v int64) string {
	if v < 1 || v > 3999 {
		return strings.Repeat("#", 15)
	}
	ones := []string{"", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"}
	tens := []string{"", "X", "XX", "XXX", "XL", "L", "LX", "LXX", "LXXX", "XC"}
	hund := []string{"", "C", "CC", "CCC", "CD", "D", "DC", "DCC", "DCCC", "CM"}
	return strings.Repeat("M", int(v/1000)) + hund[v/100%10] + tens[v/10%10] + ones[v%10]
}

// numOverflow is the '#' filler for a number wider than the pattern.
func numOverflow(d *numDesc) string {
	b := []byte(strings.Repeat("#", d.pre+d.post+1))
	b[d.pre] = '.'
	return string(b)
}

// numLayout splits a printed number ("-123.45") into sign and digits and
// computes the leading spaces, or the overflow filler.
func numLayout(d *numDesc, printed string) (numstr string, sign byte, preSpaces int) {
	sign = '+'
	numstr = printed
	if strings.HasPrefix(numstr, "-") {
		sign, numstr = '-', numstr[1:]
	}
	preLen := len(numstr)
	if k := strings.IndexByte(numstr, '.'); k >= 0 {
		preLen = k
	}
	switch {
	case preLen < d.pre:
		preSpaces = d.pre - preLen
	case preLen > d.pre:
		numstr = numOverflow(d)
	}
	return numstr, sign, preSpaces
}

// eeeeNaN is the filler for NaN and infinities under EEEE.
func eeeeNaN(d *numDesc) string {
	b := []byte(strings.Repeat("#", d.pre+d.post+6))
	b[0] = ' '
	b[d.pre+1] = '.'
	return string(b)
}

// toCharNumber formats a numeric (integers are numerics too).
func toCharNumber(v *apd.Decimal, f string) (string, error) {
	nodes, d, err := numCompiled(f)
	if err != nil {
		return "", err
	}
	if len(f) == 0 {
		return "", nil
	}
	switch {
	case d.roman:
		var r apd.Decimal
		if _, err := apd.BaseContext.WithPrecision(1000).RoundToIntegralValue(&r, v); err != nil {
			return "", err
		}
		n, err := r.Int64()
		if err != nil || n > math.MaxInt32 || n < math.MinInt32 {
			return "", pgerr.New(pgerr.NumericValueOutOfRange, "integer out of range")
		}
		return numProc(nodes, d, romanNumeral(n), 0, 0), nil
	case d.eeee:
		if v.Form != apd.Finite {
			return eeeeNaN(d), nil
		}
		s := numericSci(v, d.post)
		if !strings.HasPrefix(s, "-") {
			s = " " + s
		}
		return s, nil
	}
	val := v
	if d.multiF {
		val = new(apd.Decimal)
		if _, err := apd.BaseContext.WithPrecision(1000).Mul(val, v, apd.New(1, int32(d.multi))); err != nil {
			return "", err
		}
		d.pre += d.multi
	}
	printed := "NaN"
	switch val.Form {
	case apd.Finite:
		r, err := numericRound(val, int64(d.post), false)
		if err != nil {
			return "", err
		}
		printed = r.Text('f')
		if r.IsZero() {
			printed = strings.TrimPrefix(printed, "-")
		}
	case apd.Infinite:
		printed = "Infinity"
		if val.Negative {
			printed = "-Infinity"
		}
	}
	numstr, sign, pre := numLayout(d, printed)
	return numProc(nodes, d, numstr, sign, pre), nil
}

// numericSci is numeric_out_sci: one digit, scale decimals, e±NN.
func numericSci(v *apd.Decimal, scale int) string {
	if v.IsZero() {
		s := "0"
		if scale > 0 {
			s += "." + strings.Repeat("0", scale)
		}
		return s + "e+00"
	}
	var a apd.Decimal
	a.Abs(v)
	exp := int64(a.NumDigits()) + int64(a.Exponent) - 1
	var r apd.Decimal
	ctx := apd.BaseContext.WithPrecision(uint32(scale + 1))
	ctx.Rounding = apd.RoundHalfUp
	ctx.Round(&r, &a)
	var m apd.Decimal
	m.Set(&r)
	m.Exponent -= int32(exp)
	var q apd.Decimal
	apd.BaseContext.WithPrecision(uint32(scale+2)).Quantize(&q, &m, int32(-scale))
	s := q.Text('f')
	sign := "+"
	if exp < 0 {
		sign, exp = "-", -exp
	}
	es := strconv.FormatInt(exp, 10)
	if len(es) < 2 {
		es = "0" + es
	}
	if v.Negative {
		s = "-" + s
	}
	return s + "e" + sign + es
}

// toCharFloat formats a float8 (digits 15) or float4 (digits 6) as
// float8_to_char does: at most that many significant digits are printed.
func toCharFloat(x float64, f string, digits int) (string, error) {
	nodes, d, err := numCompiled(f)
	if err != nil {
		return "", err
	}
	if len(f) == 0 {
		return "", nil
	}
	switch {
	case d.roman:
		return numProc(nodes, d, romanNumeral(int64(math.RoundToEven(x))), 0, 0), nil
	case d.eeee:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return eeeeNaN(d), nil
		}
		s := strconv.FormatFloat(x, 'e', d.post, 64)
		if !strings.HasPrefix(s, "-") {
			s = " " + s
		}
		return s, nil
	}
	if d.multiF {
		x *= math.Pow(10, float64(d.multi))
		d.pre += d.multi
	}
	preLen := len(pgFormatFloat(math.Abs(x), 0))
	if preLen >= digits {
		d.post = 0
	} else if preLen+d.post > digits {
		d.post = digits - preLen
	}
	printed := pgFormatFloat(x, d.post)
	numstr, sign, pre := numLayout(d, printed)
	return numProc(nodes, d, numstr, sign, pre), nil
}

// pgFormatFloat is PostgreSQL's snprintf("%.*f"): infinities and NaN print
// as Infinity, -Infinity and NaN.
func pgFormatFloat(x float64, prec int) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "Infinity"
	case math.IsInf(x, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

// lastRelevant is get_last_relevant_decnum: the index of the last nonzero
// digit after the point, or of the point; -1 without one.
func lastRelevant(num string) int {
	p := strings.IndexByte(num, '.')
	if p < 0 {
		return -1
	}
	r := p
	for i := p + 1; i < len(num); i++ {
		if num[i] != '0' {
			r = i
		}
	}
	return r
}
