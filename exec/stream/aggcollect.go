package stream

import (
	"cmp"
	"encoding/binary"
	"errors"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// string_agg and array_agg: aggregates whose value is every input value of
// the group, in an order. Each group keeps the multiset of its entries
// (order key values, value, string_agg's delimiter), ordered by the
// aggregate's ORDER BY and then by arrival; without ORDER BY by arrival
// alone (PostgreSQL leaves that order unspecified; for a table it is
// usually the heap's, where an updated row moves to the end, as it does
// here). A retraction removes the most recently arrived entry equal to it
// (same order keys, value and delimiter, compared by identity). The value
// is rebuilt from the entries when the group's row is read (at the
// barrier, for the groups that changed).
//
// NULLs as in PostgreSQL: string_agg skips NULL values and puts no
// delimiter before a value whose delimiter is NULL (the first value's
// delimiter is never used); array_agg keeps NULL values as NULL elements;
// both are NULL over no entries.

// collectEntry is one input row of a group.
type collectEntry struct {
	ord []types.Value // ORDER BY key values; nil elements are NULL
	val types.Value   // nil: NULL (array_agg only)
	sep types.Value   // string_agg's delimiter; nil: NULL
	seq int64         // arrival number, unique within the aggregate
}

// collectGroup is one group's entries: ordered, and indexed by identity
// (the entries of each identity in arrival order) for retractions.
type collectGroup struct {
	set sortedSet[*collectEntry]
	idx map[string][]*collectEntry
	n   int
	// bytes estimates the entries' values, for state sizes.
	bytes int64
}

// collectCol is string_agg or array_agg. Owned by its operator's goroutine.
type collectCol struct {
	str    bool // string_agg; else array_agg
	t      types.T
	sepT   types.T
	order  []exec.SortKey
	ordT   []types.T
	groups []*collectGroup // per group; nil when empty
	seq    int64           // the next arrival number
	total  int64           // entries over all groups
	bytes  int64           // estimated bytes of all entries' values
	key    []byte          // scratch
	// distinct: each identity (the arguments) goes into the value once,
	// where it first comes in the order; the entries keep every row
	distinct bool
}

// multiArgCol is an aggregate state with more inputs than one argument:
// extra holds the delimiter (string_agg, else nil) then the ORDER BY keys.
type multiArgCol interface {
	aggCol
	updateMulti(arg arrow.Array, extra []arrow.Array, gids []int32, signs []int64) error
}

func newCollectCol(s AggSpec, t types.T) *collectCol {
	c := &collectCol{str: s.Kind == AggStringAgg, t: t, order: s.OrderBy, distinct: s.Distinct}
	if s.Sep != nil {
		c.sepT = s.Sep.Type()
	}
	for _, k := range s.OrderBy {
		c.ordT = append(c.ordT, k.E.Type())
	}
	return c
}

func (c *collectCol) grow(n int) { c.groups = growSlice(c.groups, n) }

func (c *collectCol) update(arrow.Array, []int32, []int64) error {
	return pgerr.Internal("stream: %s updated without its extra arguments", c.name())
}

func (c *collectCol) name() string {
	if c.str {
		return "string_agg"
	}
	return "array_agg"
}

// cmpEntries orders entries by the ORDER BY keys (PostgreSQL's NULLS
// FIRST/LAST and DESC), then by arrival.
func (c *collectCol) cmpEntries(x, y *collectEntry) int {
	for i, k := range c.order {
		a, b := x.ord[i], y.ord[i]
		var r int
		switch {
		case a == nil && b == nil:
		case a == nil:
			r = 1
			if k.NullsFirst {
				r = -1
			}
		case b == nil:
			r = -1
			if k.NullsFirst {
				r = 1
			}
		default:
			r = types.Compare(a, b, c.ordT[i])
			if k.Desc {
				r = -r
			}
		}
		if r != 0 {
			return r
		}
	}
	return cmp.Compare(x.seq, y.seq)
}

// identity is e's identity key: its order keys, value and delimiter.
func (c *collectCol) identity(dst []byte, e *collectEntry) []byte {
	for _, v := range e.ord {
		dst = appendValueKey(dst, v)
	}
	dst = appendValueKey(dst, e.val)
	return appendValueKey(dst, e.sep)
}

func entryBytes(e *collectEntry) int64 {
	n := int64(64 + 16*len(e.ord))
	for _, v := range append([]types.Value{e.val, e.sep}, e.ord...) {
		switch x := v.(type) {
		case string:
			n += int64(len(x))
		case []byte:
			n += int64(len(x))
		}
	}
	return n
}

func nullOr(a arrow.Array, i int, t types.T) types.Value {
	if a == nil || a.IsNull(i) {
		return nil
	}
	return types.ValueAt(a, i, t)
}

func (c *collectCol) updateMulti(arg arrow.Array, extra []arrow.Array, gids []int32, signs []int64) error {
	var sep arrow.Array
	if c.str {
		if len(extra) < 1 {
			return pgerr.Internal("stream: string_agg without its delimiter")
		}
		sep, extra = extra[0], extra[1:]
	}
	if len(extra) != len(c.order) {
		return pgerr.Internal("stream: %s has %d ORDER BY keys, got %d", c.name(), len(c.order), len(extra))
	}
	for i, g := range gids {
		if g < 0 || c.str && arg.IsNull(i) {
			continue
		}
		e := &collectEntry{val: nullOr(arg, i, c.t)}
		if c.str {
			e.sep = nullOr(sep, i, c.sepT)
		}
		if len(extra) > 0 {
			e.ord = make([]types.Value, len(extra))
			for k, a := range extra {
				e.ord[k] = nullOr(a, i, c.ordT[k])
			}
		}
		c.key = c.identity(c.key[:0], e)
		if err := c.apply(g, e, sgn(signs, i)); err != nil {
			return err
		}
	}
	return nil
}

// apply adds (sign > 0) or retracts entry e (identity in c.key) in group
// g. An added entry gets the next arrival number and owns its values.
func (c *collectCol) apply(g int32, e *collectEntry, sign int64) error {
	grp := c.groups[g]
	if sign < 0 {
		var l []*collectEntry
		if grp != nil {
			l = grp.idx[string(c.key)]
		}
		if len(l) == 0 {
			return pgerr.Internal("stream: %s retracts a value it never saw", c.name())
		}
		old := l[len(l)-1]
		if len(l) == 1 {
			delete(grp.idx, string(c.key))
		} else {
			grp.idx[string(c.key)] = l[:len(l)-1]
		}
		if err := grp.set.add(old, -1, c.cmpEntries, same[*collectEntry]); err != nil {
			return err
		}
		b := entryBytes(old)
		grp.n--
		grp.bytes -= b
		c.total--
		c.bytes -= b
		if grp.n == 0 {
			c.groups[g] = nil
		}
		return nil
	}
	e.val, e.sep = ownValue(e.val), ownValue(e.sep)
	for k, v := range e.ord {
		e.ord[k] = ownValue(v)
	}
	if e.seq == 0 {
		c.seq++
		e.seq = c.seq
	}
	c.insert(g, e)
	return nil
}

// insert adds the owned entry e (identity in c.key) to group g.
func (c *collectCol) insert(g int32, e *collectEntry) {
	grp := c.groups[g]
	if grp == nil {
		grp = &collectGroup{idx: map[string][]*collectEntry{}}
		c.groups[g] = grp
	}
	k := string(c.key)
	grp.idx[k] = append(grp.idx[k], e)
	_ = grp.set.add(e, 1, c.cmpEntries, same[*collectEntry]) // seq is new: never fails
	b := entryBytes(e)
	grp.n++
	grp.bytes += b
	c.total++
	c.bytes += b
}

func (c *collectCol) results(gs []int32, out []cell) error {
	for i, g := range gs {
		grp := c.groups[g]
		if grp == nil || grp.n == 0 {
			out[i] = nullCell
			continue
		}
		var seen map[string]bool
		if c.distinct {
			seen = map[string]bool{}
		}
		// again reports whether e's identity already went into the value
		again := func(e *collectEntry) bool {
			if seen == nil {
				return false
			}
			c.key = c.identity(c.key[:0], e)
			if seen[string(c.key)] {
				return true
			}
			seen[string(c.key)] = true
			return false
		}
		if c.str {
			var sb strings.Builder
			first := true
			for _, blk := range grp.set.blocks {
				for _, se := range blk {
					for r := int64(0); r < se.n; r++ {
						e := se.k
						if again(e) {
							continue
						}
						if !first && e.sep != nil {
							s := textOf(e.sep)
							if err := membudget.StringBuffer(int64(sb.Len()), int64(len(s))); err != nil {
								return err
							}
							sb.WriteString(s)
						}
						s := textOf(e.val)
						if err := membudget.StringBuffer(int64(sb.Len()), int64(len(s))); err != nil {
							return err
						}
						sb.WriteString(s)
						first = false
					}
				}
			}
			out[i] = strCell(sb.String())
			continue
		}
		vals := make([]types.Value, 0, grp.n)
		for _, blk := range grp.set.blocks {
			for _, se := range blk {
				for r := int64(0); r < se.n; r++ {
					if !again(se.k) {
						vals = append(vals, se.k.val)
					}
				}
			}
		}
		out[i] = cell{v: vals}
	}
	return nil
}

// textOf is a text or bytea value's bytes.
func textOf(v types.Value) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	return ""
}

