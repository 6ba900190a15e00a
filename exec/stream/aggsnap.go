package stream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/types"
)

// Checkpoint encodings of the aggregate states (aggCol.appendState and
// loadState) and of cells, shared by HashAgg and WindowAgg. Every encoding
// is self-delimiting: integers are varints (zigzag for signed ones, fixed
// 8 bytes for float bits and order words), strings and values a uvarint
// length and their bytes. The encodings are this package's own, read back
// only by the same version (a job whose plan changed is rebuilt anyway).

var errStateTruncated = errors.New("checkpointed aggregate state: truncated")

// getUvarint reads a uvarint and returns the bytes after it.
func getUvarint(b []byte) (uint64, []byte, error) {
	v, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, nil, errStateTruncated
	}
	return v, b[k:], nil
}

// getVarint reads a zigzag varint and returns the bytes after it.
func getVarint(b []byte) (int64, []byte, error) {
	v, k := binary.Varint(b)
	if k <= 0 {
		return 0, nil, errStateTruncated
	}
	return v, b[k:], nil
}

// getVarints reads len(out) zigzag varints into out.
func getVarints(b []byte, out ...*int64) ([]byte, error) {
	var err error
	for _, p := range out {
		if *p, b, err = getVarint(b); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func appendVarints(dst []byte, vs ...int64) []byte {
	for _, v := range vs {
		dst = binary.AppendVarint(dst, v)
	}
	return dst
}

// getFixed reads 8 little-endian bytes.
func getFixed(b []byte) (uint64, []byte, error) {
	if len(b) < 8 {
		return 0, nil, errStateTruncated
	}
	return binary.LittleEndian.Uint64(b), b[8:], nil
}

// appendStr appends a uvarint length and s.
func appendStr(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// getStr reads what appendStr wrote, as a new string.
func getStr(b []byte) (string, []byte, error) {
	n, b, err := getUvarint(b)
	if err != nil {
		return "", nil, err
	}
	if n > uint64(len(b)) {
		return "", nil, errStateTruncated
	}
	return string(b[:n]), b[n:], nil
}

// appendStateValue appends a non-NULL value of type t: uvarint 1 + the
// length of its PostgreSQL binary form, and that form; 0 when t cannot
// encode it (values of their own type always can; loading it then fails
// instead of restoring a wrong state).
func appendStateValue(dst []byte, v types.Value, t types.T) []byte {
	var scratch [64]byte
	b, err := types.AppendBinary(scratch[:0], v, t)
	if err != nil {
		return append(dst, 0)
	}
	dst = binary.AppendUvarint(dst, uint64(len(b))+1)
	return append(dst, b...)
}

func getStateValue(b []byte, t types.T) (types.Value, []byte, error) {
	n, b, err := getUvarint(b)
	if err != nil {
		return nil, nil, err
	}
	if n == 0 {
		return nil, nil, fmt.Errorf("checkpointed aggregate state: a %s value could not be encoded", t)
	}
	if n-1 > uint64(len(b)) {
		return nil, nil, errStateTruncated
	}
	v, err := types.ParseBinary(b[:n-1], t)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpointed aggregate state: %w", err)
	}
	return v, b[n-1:], nil
}

// Cell flags.
const (
	cellNull = 0
	cellVal  = 1
	cellWide = 2
)

// appendCellState appends cell c, kept with storage st for type t.
func appendCellState(dst []byte, c cell, st storage, t types.T) []byte {
	switch {
	case c.null:
		return append(dst, cellNull)
	case c.wide:
		return appendVarints(append(dst, cellWide), c.a, c.b)
	}
	dst = append(dst, cellVal)
	switch st {
	case stInt, stBool:
		return binary.AppendVarint(dst, c.a)
	case stFloat:
		return binary.LittleEndian.AppendUint64(dst, uint64(c.a))
	case stInterval:
		return appendVarints(dst, c.a, c.b)
	case stStr, stNumeric, stBytes:
		return appendStr(dst, c.s)
	}
	return appendStateValue(dst, c.v, t)
}

// getCellState reads what appendCellState wrote.
func getCellState(b []byte, st storage, t types.T) (cell, []byte, error) {
	if len(b) == 0 {
		return cell{}, nil, errStateTruncated
	}
	flag := b[0]
	b = b[1:]
	var c cell
	var err error
	switch {
	case flag == cellNull:
		return nullCell, b, nil
	case flag == cellWide:
		c.wide = true
		b, err = getVarints(b, &c.a, &c.b)
	case flag != cellVal:
		return cell{}, nil, fmt.Errorf("checkpointed aggregate state: bad cell flag %d", flag)
	case st == stInt || st == stBool:
		c.a, b, err = getVarint(b)
	case st == stFloat:
		var u uint64
		u, b, err = getFixed(b)
		c.a = int64(u)
	case st == stInterval:
		b, err = getVarints(b, &c.a, &c.b)
	case st == stStr || st == stNumeric || st == stBytes:
		c.s, b, err = getStr(b)
	default:
		c.v, b, err = getStateValue(b, t)
	}
	return c, b, err
}

// countCol: the count.

func (c *countCol) appendState(dst []byte, g int32) []byte {
	return binary.AppendVarint(dst, c.n[g])
}

func (c *countCol) loadState(g int32, b []byte) ([]byte, error) {
	return getVarints(b, &c.n[g])
}

// intSumCol: the 128-bit sum and the count.

func (c *intSumCol) appendState(dst []byte, g int32) []byte {
	p := c.s[g]
	return appendVarints(dst, int64(p.s.lo), p.s.hi, p.n)
}

func (c *intSumCol) loadState(g int32, b []byte) ([]byte, error) {
	p := &c.s[g]
	var lo int64
	b, err := getVarints(b, &lo, &p.s.hi, &p.n)
	p.s.lo = uint64(lo)
	return b, err
}

// floatSumCol: the sum's bits, then the counts.

func (c *floatSumCol) appendState(dst []byte, g int32) []byte {
	p := c.s[g]
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(p.sum))
	return appendVarints(dst, p.n, p.pinf, p.ninf, p.nans)
}

func (c *floatSumCol) loadState(g int32, b []byte) ([]byte, error) {
	p := &c.s[g]
	u, b, err := getFixed(b)
	if err != nil {
		return nil, err
	}
	p.sum = math.Float64frombits(u)
	return getVarints(b, &p.n, &p.pinf, &p.ninf, &p.nans)
}

// numericSumCol: the counts, the sum as scientific text (exact, with its
// exponent), then the live scales.

func (c *numericSumCol) appendState(dst []byte, g int32) []byte {
	p := &c.s[g]
	dst = appendVarints(dst, p.n, p.nans, p.pinf, p.ninf)
	dst = appendStr(dst, p.sum.Text('G'))
	dst = binary.AppendUvarint(dst, uint64(len(p.scales)))
	for _, s := range p.scales {
		dst = appendVarints(dst, int64(s.scale), s.n)
	}
	return dst
}

func (c *numericSumCol) loadState(g int32, b []byte) ([]byte, error) {
	p := &c.s[g]
	b, err := getVarints(b, &p.n, &p.nans, &p.pinf, &p.ninf)
	if err != nil {
		return nil, err
	}
	txt, b, err := getStr(b)
	if err != nil {
		return nil, err
	}
	if _, _, err := p.sum.SetString(txt); err != nil {
		return nil, fmt.Errorf("checkpointed numeric sum %q: %w", txt, err)
	}
	ns, b, err := getUvarint(b)
	if err != nil {
		return nil, err
	}
	if ns > uint64(len(b)) {
		return nil, errStateTruncated
	}
	p.scales = make([]scaleCount, ns)
	for i := range p.scales {
		var sc int64
		if b, err = getVarints(b, &sc, &p.scales[i].n); err != nil {
			return nil, err
		}
		p.scales[i].scale = int32(sc)
	}
	return b, nil
}

// intervalSumCol: the fields' sums and the count.

func (c *intervalSumCol) appendState(dst []byte, g int32) []byte {
	p := c.s[g]
	return appendVarints(dst, p.months, p.days, p.nanos, p.n)
}

func (c *intervalSumCol) loadState(g int32, b []byte) ([]byte, error) {
	p := &c.s[g]
	return getVarints(b, &p.months, &p.days, &p.nanos, &p.n)
}

// boolCol: the counts of true and false.

func (c *boolCol) appendState(dst []byte, g int32) []byte {
	return appendVarints(dst, c.t[g], c.f[g])
}

func (c *boolCol) loadState(g int32, b []byte) ([]byte, error) {
	return getVarints(b, &c.t[g], &c.f[g])
}

// sortedSet: the number of distinct keys, then each key and its rows, in
// order.

func appendSetState[K any](dst []byte, s *sortedSet[K], enc func([]byte, K) []byte) []byte {
	n := 0
	for _, blk := range s.blocks {
		n += len(blk)
	}
	dst = binary.AppendUvarint(dst, uint64(n))
	for _, blk := range s.blocks {
		for _, e := range blk {
			dst = enc(dst, e.k)
			dst = binary.AppendUvarint(dst, uint64(e.n))
		}
	}
	return dst
}

// loadSetState reads a set appendSetState wrote into the empty set s.
func loadSetState[K any](s *sortedSet[K], b []byte, dec func([]byte) (K, []byte, error), cmp func(x, y K) int) ([]byte, error) {
	n, b, err := getUvarint(b)
	if err != nil {
		return nil, err
	}
	if n > uint64(len(b)) {
		return nil, errStateTruncated
	}
	var blk []setEntry[K]
	for i := uint64(0); i < n; i++ {
		var e setEntry[K]
		if e.k, b, err = dec(b); err != nil {
			return nil, err
		}
		var rows uint64
		if rows, b, err = getUvarint(b); err != nil {
			return nil, err
		}
		if rows == 0 || rows > math.MaxInt64 {
			return nil, fmt.Errorf("checkpointed min/max: bad row count %d", rows)
		}
		e.n = int64(rows)
		if len(blk) > 0 && cmp(blk[len(blk)-1].k, e.k) >= 0 ||
			len(blk) == 0 && len(s.lasts) > 0 && cmp(s.lasts[len(s.lasts)-1], e.k) >= 0 {
			return nil, errors.New("checkpointed min/max: keys out of order")
		}
		blk = append(blk, e)
		s.keys++
		if len(blk) == setBlock || i == n-1 {
			s.blocks = append(s.blocks, blk)
			s.lasts = append(s.lasts, blk[len(blk)-1].k)
			blk = nil
		}
	}
	return b, nil
}

func appendWord(dst []byte, w uint64) []byte { return binary.LittleEndian.AppendUint64(dst, w) }

// mmWords: appendOnly, a flag and the extreme; else the set of words.

func (m *mmWords) appendState(dst []byte, g int32) []byte {
	if !m.appendOnly {
		return appendSetState(dst, &m.sets[g], appendWord)
	}
	if !m.has.get(g) {
		return append(dst, 0)
	}
	return appendWord(append(dst, 1), m.best[g])
}

func (m *mmWords) loadState(g int32, b []byte) ([]byte, error) {
	if !m.appendOnly {
		return loadSetState(&m.sets[g], b, getFixed, cmpWords)
	}
	if len(b) == 0 {
		return nil, errStateTruncated
	}
	if b[0] == 0 {
		return b[1:], nil
	}
	v, b, err := getFixed(b[1:])
	if err != nil {
		return nil, err
	}
	m.best[g] = v
	m.has.set(g, true)
	return b, nil
}

func cmpWords(x, y uint64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// mmOrd: as mmWords, through the codec's enc and dec.

func (m *mmOrd[K]) appendState(dst []byte, g int32) []byte {
	if !m.appendOnly {
		return appendSetState(dst, &m.sets[g], m.c.enc)
	}
	if !m.has[g] {
		return append(dst, 0)
	}
	return m.c.enc(append(dst, 1), m.best[g])
}

func (m *mmOrd[K]) loadState(g int32, b []byte) ([]byte, error) {
	if !m.appendOnly {
		return loadSetState(&m.sets[g], b, m.c.dec, m.c.cmp)
	}
	if len(b) == 0 {
		return nil, errStateTruncated
	}
	if b[0] == 0 {
		return b[1:], nil
	}
	k, b, err := m.c.dec(b[1:])
	if err != nil {
		return nil, err
	}
	m.best[g], m.has[g] = k, true
	return b, nil
}

// Key codecs of mmOrd.

func decStr(b []byte) (string, []byte, error) { return getStr(b) }

func encNumeric(dst []byte, k numKey) []byte { return appendStr(dst, k.s) }

func decNumeric(b []byte) (numKey, []byte, error) {
	s, b, err := getStr(b)
	return numKeyOf(s), b, err
}

func encInterval(dst []byte, v arrow.MonthDayNanoInterval) []byte {
	return appendVarints(dst, int64(v.Months), int64(v.Days), v.Nanoseconds)
}

func decInterval(b []byte) (arrow.MonthDayNanoInterval, []byte, error) {
	var mo, d, ns int64
	b, err := getVarints(b, &mo, &d, &ns)
	return arrow.MonthDayNanoInterval{Months: int32(mo), Days: int32(d), Nanoseconds: ns}, b, err
}

// distinctCol: the group's (value, rows) pairs, then the inner state.
// An append-only one counts no rows: it writes 1 per pair and ignores the
// counts it loads (its input never retracts, so they never matter).

// rows is pair p's row count as checkpointed: 1 for a pair of an
// append-only DISTINCT aggregate (every listed pair is live).
func (d *distinctCol) rows(p int32) int64 {
	if d.appendOnly {
		return 1
	}
	return *d.cnt.at(p)
}

var errDistinctTwice = errors.New("checkpointed DISTINCT aggregate: a value twice in a group")

func (d *distinctCol) appendState(dst []byte, g int32) []byte {
	l := d.lists
	n := 0
	for p := l.head[g] - 1; p >= 0; p = *l.next.at(p) - 1 {
		if d.rows(p) > 0 {
			n++
		}
	}
	dst = binary.AppendUvarint(dst, uint64(n))
	for p := l.head[g] - 1; p >= 0; p = *l.next.at(p) - 1 {
		if c := d.rows(p); c > 0 {
			dst = appendCellState(dst, d.pairValue(p), d.st, d.t)
			dst = binary.AppendUvarint(dst, uint64(c))
		}
	}
	return d.inner.appendState(dst, g)
}

func (d *distinctCol) loadState(g int32, b []byte) ([]byte, error) {
	n, b, err := getUvarint(b)
	if err != nil {
		return nil, err
	}
	if n > uint64(len(b)) {
		return nil, errStateTruncated
	}
	if n == 0 && d.sh != nil {
		if err := d.sharedLoad(g, nil, nil, nil); err != nil {
			return nil, err
		}
	}
	if n > 0 {
		cells := make([]cell, n)
		cnts := make([]int64, n)
		lead := make([]int32, n)
		for i := range cells {
			if cells[i], b, err = getCellState(b, d.st, d.t); err != nil {
				return nil, err
			}
			if cells[i].null {
				return nil, errors.New("checkpointed DISTINCT aggregate: a NULL value")
			}
			var c uint64
			if c, b, err = getUvarint(b); err != nil {
				return nil, err
			}
			if c == 0 || c > math.MaxInt64 {
				return nil, fmt.Errorf("checkpointed DISTINCT aggregate: bad row count %d", c)
			}
			cnts[i], lead[i] = int64(c), g
		}
		vals, err := d.cellArray(cells)
		if err != nil {
			return nil, err
		}
		if d.sh != nil {
			err := d.sharedLoad(g, vals, cnts, lead)
			vals.Release()
			if err != nil {
				return nil, err
			}
			return d.inner.loadState(g, b)
		}
		ids := d.seen.probe([]arrow.Array{vals}, lead, len(lead), true)
		vals.Release()
		if len(d.seen.newRows) != len(ids) {
			return nil, errDistinctTwice
		}
		d.growPairs()
		for i := len(ids) - 1; i >= 0; i-- { // link prepends: keep the order
			id := ids[i]
			if !d.appendOnly {
				*d.cnt.at(id) = cnts[i]
			}
			if !d.noRep {
				d.rep.set(id, cells[i])
			}
			d.lists.link(id, g)
		}
	}
	return d.inner.loadState(g, b)
}

// numKeyOf parses a stored numeric's text (s is kept, not copied).
func numKeyOf(s string) numKey {
	switch s {
	case "NaN":
		return numKey{s: s, inf: 2}
	case "Infinity":
		return numKey{s: s, inf: 1}
	case "-Infinity":
		return numKey{s: s, inf: -1}
	}
	d, _, err := apd.NewFromString(s)
	if err != nil {
		return numKey{s: s, inf: 2}
	}
	return numKey{s: s, d: d}
}

// appendStrKey and encValueKey are mmOrd key encoders for strings and for
// values of type t.
func appendStrKey(dst []byte, s string) []byte { return appendStr(dst, s) }

func valueCodec(t types.T) (func([]byte, types.Value) []byte, func([]byte) (types.Value, []byte, error)) {
	return func(dst []byte, v types.Value) []byte { return appendStateValue(dst, v, t) },
		func(b []byte) (types.Value, []byte, error) { return getStateValue(b, t) }
}
