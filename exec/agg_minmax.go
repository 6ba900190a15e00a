package exec

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/types"
)

// newMinMax returns a min (max when isMax) state specialized for t.
func newMinMax(t types.T, isMax bool) aggState {
	sign := 1
	if isMax {
		sign = -1
	}
	switch {
	case intLike(t):
		return &mmInt{sign: int64(sign)}
	case t.IsFloat():
		return &mmFloat{sign: sign}
	case t.Kind == types.Numeric:
		return &mmNumeric{sign: sign}
	case t.Kind == types.Interval:
		return &mmInterval{sign: sign}
	case t.Kind == types.Bool:
		return &boolAgg{and: !isMax}
	case t.IsString():
		return &mmString{sign: sign, bpchar: t.Kind == types.Bpchar}
	}
	return &mmGeneric{sign: sign, t: t}
}

type mmInt struct {
	sign int64
	v    []int64
	has  []bool
}

func (m *mmInt) grow(n int) { m.v = growSlice(m.v, n); m.has = growSlice(m.has, n) }

func (m *mmInt) update(args []arrow.Array, gids []int32) error {
	x := args[0]
	vals, _ := int64Values(x)
	for i, g := range gids {
		if g < 0 || x.IsNull(i) {
			continue
		}
		v := vals[i]
		if !m.has[g] || (m.sign > 0 && v < m.v[g]) || (m.sign < 0 && v > m.v[g]) {
			m.v[g], m.has[g] = v, true
		}
	}
	return nil
}

func (m *mmInt) appendResult(b array.Builder, g int) error {
	if !m.has[g] {
		b.AppendNull()
	} else {
		appendInt64Like(b, m.v[g])
	}
	return nil
}

type mmFloat struct {
	sign int
	v    []float64
	has  []bool
}

func (m *mmFloat) grow(n int) { m.v = growSlice(m.v, n); m.has = growSlice(m.has, n) }

func (m *mmFloat) update(args []arrow.Array, gids []int32) error {
	x := args[0]
	for i, g := range gids {
		if g < 0 || x.IsNull(i) {
			continue
		}
		var v float64
		if f, ok := x.(*array.Float32); ok {
			v = float64(f.Value(i))
		} else {
			v = x.(*array.Float64).Value(i)
		}
		if !m.has[g] || cmpFloat(v, m.v[g])*m.sign <= 0 { // ties take the newer value, as PostgreSQL's float8smaller does
			m.v[g], m.has[g] = v, true
		}
	}
	return nil
}

func (m *mmFloat) appendResult(b array.Builder, g int) error {
	if !m.has[g] {
		b.AppendNull()
	} else {
		appendFloat(b, m.v[g])
	}
	return nil
}

type mmString struct {
	sign   int
	bpchar bool // compare without trailing spaces
	v      []string
	has    []bool
}

func (m *mmString) grow(n int) { m.v = growSlice(m.v, n); m.has = growSlice(m.has, n) }

func (m *mmString) update(args []arrow.Array, gids []int32) error {
	x := args[0].(*array.String)
	for i, g := range gids {
		if g < 0 || x.IsNull(i) {
			continue
		}
		v := x.Value(i)
		if !m.has[g] {
			m.v[g], m.has[g] = strings.Clone(v), true
			continue
		}
		a, b := v, m.v[g]
		if m.bpchar {
			a, b = strings.TrimRight(a, " "), strings.TrimRight(b, " ")
		}
		if strings.Compare(a, b)*m.sign < 0 {
			m.v[g] = strings.Clone(v)
		}
	}
	return nil
}

func (m *mmString) appendResult(b array.Builder, g int) error {
	if !m.has[g] {
		b.AppendNull()
	} else {
		b.(*array.StringBuilder).Append(m.v[g])
	}
	return nil
}

type mmNumeric struct {
	sign int
	d    []apd.Decimal
	nan  []bool
	text []string
	has  []bool
	tmp  apd.Decimal
}