func (c *collectCol) reset(g int32) {
	if grp := c.groups[g]; grp != nil {
		c.total -= int64(grp.n)
		c.bytes -= grp.bytes
	}
	c.groups[g] = nil
}

// stateBytes estimates the entries and their index.
func (c *collectCol) stateBytes() int64 { return c.bytes + c.total*(estMapEntry+16) }

// appendState: the entries in order, each as its arrival number, order
// keys, value and delimiter (NULL: 0, else 1 and the value).
func (c *collectCol) appendState(dst []byte, g int32) []byte {
	grp := c.groups[g]
	if grp == nil {
		return binary.AppendUvarint(dst, 0)
	}
	return appendSetState(dst, &grp.set, c.encEntry)
}

func (c *collectCol) encEntry(dst []byte, e *collectEntry) []byte {
	dst = binary.AppendUvarint(dst, uint64(e.seq))
	for k, v := range e.ord {
		dst = appendNullable(dst, v, c.ordT[k])
	}
	dst = appendNullable(dst, e.val, c.t)
	if c.str {
		dst = appendNullable(dst, e.sep, c.sepT)
	}
	return dst
}

func appendNullable(dst []byte, v types.Value, t types.T) []byte {
	if v == nil {
		return append(dst, 0)
	}
	return appendStateValue(append(dst, 1), v, t)
}

