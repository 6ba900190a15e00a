package stream

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// distinctCol is an aggregate over DISTINCT values (count(DISTINCT x),
// sum(DISTINCT x), ...): it counts the rows of each (group, value) pair
// (values equal as GROUP BY sees them) and passes a value to the inner
// aggregate when its pair appears (count 0 -> 1) and retracts it when the
// pair vanishes (1 -> 0). The value passed is the pair's representative,
// its first row's value, so the inner state retracts exactly what it got.
// NULL values are not aggregated.
//
// Over an append-only input (appendOnly: HashAgg.AppendOnly, and not in a
// share) a pair never vanishes, so it keeps no row count: a value appears
// when its pair is created, a later row of it changes nothing, and a
// retraction is an error (as min and max do). Its lists are singly
// linked (no pair is unlinked alone), and over an integer column
// (noRep) it keeps no representatives either: equal integers are
// identical, so a pair's value is its key in seen (pairValue). That is 16
// to 24 bytes less per pair of fresh memory and no random access per
// duplicate row (docs/benchmarks.md, "CPU of the parallel plan, sixth
// step").
type distinctCol struct {
	inner      aggCol
	t          types.T
	st         storage
	appendOnly bool
	noRep      bool         // appendOnly over integers: rep is not kept
	seen       *groupTable  // (group id, value) -> pair id
	cnt        paged[int64] // per pair: live rows; -1 once freed (empty with appendOnly)
	rep        *cellCol     // per pair: its representative
	// lists links each group's pairs, so that a group can be freed,
	// checkpointed or merged (WindowAgg) pair by pair.
	lists *pairLists
	// sh, when set, is the share whose seen, rep and lists these are
	// (aggdistinct_share.go).
	sh *distinctShare

	// countOnly is set when inner is a count: it takes the groups and
	// signs of the values passed (passInner), not the values (tc stays
	// empty where nothing else needs them).
	countOnly bool

	// per-update scratch: the changes passed to inner
	tg     []int32
	ts     []int64
	tc     []cell
	zeroed []int32
}

func newDistinctCol(inner aggCol, t types.T) *distinctCol {
	_, countOnly := inner.(*countCol)
	return &distinctCol{inner: inner, t: t, st: storageOf(t), seen: newGroupTable([]types.T{t}, true), rep: newCellCol(t), lists: &pairLists{}, countOnly: countOnly}
}

// newAppendOnlyDistinct is newDistinctCol over an append-only input.
func newAppendOnlyDistinct(inner aggCol, t types.T) *distinctCol {
	d := newDistinctCol(inner, t)
	d.appendOnly, d.lists.singly = true, true
	d.noRep = d.st == stInt
	return d
}

// shared makes d a member of a share, which counts rows per member: it
// drops the append-only mode (before any row). A share's column is an
// integer one, so a pair's value is its key in seen (noRep): the share
// keeps no representatives.
func (d *distinctCol) shared() {
	d.appendOnly, d.lists.singly, d.noRep = false, false, true
}

// pairValue is pair p's value: its representative, or with noRep its
// value word in seen.
func (d *distinctCol) pairValue(p int32) cell {
	if d.noRep {
		return intCell(d.seen.leadValue(p))
	}
	return d.rep.get(p)
}

func (d *distinctCol) grow(n int) {
	d.inner.grow(n)
	d.lists.head = growSlice(d.lists.head, n)
}

func (d *distinctCol) results(gs []int32, out []cell) error { return d.inner.results(gs, out) }

// reset frees group g's pairs (a group closed by AggClean, or a window,
// still holds rows) and empties it.
func (d *distinctCol) reset(g int32) {
	if d.sh != nil {
		d.sh.reset(g)
		d.inner.reset(g)
		return
	}
	l := d.lists
	for p := l.head[g] - 1; p >= 0; p = *l.next.at(p) - 1 {
		d.seen.remove(p)
		if !d.noRep {
			d.rep.clear(p)
		}
		if !d.appendOnly {
			*d.cnt.at(p) = -1
		}
	}
	l.head[g] = 0
	d.inner.reset(g)
}

// growPairs makes the per-pair slices cover every pair id handed out.
func (d *distinctCol) growPairs() {
	if c := d.seen.cap(); c > d.lists.pairs() {
		if !d.appendOnly {
			d.cnt.grow(c)
		}
		if !d.noRep {
			d.rep.grow(c)
		}
		d.lists.growPairs(c)
	}
}

