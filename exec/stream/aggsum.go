package stream

import (
	"math"
	"math/big"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// count, sum, avg and bool_and/bool_or states. Each keeps, per group, what
// an insert adds and a retraction subtracts, so both are O(1).

// countCol is count(*) (star) or count(x).
type countCol struct {
	star bool
	n    []int64
}

func (c *countCol) grow(n int)    { c.n = growSlice(c.n, n) }
func (c *countCol) reset(g int32) { c.n[g] = 0 }

func (c *countCol) results(gs []int32, out []cell) error {
	for i, g := range gs {
		out[i] = intCell(c.n[g])
	}
	return nil
}

func (c *countCol) update(arg arrow.Array, gids []int32, signs []int64) error {
	if c.star || arg.NullN() == 0 {
		c.add(gids, signs)
		return nil
	}
	cnt := c.n
	for i, g := range gids {
		if g >= 0 && arg.IsValid(i) {
			cnt[g] += sgn(signs, i)
		}
	}
	return nil
}

// add adds signs[i] (signs nil: 1) to the count of group gids[i], for
// every gids[i] >= 0: rows counted whatever their value.
func (c *countCol) add(gids []int32, signs []int64) {
	cnt := c.n
	if signs == nil {
		for _, g := range gids {
			if g >= 0 {
				cnt[g]++
			}
		}
		return
	}
	for i, g := range gids {
		if g >= 0 {
			cnt[g] += signs[i]
		}
	}
}

// int128 is a signed 128-bit two's complement integer: sums of bigints
// never overflow it, and retractions are exact.
type int128 struct {
	lo uint64
	hi int64
}

func (s *int128) add(v int64) {
	var c uint64
	s.lo, c = bits.Add64(s.lo, uint64(v), 0)
	s.hi += v>>63 + int64(c)
}

func (s *int128) sub(v int64) {
	var b uint64
	s.lo, b = bits.Sub64(s.lo, uint64(v), 0)
	s.hi -= v>>63 + int64(b)
}

func (s int128) isInt64() bool { return s.hi == int64(s.lo)>>63 }

func (s int128) bigInt() *big.Int {
	b := new(big.Int).SetInt64(s.hi)
	b.Lsh(b, 64)
	return b.Add(b, new(big.Int).SetUint64(s.lo))
}

func (s int128) decimal(d *apd.Decimal) {
	if s.isInt64() {
		d.SetInt64(int64(s.lo))
		return
	}
	b := s.bigInt()
	d.Exponent = 0
	d.Form = apd.Finite
	d.Negative = b.Sign() < 0
	d.Coeff.SetMathBigInt(b.Abs(b))
}

// intSumMode is what an intSumCol returns.
type intSumMode uint8

const (
	sumToInt8    intSumMode = iota // sum(int2/int4): bigint, 22003 when out of range
	sumToNumeric                   // sum(int8): numeric
	avgToNumeric                   // avg(int2/int4/int8): numeric
)

// intSumCol is sum and avg over integers: a 128-bit sum and a count of
// non-NULL values per group.
type intSumCol struct {
	mode intSumMode
	s    []isumN
	d    apd.Decimal
}

type isumN struct {
	s int128
	n int64
}

func (c *intSumCol) grow(n int)    { c.s = growSlice(c.s, n) }
func (c *intSumCol) reset(g int32) { c.s[g] = isumN{} }

func (c *intSumCol) update(arg arrow.Array, gids []int32, signs []int64) error {
	switch x := arg.(type) {
	case *array.Int64:
		sumInts(c, x.Int64Values(), arg, gids, signs)
	case *array.Int32:
		sumInts(c, x.Int32Values(), arg, gids, signs)
	case *array.Int16:
		sumInts(c, x.Int16Values(), arg, gids, signs)
	default:
		return pgerr.Internal("stream: integer sum over %s", arg.DataType())
	}
	return nil
}

func sumInts[T int16 | int32 | int64](c *intSumCol, vals []T, a arrow.Array, gids []int32, signs []int64) {
	s := c.s
	nulls := a.NullN() > 0
	if signs == nil && !nulls {
		for i, g := range gids {
			if g >= 0 {
				p := &s[g]
				p.s.add(int64(vals[i]))
				p.n++
			}
		}
		return
	}
	for i, g := range gids {
		if g < 0 || (nulls && a.IsNull(i)) {
			continue
		}
		p := &s[g]
		if signs != nil && signs[i] < 0 {
			p.s.sub(int64(vals[i]))
			p.n--
		} else {
			p.s.add(int64(vals[i]))
			p.n++
		}
	}
}

func (c *intSumCol) result(g int32) (cell, error) {
	s, n := c.s[g].s, c.s[g].n
	if n == 0 {
		return nullCell, nil
	}
	switch c.mode {
	case sumToInt8:
		if !s.isInt64() {
			return nullCell, pgerr.New(pgerr.NumericValueOutOfRange, "bigint out of range")
		}
		return intCell(int64(s.lo)), nil
	case sumToNumeric:
		return wideCell(s), nil
	}
	s.decimal(&c.d)
	txt, err := exec.AvgNumericText(&c.d, n)
	if err != nil {
		return nullCell, err
	}
	return strCell(txt), nil
}

// fsum is one group's float sum: the finite values' running sum apart from
// counts of infinities and NaNs, so that retracting one of those restores
// the finite sum.
type fsum struct {
	sum              float64
	n                int64
	pinf, ninf, nans int64
}

func (p *fsum) special(v float64, sign int64) {
	switch {
	case v != v:
		p.nans += sign
	case v > 0:
		p.pinf += sign
	default:
		p.ninf += sign
	}
}

// floatSumCol is sum(float4) (accumulated in float4, as PostgreSQL does;
// f32), sum(float8) and avg over both (accumulated in float8).
type floatSumCol struct {
	f32, avg bool
	s        []fsum
}

func (c *floatSumCol) grow(n int)    { c.s = growSlice(c.s, n) }
func (c *floatSumCol) reset(g int32) { c.s[g] = fsum{} }

func (c *floatSumCol) update(arg arrow.Array, gids []int32, signs []int64) error {
	switch x := arg.(type) {
	case *array.Float64:
		sumFloats(c, x.Float64Values(), arg, gids, signs)
	case *array.Float32:
		sumFloats(c, x.Float32Values(), arg, gids, signs)
	default:
		return pgerr.Internal("stream: float sum over %s", arg.DataType())
	}
	return nil
}

func sumFloats[T float32 | float64](c *floatSumCol, vals []T, a arrow.Array, gids []int32, signs []int64) {
	s := c.s
	nulls := a.NullN() > 0
	if signs == nil && !nulls && !c.f32 {
		for i, g := range gids {
			if g < 0 {
				continue
			}
			v := float64(vals[i])
			p := &s[g]
			p.n++
			if v-v == 0 { // finite
				p.sum += v
			} else {
				p.special(v, 1)
			}
		}
		return
	}
	for i, g := range gids {
		if g < 0 || (nulls && a.IsNull(i)) {
			continue
		}
		v, sign := float64(vals[i]), sgn(signs, i)
		p := &s[g]
		p.n += sign
		switch {
		case p.n == 0:
			*p = fsum{} // empty again: restart from exactly 0
		case v-v != 0:
			p.special(v, sign)
		case c.f32:
			p.sum = float64(float32(p.sum) + float32(sign)*float32(v))
		default:
			p.sum += float64(sign) * v
		}
	}
}

func (c *floatSumCol) result(g int32) (cell, error) {
	p := c.s[g]
	if p.n == 0 {
		return nullCell, nil
	}
	v := p.sum
	if p.nans > 0 {
		v = math.NaN()
	}
	if p.pinf > 0 {
		v += math.Inf(1)
	}
	if p.ninf > 0 {
		v += math.Inf(-1) // +Inf + -Inf is NaN, as PostgreSQL's sum
	}
	switch {
	case c.avg:
		v /= float64(p.n)
	case c.f32:
		v = float64(float32(v))
	}
	return floatCell(v), nil
}

// nsum is one group's numeric sum: the finite values' exact sum, counts of
// NaNs and infinities, and how many live values have each display scale
// (the sum prints with the largest, as PostgreSQL's does).
type nsum struct {
	sum              apd.Decimal
	n                int64
	nans, pinf, ninf int64
	scales           []scaleCount
}

type scaleCount struct {
	scale int32
	n     int64
}

func (p *nsum) addScale(scale int32, sign int64) {
	for i := range p.scales {
		if p.scales[i].scale == scale {
			p.scales[i].n += sign
			if p.scales[i].n == 0 {
				p.scales = append(p.scales[:i], p.scales[i+1:]...)
			}
			return
		}
	}
	p.scales = append(p.scales, scaleCount{scale, sign})
}

func (p *nsum) maxScale() int32 {
	var m int32
	for _, s := range p.scales {
		m = max(m, s.scale)
	}
	return m
}

// numericSumCol is sum and avg over numeric, exact.
type numericSumCol struct {
	avg bool
	s   []nsum
	v   apd.Decimal
}

func (c *numericSumCol) grow(n int)    { c.s = growSlice(c.s, n) }
func (c *numericSumCol) reset(g int32) { c.s[g] = nsum{} }

func (c *numericSumCol) update(arg arrow.Array, gids []int32, signs []int64) error {
	x, ok := arg.(*array.String)
	if !ok {
		return pgerr.Internal("stream: numeric sum over %s", arg.DataType())
	}
	for i, g := range gids {
		if g < 0 || x.IsNull(i) {
			continue
		}
		sign := sgn(signs, i)
		p := &c.s[g]
		p.n += sign
		switch txt := x.Value(i); txt {
		case "NaN":
			p.nans += sign
		case "Infinity":
			p.pinf += sign
		case "-Infinity":
			p.ninf += sign
		default:
			if _, _, err := c.v.SetString(txt); err != nil {
				return pgerr.Internal("stream: stored numeric %q: %v", txt, err)
			}
			var err error
			if sign > 0 {
				_, err = apd.BaseContext.Add(&p.sum, &p.sum, &c.v)
			} else {
				_, err = apd.BaseContext.Sub(&p.sum, &p.sum, &c.v)
			}
			if err != nil {
				return pgerr.Wrap(err, pgerr.NumericValueOutOfRange, "value overflows numeric format")
			}
			p.addScale(max(-c.v.Exponent, 0), sign)
		}
		if p.n == 0 {
			*p = nsum{}
		}
	}
	return nil
}

func (c *numericSumCol) result(g int32) (cell, error) {
	p := &c.s[g]
	switch {
	case p.n == 0:
		return nullCell, nil
	case p.nans > 0 || (p.pinf > 0 && p.ninf > 0):
		return strCell("NaN"), nil
	case p.pinf > 0:
		return strCell("Infinity"), nil
	case p.ninf > 0:
		return strCell("-Infinity"), nil
	}
	// Values of larger scale may have come and gone: print the sum with
	// the largest scale among the live values (dropping zeros only).
	var d apd.Decimal
	d.Set(&p.sum)
	if want := -p.maxScale(); d.Exponent < want {
		ctx := apd.BaseContext.WithPrecision(uint32(d.NumDigits()) + 1)
		if _, err := ctx.Quantize(&d, &d, want); err != nil {
			return nullCell, pgerr.Internal("stream: numeric sum scale: %v", err)
		}
	}
	if d.IsZero() {
		d.Negative = false
	}
	if !c.avg {
		if err := types.CheckNumericRange(&d); err != nil {
			return nullCell, err
		}
		return strCell(d.Text('f')), nil
	}
	txt, err := exec.AvgNumericText(&d, p.n)
	if err != nil {
		return nullCell, err
	}
	return strCell(txt), nil
}

// isum is one group's interval sum, each field apart (months and days are
// checked against int32 when the result is read).
type isum struct {
	months, days, nanos, n int64
}

// intervalSumCol is sum and avg over interval.
type intervalSumCol struct {
	avg bool
	s   []isum
}

func (c *intervalSumCol) grow(n int)    { c.s = growSlice(c.s, n) }
func (c *intervalSumCol) reset(g int32) { c.s[g] = isum{} }

func (c *intervalSumCol) update(arg arrow.Array, gids []int32, signs []int64) error {
	x, ok := arg.(*array.MonthDayNanoInterval)
	if !ok {
		return pgerr.Internal("stream: interval sum over %s", arg.DataType())
	}
	for i, g := range gids {
		if g < 0 || x.IsNull(i) {
			continue
		}
		v, sign := x.Value(i), sgn(signs, i)
		p := &c.s[g]
		p.months += sign * int64(v.Months)
		p.days += sign * int64(v.Days)
		p.nanos += sign * v.Nanoseconds
		p.n += sign
	}
	return nil
}

func (c *intervalSumCol) result(g int32) (cell, error) {
	p := c.s[g]
	if p.n == 0 {
		return nullCell, nil
	}
	if p.months != int64(int32(p.months)) || p.days != int64(int32(p.days)) {
		return nullCell, pgerr.New(pgerr.DatetimeFieldOverflow, "interval out of range")
	}
	v := arrow.MonthDayNanoInterval{Months: int32(p.months), Days: int32(p.days), Nanoseconds: p.nanos}
	if c.avg {
		v = exec.AvgInterval(v, p.n)
	}
	return intervalCell(v), nil
}

// boolCol is bool_and (and) and bool_or: counts of true and false values.
type boolCol struct {
	and  bool
	t, f []int64
}

func (c *boolCol) grow(n int)    { c.t, c.f = growSlice(c.t, n), growSlice(c.f, n) }
func (c *boolCol) reset(g int32) { c.t[g], c.f[g] = 0, 0 }

func (c *boolCol) update(arg arrow.Array, gids []int32, signs []int64) error {
	x, ok := arg.(*array.Boolean)
	if !ok {
		return pgerr.Internal("stream: bool_and/bool_or over %s", arg.DataType())
	}
	for i, g := range gids {
		if g < 0 || x.IsNull(i) {
			continue
		}
		if x.Value(i) {
			c.t[g] += sgn(signs, i)
		} else {
			c.f[g] += sgn(signs, i)
		}
	}
	return nil
}

func (c *boolCol) result(g int32) (cell, error) {
	t, f := c.t[g], c.f[g]
	switch {
	case t+f == 0:
		return nullCell, nil
	case c.and && f == 0, !c.and && t > 0:
		return intCell(1), nil
	}
	return intCell(0), nil
}

func (c *intSumCol) results(gs []int32, out []cell) error {
	for i, g := range gs {
		v, err := c.result(g)
		if err != nil {
			return err
		}
		out[i] = v
	}
	return nil
}

func (c *floatSumCol) results(gs []int32, out []cell) error {
	for i, g := range gs {
		v, err := c.result(g)
		if err != nil {
			return err
		}
		out[i] = v
	}
	return nil
}

func (c *numericSumCol) results(gs []int32, out []cell) error {
	for i, g := range gs {
		v, err := c.result(g)
		if err != nil {
			return err
		}
		out[i] = v
	}
	return nil
}

func (c *intervalSumCol) results(gs []int32, out []cell) error {
	for i, g := range gs {
		v, err := c.result(g)
		if err != nil {
			return err
		}
		out[i] = v
	}
	return nil
}

func (c *boolCol) results(gs []int32, out []cell) error {
	for i, g := range gs {
		v, err := c.result(g)
		if err != nil {
			return err
		}
		out[i] = v
	}
	return nil
}