func getNullable(b []byte, t types.T) (types.Value, []byte, error) {
	if len(b) == 0 {
		return nil, nil, errStateTruncated
	}
	if b[0] == 0 {
		return nil, b[1:], nil
	}
	return getStateValue(b[1:], t)
}

func (c *collectCol) decEntry(b []byte) (*collectEntry, []byte, error) {
	seq, b, err := getUvarint(b)
	if err != nil {
		return nil, nil, err
	}
	e := &collectEntry{seq: int64(seq)}
	if len(c.order) > 0 {
		e.ord = make([]types.Value, len(c.order))
	}
	for k := range e.ord {
		if e.ord[k], b, err = getNullable(b, c.ordT[k]); err != nil {
			return nil, nil, err
		}
	}
	if e.val, b, err = getNullable(b, c.t); err != nil {
		return nil, nil, err
	}
	if c.str {
		if e.sep, b, err = getNullable(b, c.sepT); err != nil {
			return nil, nil, err
		}
	}
	return e, b, nil
}

// Arrival counters in checkpoints. A string_agg or array_agg state's next
// arrival number (collectCol.seq) spans the operator's groups, and the
// entries retracted since are gone, so it is not derivable from the live
// entries: the operator's meta record carries it, one uvarint per such
// aggregate in aggregate order after the record's other fields. An
// operator without these aggregates writes none, so its meta record is
// unchanged. A restored run then numbers new rows as the original did and
// writes the same bytes. Rescaling takes the maximum over the old
// instances: arrival numbers are compared only within a group (and a
// WindowAgg's groups of one key), whose entries all come from one old
// instance.

// collectSeqs returns the next arrival number of each string_agg and
// array_agg state in aggs, in order (nil when there is none).
func collectSeqs(aggs []aggCol) []int64 {
	var out []int64
	for _, a := range aggs {
		if c, ok := a.(*collectCol); ok {
			out = append(out, c.seq)
		}
	}
	return out
}

// setCollectSeqs sets the next arrival numbers collectSeqs returned.
func setCollectSeqs(aggs []aggCol, seqs []int64) error {
	i := 0
	for _, a := range aggs {
		if c, ok := a.(*collectCol); ok {
			if i == len(seqs) {
				return pgerr.Internal("stream: checkpoint has %d arrival counters, the plan more", len(seqs))
			}
			c.seq = seqs[i]
			i++
		}
	}
	if i != len(seqs) {
		return pgerr.Internal("stream: checkpoint has %d arrival counters, the plan %d", len(seqs), i)
	}
	return nil
}