func (d *distinctCol) update(arg arrow.Array, gids []int32, signs []int64) error {
	if d.sh != nil {
		return d.sharedUpdate(arg, gids, signs)
	}
	if d.appendOnly {
		return d.appendUpdate(arg, gids, signs)
	}
	ids := d.seen.probe([]arrow.Array{arg}, gids, len(gids), true)
	d.growPairs()
	for _, row := range d.seen.newRows {
		*d.cnt.at(ids[row]) = 0
		d.lists.link(ids[row], gids[row])
	}
	d.tg, d.ts, d.tc, d.zeroed = d.tg[:0], d.ts[:0], d.tc[:0], d.zeroed[:0]
	for i, id := range ids {
		if id < 0 {
			continue
		}
		ch, err := d.count(id, sgn(signs, i))
		if err != nil {
			return err
		}
		switch ch {
		case 1:
			c := cellAt(arg, i, d.st, d.t)
			d.rep.set(id, c)
			d.tg, d.ts = append(d.tg, gids[i]), append(d.ts, 1)
			if !d.countOnly {
				d.tc = append(d.tc, c)
			}
		case -1:
			d.tg, d.ts = append(d.tg, gids[i]), append(d.ts, -1)
			if !d.countOnly {
				d.tc = append(d.tc, d.rep.get(id))
			}
			d.zeroed = append(d.zeroed, id)
		}
	}
	// Free the pairs left empty only now: ids stay valid within the chunk.
	for _, id := range d.zeroed {
		if *d.cnt.at(id) == 0 {
			d.freePair(id)
		}
	}
	return d.passInner()
}

// appendUpdate is update over an append-only input: the rows that create
// a pair pass their value to the inner aggregate, the others nothing.
func (d *distinctCol) appendUpdate(arg arrow.Array, gids []int32, signs []int64) error {
	for _, sg := range signs {
		if sg < 0 {
			return pgerr.Internal("stream: DISTINCT aggregate over an append-only input got a retraction")
		}
	}
	ids := d.seen.probe([]arrow.Array{arg}, gids, len(gids), true)
	d.growPairs()
	d.tg, d.ts, d.tc = d.tg[:0], d.ts[:0], d.tc[:0]
	for _, row := range d.seen.newRows {
		id, g := ids[row], gids[row]
		d.lists.link(id, g)
		d.tg, d.ts = append(d.tg, g), append(d.ts, 1)
		if d.noRep && d.countOnly {
			continue
		}
		c := cellAt(arg, int(row), d.st, d.t)
		if !d.noRep {
			d.rep.set(id, c)
		}
		if !d.countOnly {
			d.tc = append(d.tc, c)
		}
	}
	return d.passInner()
}

// count adds sg rows to pair id and reports whether the pair appeared
// (1: 0 -> 1 rows), vanished (-1: 1 -> 0) or neither (0).
func (d *distinctCol) count(id int32, sg int64) (int64, error) {
	c := d.cnt.at(id)
	before := *c
	after := before + sg
	if after < 0 {
		return 0, pgerr.Internal("stream: DISTINCT aggregate retracts a value it never saw")
	}
	*c = after
	switch {
	case before == 0 && after == 1:
		return 1, nil
	case before == 1 && after == 0:
		return -1, nil
	}
	return 0, nil
}

// passInner passes the update's appearing and vanishing values (tg, ts,
// tc) to the inner aggregate.
func (d *distinctCol) passInner() error {
	if len(d.tg) == 0 {
		return nil
	}
	if d.countOnly {
		// count(DISTINCT x): the values passed are never NULL, so the
		// count needs their groups and signs only, not an array of them
		d.inner.(*countCol).add(d.tg, d.ts)
		return nil
	}
	vals, err := d.cellArray(d.tc)
	if err != nil {
		return err
	}
	defer vals.Release()
	return d.inner.update(vals, d.tg, d.ts)
}

// freePair forgets pair id.
func (d *distinctCol) freePair(id int32) {
	d.lists.unlink(id)
	d.seen.remove(id)
	d.rep.clear(id)
	*d.cnt.at(id) = -1
}

// cellArray builds an array of the argument's type from cells.
func (d *distinctCol) cellArray(cells []cell) (arrow.Array, error) {
	b := types.NewBuilder(memory.DefaultAllocator, d.t)
	defer b.Release()
	b.Reserve(len(cells))
	for _, c := range cells {
		if err := appendCell(b, c, d.t); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}
