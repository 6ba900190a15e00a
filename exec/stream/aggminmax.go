package stream

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// min and max. Over an input that may retract, each group keeps the
// ordered multiset of its values (value -> rows), so that retracting the
// extreme finds the next one; over an append-only input (HashAgg.AppendOnly)
// only the running extreme is kept.
//
// Values are ordered by PostgreSQL's ordering of their type, then by their
// identity, so that values equal to SQL but spelled apart (numeric 1.0 and
// 1.00, float 0 and -0, intervals 1 day and 24 hours) are distinct in the
// multiset and a retraction removes exactly the one it names. Which of two
// such values min/max returns is unspecified (PostgreSQL returns the later
// one of its input order); here it is the larger (max) or smaller (min) in
// that identity order.

// sortedSet is an ordered multiset of keys: sorted blocks of at most
// 2*setBlock entries (a two-level sorted list) and each block's last key,
// so that an insert or a retraction costs O(log n + setBlock) and min/max
// are at the ends.
type sortedSet[K any] struct {
	blocks [][]setEntry[K]
	lasts  []K
	keys   int // distinct keys, over the blocks
}

type setEntry[K any] struct {
	k K
	n int64
}

const setBlock = 32

var errRetractAbsent = pgerr.Internal("stream: min/max retracts a value it never saw")

// add adds sign (+1 or -1) rows of k; own copies k when it is stored.
func (s *sortedSet[K]) add(k K, sign int64, cmp func(a, b K) int, own func(K) K) error {
	nb := len(s.blocks)
	if nb == 0 {
		if sign < 0 {
			return errRetractAbsent
		}
		k = own(k)
		s.blocks = append(s.blocks, []setEntry[K]{{k, 1}})
		s.lasts = append(s.lasts, k)
		s.keys++
		return nil
	}
	// the first block whose last key is >= k, else the last block
	bi := nb - 1
	if nb > 1 && cmp(s.lasts[nb-1], k) >= 0 {
		lo, hi := 0, nb-1
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if cmp(s.lasts[m], k) < 0 {
				lo = m + 1
			} else {
				hi = m
			}
		}
		bi = lo
	}
	b := s.blocks[bi]
	lo, hi := 0, len(b)
	if c := cmp(s.lasts[bi], k); c < 0 {
		lo = hi // past the end: the common case of a new maximum
	} else if c == 0 {
		lo = hi - 1
	} else {
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if cmp(b[m].k, k) < 0 {
				lo = m + 1
			} else {
				hi = m
			}
		}
	}
	if lo < len(b) && cmp(b[lo].k, k) == 0 {
		b[lo].n += sign
		if b[lo].n > 0 {
			return nil
		}
		b = slices.Delete(b, lo, lo+1)
		s.keys--
		if len(b) == 0 {
			s.blocks = slices.Delete(s.blocks, bi, bi+1)
			s.lasts = slices.Delete(s.lasts, bi, bi+1)
			return nil
		}
		s.blocks[bi], s.lasts[bi] = b, b[len(b)-1].k
		return nil
	}
	if sign < 0 {
		return errRetractAbsent
	}
	b = slices.Insert(b, lo, setEntry[K]{own(k), 1})
	s.keys++
	if len(b) > 2*setBlock {
		tail := slices.Clone(b[setBlock:])
		clear(b[setBlock:])
		b = b[:setBlock]
		s.blocks = slices.Insert(s.blocks, bi+1, tail)
		s.lasts = slices.Insert(s.lasts, bi+1, tail[len(tail)-1].k)
	}
	s.blocks[bi], s.lasts[bi] = b, b[len(b)-1].k
	return nil
}

// extreme returns the largest (max) or smallest key.
func (s *sortedSet[K]) extreme(max bool) (K, bool) {
	if len(s.blocks) == 0 {
		var zero K
		return zero, false
	}
	if max {
		return s.lasts[len(s.lasts)-1], true
	}
	return s.blocks[0][0].k, true
}

// len is the number of distinct keys.
func (s *sortedSet[K]) len() int { return s.keys }

// each calls f with every key, in order, and its row count.
func (s *sortedSet[K]) each(f func(k K, rows int64)) {
	for _, b := range s.blocks {
		for _, e := range b {
			f(e.k, e.n)
		}
	}
}