func appendCollectSeqs(dst []byte, seqs []int64) []byte {
	for _, s := range seqs {
		dst = binary.AppendUvarint(dst, uint64(s))
	}
	return dst
}

// getCollectSeqs reads n counters appendCollectSeqs wrote.
func getCollectSeqs(b []byte, n int) ([]int64, []byte, error) {
	if n == 0 {
		return nil, b, nil
	}
	out := make([]int64, n)
	for i := range out {
		v, rest, err := getUvarint(b)
		if err != nil {
			return nil, nil, err
		}
		if v > 1<<62 {
			return nil, nil, errors.New("checkpointed arrival counter out of range")
		}
		out[i], b = int64(v), rest
	}
	return out, b, nil
}

// maxSeqs folds part's counters into acc (rescaling).
func maxSeqs(acc, part []int64) []int64 {
	if acc == nil {
		return append([]int64(nil), part...)
	}
	for i := range min(len(acc), len(part)) {
		acc[i] = max(acc[i], part[i])
	}
	return acc
}

// loadState loads group g's entries. The arrival counter comes from the
// meta record, loaded first; it only rises here, for safety, to the
// entries' numbers.
func (c *collectCol) loadState(g int32, b []byte) ([]byte, error) {
	var set sortedSet[*collectEntry]
	rest, err := loadSetState(&set, b, c.decEntry, c.cmpEntries)
	if err != nil {
		return nil, err
	}
	for _, blk := range set.blocks {
		for _, se := range blk {
			c.key = c.identity(c.key[:0], se.k)
			for r := int64(0); r < se.n; r++ {
				c.insert(g, se.k)
			}
			c.seq = max(c.seq, se.k.seq)
		}
	}
	return rest, nil
}

// merge adds group src[i] of from's entries to group dst[i] (WindowAgg's
// panes), keeping their arrival numbers.
func (c *collectCol) merge(dst []int32, from aggCol, src []int32) error {
	f, ok := from.(*collectCol)
	if !ok {
		return pgerr.Internal("stream: %s merges a different aggregate", c.name())
	}
	for i, d := range dst {
		grp := f.groups[src[i]]
		if grp == nil {
			continue
		}
		for _, blk := range grp.set.blocks {
			for _, se := range blk {
				c.key = c.identity(c.key[:0], se.k)
				for r := int64(0); r < se.n; r++ {
					c.insert(d, se.k)
				}
				c.seq = max(c.seq, se.k.seq)
			}
		}
	}
	return nil
}

// collectSpecFor maps string_agg and array_agg calls (spec has the call's
// FILTER) to their streaming aggregate, keeping the call's ORDER BY.
func collectSpecFor(call exec.AggCall, spec AggSpec) (AggSpec, error) {
	spec.Kind, spec.OrderBy = AggArrayAgg, call.OrderBy
	want := 1
	if call.Fn.Name == "string_agg" {
		spec.Kind, want = AggStringAgg, 2
	}
	if len(call.Args) != want {
		return AggSpec{}, pgerr.Unsupported("%s with %d arguments is not supported in streaming queries", call.Fn.Name, len(call.Args))
	}
	spec.Arg = call.Args[0]
	if want == 2 {
		spec.Sep = call.Args[1]
	}
	return checkedSpec(spec, call)
}

// updateMulti evaluates a multi-argument aggregate's delimiter, second
// argument and ORDER BY keys over rec and folds the rows into m.
func updateMulti(env *Env, ectx *expr.Context, spec AggSpec, m multiArgCol, arg arrow.Array, rec arrow.RecordBatch, gids []int32, signs []int64) error {
	var extra []arrow.Array
	defer func() {
		for _, a := range extra {
			a.Release()
		}
	}()
	es := make([]expr.Expr, 0, 2+len(spec.OrderBy))
	if spec.Sep != nil {
		es = append(es, spec.Sep)
	}
	if spec.Arg2 != nil {
		es = append(es, spec.Arg2)
	}
	for _, k := range spec.OrderBy {
		es = append(es, k.E)
	}
	for _, e := range es {
		a, err := evalOrNull(env, ectx, e, rec)
		if err != nil {
			return err
		}
		extra = append(extra, a)
	}
	return m.updateMulti(arg, extra, gids, signs)
}
