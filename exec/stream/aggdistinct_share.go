package stream

import (
	"errors"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
)

// distinctShare holds the (group, value) pairs of several DISTINCT
// aggregates of one HashAgg over the same integer column (q16's
// count(DISTINCT bidder) and its three FILTERed variants): one table
// probed once a chunk instead of once per aggregate, and a pair kept once
// with a row count per member instead of once per member. A pair lives
// while any member counts a row of it; its representative is its first
// row's value (an integer: equal values are identical, so which row is
// the representative does not show).
//
// Ownership: the aggRun that made it; one goroutine. The aggRun calls
// begin with each chunk's group ids before updating the aggregates, which
// update in member order; the last member frees the pairs no member
// counts any more.
type distinctShare struct {
	seen    *groupTable // (group id, value) -> pair id; a pair's value is its key
	lists   *pairLists  // per group: its pairs
	members []*distinctCol

	// per chunk
	gids   []int32 // the chunk's group ids, before any FILTER
	ids    []int32 // per row: its pair, -1 for NULL values
	probed bool
	check  []int32 // pairs created or emptied by the chunk

	// restoring a group: each member's pairs so far, in its order
	pending [][]int32
}

// shareDistinct makes the DISTINCT aggregates of aggs whose argument is
// the same integer column share their pairs (at least two to a share) and
// returns the shares.
func shareDistinct(specs []AggSpec, aggs []aggCol) []*distinctShare {
	byCol := map[int][]*distinctCol{}
	var order []int
	for j, s := range specs {
		d, ok := aggs[j].(*distinctCol)
		if !ok || !s.Distinct {
			continue
		}
		c, ok := s.Arg.(*expr.ColRef)
		if !ok || d.st != stInt || storageOf(c.T) != stInt {
			continue
		}
		if _, seen := byCol[c.Idx]; !seen {
			order = append(order, c.Idx)
		}
		byCol[c.Idx] = append(byCol[c.Idx], d)
	}
	var shares []*distinctShare
	for _, idx := range order {
		ms := byCol[idx]
		if len(ms) < 2 {
			continue
		}
		for _, d := range ms {
			d.shared()
		}
		s := &distinctShare{seen: ms[0].seen, lists: ms[0].lists, members: ms}
		for _, d := range ms {
			d.sh, d.seen, d.rep, d.lists = s, s.seen, nil, s.lists
		}
		shares = append(shares, s)
	}
	return shares
}

// begin starts a chunk whose rows belong to groups gids.
func (s *distinctShare) begin(gids []int32) {
	s.gids, s.probed, s.check = gids, false, s.check[:0]
}

// growPairs makes every member's per-pair slices cover every pair id.
func (s *distinctShare) growPairs() {
	c := s.seen.cap()
	if c <= int(s.members[0].cnt.len()) {
		return
	}
	for _, d := range s.members {
		d.cnt.grow(c)
	}
	s.lists.growPairs(c)
}

// probe maps the chunk's rows to pairs, creating the missing ones with no
// rows in any member.
func (s *distinctShare) probe(arg arrow.Array) {
	s.ids = s.seen.probe([]arrow.Array{arg}, s.gids, len(s.gids), true)
	s.growPairs()
	for _, row := range s.seen.newRows {
		id := s.ids[row]
		for _, d := range s.members {
			*d.cnt.at(id) = 0
		}
		s.lists.link(id, s.gids[row])
		s.check = append(s.check, id)
	}
	s.probed = true
}