// newMinMax returns min (max when isMax) over type t.
func newMinMax(t types.T, isMax, appendOnly bool) aggCol {
	switch storageOf(t) {
	case stInt, stFloat, stBool:
		return &mmWords{float: t.IsFloat(), max: isMax, appendOnly: appendOnly}
	}
	var c aggCol
	switch {
	case t.Kind == types.Bpchar:
		c = newMMOrd(isMax, appendOnly, ordCodec[string]{load: loadString, own: strings.Clone, cmp: cmpBpchar, cell: strCell, enc: appendStrKey, dec: decStr})
	case storageOf(t) == stStr && t.Kind != types.Numeric:
		c = newMMOrd(isMax, appendOnly, ordCodec[string]{load: loadString, own: strings.Clone, cmp: strings.Compare, cell: strCell, enc: appendStrKey, dec: decStr})
	case t.Kind == types.Bytea:
		c = newMMOrd(isMax, appendOnly, ordCodec[string]{load: loadBytes, own: strings.Clone, cmp: strings.Compare, cell: strCell, enc: appendStrKey, dec: decStr})
	case t.Kind == types.Numeric:
		c = newMMOrd(isMax, appendOnly, ordCodec[numKey]{load: loadNumeric, own: ownNumeric, cmp: cmpNumeric, cell: func(k numKey) cell { return strCell(k.s) }, enc: encNumeric, dec: decNumeric})
	case t.Kind == types.Interval:
		c = newMMOrd(isMax, appendOnly, ordCodec[arrow.MonthDayNanoInterval]{load: loadInterval, own: same[arrow.MonthDayNanoInterval], cmp: cmpInterval, cell: intervalCell, enc: encInterval, dec: decInterval})
	default:
		enc, dec := valueCodec(t)
		c = newMMOrd(isMax, appendOnly, ordCodec[types.Value]{
			enc:  enc,
			dec:  dec,
			load: func(a arrow.Array, i int) types.Value { return types.ValueAt(a, i, t) },
			own:  ownValue,
			cmp: func(x, y types.Value) int {
				if c := types.Compare(x, y, t); c != 0 {
					return c
				}
				return strings.Compare(string(appendValueKey(nil, x)), string(appendValueKey(nil, y)))
			},
			cell: func(v types.Value) cell { return cell{v: v} },
		})
	}
	return c
}

// mmWords is min/max over types kept as one word: integers, date, time,
// timestamps, oids, bool, floats. Words are stored order-preserving
// (uint64 order is the type's order: sign bit flipped for integers, floats
// mapped so that -0 < 0 and NaN is above +Infinity).
type mmWords struct {
	float, max, appendOnly bool
	best                   []uint64 // appendOnly, where has
	has                    bitmap
	sets                   []sortedSet[uint64]
	buf                    []int64
	ord                    []uint64
}

func (m *mmWords) grow(n int) {
	if m.appendOnly {
		m.best = growSlice(m.best, n)
		m.has.grow(n)
	} else {
		m.sets = growSlice(m.sets, n)
	}
}

func (m *mmWords) reset(g int32) {
	if m.appendOnly {
		m.has.set(g, false)
	} else {
		m.sets[g] = sortedSet[uint64]{}
	}
}

// ordWords maps a's values to order-preserving words.
func (m *mmWords) ordWords(a arrow.Array) []uint64 {
	n := a.Len()
	m.ord = growSlice(m.ord[:0], n)
	out := m.ord
	switch x := a.(type) {
	case *array.Float64:
		for i, v := range x.Float64Values() {
			out[i] = floatOrd(v)
		}
	case *array.Float32:
		for i, v := range x.Float32Values() {
			out[i] = floatOrd(float64(v))
		}
	case *array.Boolean:
		for i := range out {
			out[i] = 1 << 63 // false, as the integer 0
			if x.Value(i) {
				out[i] = 1<<63 | 1
			}
		}
	default:
		for i, v := range wordsOf(a, &m.buf) {
			out[i] = uint64(v) ^ 1<<63
		}
	}
	return out
}