func (m *mmNumeric) grow(n int) {
	m.d = growSlice(m.d, n)
	m.nan = growSlice(m.nan, n)
	m.text = growSlice(m.text, n)
	m.has = growSlice(m.has, n)
}

func (m *mmNumeric) update(args []arrow.Array, gids []int32) error {
	x := args[0].(*array.String)
	for i, g := range gids {
		if g < 0 || x.IsNull(i) {
			continue
		}
		s := x.Value(i)
		nan := parseNumeric(s, &m.tmp)
		if !m.has[g] || cmpNumeric(&m.tmp, nan, &m.d[g], m.nan[g])*m.sign <= 0 { // ties: newer, as PostgreSQL
			m.d[g].Set(&m.tmp)
			m.nan[g], m.text[g], m.has[g] = nan, strings.Clone(s), true
		}
	}
	return nil
}

func (m *mmNumeric) appendResult(b array.Builder, g int) error {
	if !m.has[g] {
		b.AppendNull()
	} else {
		b.(*array.StringBuilder).Append(m.text[g])
	}
	return nil
}

type mmInterval struct {
	sign int
	v    []arrow.MonthDayNanoInterval
	has  []bool
}

func (m *mmInterval) grow(n int) { m.v = growSlice(m.v, n); m.has = growSlice(m.has, n) }

func (m *mmInterval) update(args []arrow.Array, gids []int32) error {
	x := args[0].(*array.MonthDayNanoInterval)
	for i, g := range gids {
		if g < 0 || x.IsNull(i) {
			continue
		}
		v := x.Value(i)
		if !m.has[g] || cmpInterval(v, m.v[g])*m.sign <= 0 { // ties: newer, as PostgreSQL
			m.v[g], m.has[g] = v, true
		}
	}
	return nil
}

func (m *mmInterval) appendResult(b array.Builder, g int) error {
	if !m.has[g] {
		b.AppendNull()
	} else {
		b.(*array.MonthDayNanoIntervalBuilder).Append(m.v[g])
	}
	return nil
}

// mmGeneric keeps the best row as a one-element array slice, compared as
// Go values (arrays).
type mmGeneric struct {
	sign int
	t    types.T
	v    []arrow.Array // one-row slices
	best []types.Value
}

func (m *mmGeneric) grow(n int) { m.v = growSlice(m.v, n); m.best = growSlice(m.best, n) }

func (m *mmGeneric) update(args []arrow.Array, gids []int32) error {
	x := args[0]
	for i, g := range gids {
		if g < 0 || x.IsNull(i) {
			continue
		}
		v := types.ValueAt(x, i, m.t)
		if m.v[g] == nil || types.Compare(v, m.best[g], m.t)*m.sign <= 0 {
			m.v[g], m.best[g] = array.NewSlice(x, int64(i), int64(i+1)), v
		}
	}
	return nil
}

func (m *mmGeneric) appendResult(b array.Builder, g int) error {
	if m.v[g] == nil {
		b.AppendNull()
	} else {
		copyValue(b, m.v[g], 0)
	}
	return nil
}

// boolAgg is bool_and / every (and) and bool_or (or); also min/max(boolean).
type boolAgg struct {
	and bool
	v   []bool
	has []bool
}

func (m *boolAgg) grow(n int) { m.v = growSlice(m.v, n); m.has = growSlice(m.has, n) }

func (m *boolAgg) update(args []arrow.Array, gids []int32) error {
	x := args[0].(*array.Boolean)
	for i, g := range gids {
		if g < 0 || x.IsNull(i) {
			continue
		}
		v := x.Value(i)
		if !m.has[g] {
			m.v[g], m.has[g] = v, true
		} else if m.and {
			m.v[g] = m.v[g] && v
		} else {
			m.v[g] = m.v[g] || v
		}
	}
	return nil
}

func (m *boolAgg) appendResult(b array.Builder, g int) error {
	if !m.has[g] {
		b.AppendNull()
	} else {
		b.(*array.BooleanBuilder).Append(m.v[g])
	}
	return nil
}