// sharedUpdate is distinctCol.update for a member of a share: use is the
// chunk's group ids after the member's FILTER (-1: not aggregated).
func (d *distinctCol) sharedUpdate(arg arrow.Array, use []int32, signs []int64) error {
	s := d.sh
	if !s.probed {
		s.probe(arg)
	}
	d.tg, d.ts, d.tc = d.tg[:0], d.ts[:0], d.tc[:0]
	for i, id := range s.ids {
		if id < 0 || use[i] < 0 {
			continue
		}
		ch, err := d.count(id, sgn(signs, i))
		if err != nil {
			return err
		}
		if ch != 0 {
			d.tg, d.ts = append(d.tg, use[i]), append(d.ts, ch)
			if !d.countOnly {
				// The pair's value is the row's (equal integers are identical).
				d.tc = append(d.tc, cellAt(arg, i, d.st, d.t))
			}
		}
		if ch < 0 {
			s.check = append(s.check, id)
		}
	}
	if d == s.members[len(s.members)-1] {
		s.freeEmpty()
	}
	return d.passInner()
}

// freeEmpty frees the pairs the chunk created or emptied that no member
// counts (ids stay valid within the chunk: only now).
func (s *distinctShare) freeEmpty() {
	for _, id := range s.check {
		empty := true
		for _, d := range s.members {
			if *d.cnt.at(id) != 0 {
				empty = false
				break
			}
		}
		if empty {
			s.lists.unlink(id)
			s.free(id)
		}
	}
	s.check = s.check[:0]
	s.probed = false
}

// free forgets pair id (unlinked by the caller).
func (s *distinctShare) free(id int32) {
	s.seen.remove(id)
	for _, d := range s.members {
		*d.cnt.at(id) = -1
	}
}

// reset frees group g's pairs in every member (the first member's reset
// of a freed group; the others find none left).
func (s *distinctShare) reset(g int32) {
	l := s.lists
	for p := l.head[g] - 1; p >= 0; p = *l.next.at(p) - 1 {
		s.free(p)
	}
	l.head[g] = 0
}

// sharedLoad adds a checkpointed group's pairs of member d: the values
// vals (in the order appendState wrote them, possibly none) and their row
// counts in d. The last member links the group's pairs in an order that keeps
// every member's order (mergeOrders), so that the group's next
// checkpoint writes what the original would have.
func (d *distinctCol) sharedLoad(g int32, vals arrow.Array, cnts []int64, lead []int32) error {
	s := d.sh
	var seq []int32
	if len(lead) > 0 {
		ids := s.seen.probe([]arrow.Array{vals}, lead, len(lead), true)
		s.growPairs()
		for _, row := range s.seen.newRows {
			id := ids[row]
			for _, m := range s.members {
				*m.cnt.at(id) = 0
			}
		}
		seq = make([]int32, len(ids))
		for i, id := range ids {
			c := d.cnt.at(id)
			if *c != 0 {
				return errDistinctTwice
			}
			*c = cnts[i]
			seq[i] = id
		}
	}
	s.pending = append(s.pending, seq)
	if d != s.members[len(s.members)-1] {
		return nil
	}
	order, ok := mergeOrders(s.pending)
	s.pending = s.pending[:0]
	if !ok {
		return errors.New("checkpointed DISTINCT aggregates: their values' orders disagree")
	}
	for i := len(order) - 1; i >= 0; i-- { // link prepends
		s.lists.link(order[i], g)
	}
	return nil
}

// mergeOrders returns the ids of seqs in an order in which each sequence
// keeps its own (a topological order of their successive pairs); false
// when there is none.
func mergeOrders(seqs [][]int32) ([]int32, bool) {
	indeg := map[int32]int{}
	succ := map[int32][]int32{}
	var nodes []int32
	for _, sq := range seqs {
		for i, id := range sq {
			if _, ok := indeg[id]; !ok {
				indeg[id] = 0
				nodes = append(nodes, id)
			}
			if i > 0 {
				succ[sq[i-1]] = append(succ[sq[i-1]], id)
				indeg[id]++
			}
		}
	}
	var out []int32
	for _, id := range nodes {
		if indeg[id] == 0 {
			out = append(out, id)
		}
	}
	for k := 0; k < len(out); k++ {
		for _, nx := range succ[out[k]] {
			if indeg[nx]--; indeg[nx] == 0 {
				out = append(out, nx)
			}
		}
	}
	return out, len(out) == len(nodes)
}