// floatOrd maps a float to a word in PostgreSQL's float order (NaN last),
// keeping -0 and 0 apart.
func floatOrd(f float64) uint64 {
	b := canonFloatBits(f)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

func (m *mmWords) update(arg arrow.Array, gids []int32, signs []int64) error {
	w := m.ordWords(arg)
	nulls := arg.NullN() > 0
	if m.appendOnly {
		best, has := m.best, m.has
		for i, g := range gids {
			if g < 0 || (nulls && arg.IsNull(i)) {
				continue
			}
			if signs != nil && signs[i] < 0 {
				return pgerr.Internal("stream: min/max over an append-only input got a retraction")
			}
			if v, b := w[i], best[g]; !has.get(g) || (m.max && v > b) || (!m.max && v < b) {
				best[g] = v
				has.set(g, true)
			}
		}
		return nil
	}
	for i, g := range gids {
		if g < 0 || (nulls && arg.IsNull(i)) {
			continue
		}
		if err := m.sets[g].add(w[i], sgn(signs, i), cmp.Compare[uint64], same[uint64]); err != nil {
			return err
		}
	}
	return nil
}

func (m *mmWords) result(g int32) (cell, error) {
	var v uint64
	if m.appendOnly {
		if !m.has.get(g) {
			return nullCell, nil
		}
		v = m.best[g]
	} else {
		var ok bool
		if v, ok = m.sets[g].extreme(m.max); !ok {
			return nullCell, nil
		}
	}
	return m.wordCell(v), nil
}

// wordFloatBits is floatOrd's inverse: the float's bits.
func wordFloatBits(w uint64) uint64 {
	if w>>63 != 0 {
		return w &^ (1 << 63)
	}
	return ^w
}

// wordFloat is floatOrd's inverse.
func wordFloat(w uint64) float64 { return math.Float64frombits(wordFloatBits(w)) }

// ordCodec is how mmOrd handles keys of type K.
type ordCodec[K any] struct {
	load func(a arrow.Array, i int) K // row i, not NULL (may view a's buffers)
	own  func(K) K                    // a copy that may outlive the array
	cmp  func(x, y K) int             // the type's order, then identity
	cell func(K) cell
	enc  func(dst []byte, k K) []byte      // appends k, self-delimiting (checkpoints)
	dec  func(b []byte) (K, []byte, error) // reads what enc wrote, owned
}

// mmOrd is min/max over any other type, through its codec.
type mmOrd[K any] struct {
	c               ordCodec[K]
	max, appendOnly bool
	best            []K
	has             []bool
	sets            []sortedSet[K]
}

func newMMOrd[K any](isMax, appendOnly bool, c ordCodec[K]) *mmOrd[K] {
	return &mmOrd[K]{c: c, max: isMax, appendOnly: appendOnly}
}

func (m *mmOrd[K]) grow(n int) {
	if m.appendOnly {
		m.best, m.has = growSlice(m.best, n), growSlice(m.has, n)
	} else {
		m.sets = growSlice(m.sets, n)
	}
}

func (m *mmOrd[K]) reset(g int32) {
	if m.appendOnly {
		var zero K
		m.best[g], m.has[g] = zero, false
	} else {
		m.sets[g] = sortedSet[K]{}
	}
}

func (m *mmOrd[K]) update(arg arrow.Array, gids []int32, signs []int64) error {
	for i, g := range gids {
		if g < 0 || arg.IsNull(i) {
			continue
		}
		k := m.c.load(arg, i)
		if !m.appendOnly {
			if err := m.sets[g].add(k, sgn(signs, i), m.c.cmp, m.c.own); err != nil {
				return err
			}
			continue
		}
		if sgn(signs, i) < 0 {
			return pgerr.Internal("stream: min/max over an append-only input got a retraction")
		}
		if !m.has[g] {
			m.best[g], m.has[g] = m.c.own(k), true
			continue
		}
		if c := m.c.cmp(k, m.best[g]); (m.max && c > 0) || (!m.max && c < 0) {
			m.best[g] = m.c.own(k)
		}
	}
	return nil
}

func (m *mmOrd[K]) result(g int32) (cell, error) {
	if m.appendOnly {
		if !m.has[g] {
			return nullCell, nil
		}
		return m.c.cell(m.best[g]), nil
	}
	k, ok := m.sets[g].extreme(m.max)
	if !ok {
		return nullCell, nil
	}
	return m.c.cell(k), nil
}

func same[K any](k K) K { return k }

func loadString(a arrow.Array, i int) string { return a.(*array.String).Value(i) }
func loadBytes(a arrow.Array, i int) string  { return unsafeString(a.(*array.Binary).Value(i)) }

// cmpBpchar orders char(n) values ignoring trailing spaces, then by their
// stored text.
func cmpBpchar(x, y string) int {
	if c := strings.Compare(strings.TrimRight(x, " "), strings.TrimRight(y, " ")); c != 0 {
		return c
	}
	return strings.Compare(x, y)
}

// numKey is a stored numeric: its text and parsed value (d is unused for
// NaN and infinities, which inf orders: -1, 0 finite, 1, 2 for NaN).
type numKey struct {
	s   string
	inf int8
	d   *apd.Decimal
}

func loadNumeric(a arrow.Array, i int) numKey { return numKeyOf(a.(*array.String).Value(i)) }

func ownNumeric(k numKey) numKey { k.s = strings.Clone(k.s); return k }

func cmpNumeric(x, y numKey) int {
	if c := cmp.Compare(x.inf, y.inf); c != 0 {
		return c
	}
	if x.d != nil && y.d != nil {
		if c := x.d.Cmp(y.d); c != 0 {
			return c
		}
	}
	return strings.Compare(x.s, y.s)
}

func loadInterval(a arrow.Array, i int) arrow.MonthDayNanoInterval {
	return a.(*array.MonthDayNanoInterval).Value(i)
}

// cmpInterval orders intervals by their span, then by their fields.
func cmpInterval(x, y arrow.MonthDayNanoInterval) int {
	xd, xr := intervalSpan(x)
	yd, yr := intervalSpan(y)
	return cmp.Or(cmp.Compare(xd, yd), cmp.Compare(xr, yr),
		cmp.Compare(x.Months, y.Months), cmp.Compare(x.Days, y.Days), cmp.Compare(x.Nanoseconds, y.Nanoseconds))
}

func (c *mmWords) results(gs []int32, out []cell) error {
	for i, g := range gs {
		v, err := c.result(g)
		if err != nil {
			return err
		}
		out[i] = v
	}
	return nil
}

func (m *mmOrd[K]) results(gs []int32, out []cell) error {
	for i, g := range gs {
		v, err := m.result(g)
		if err != nil {
			return err
		}
		out[i] = v
	}
	return nil
}
