package planner

import (
	"slices"

	"github.com/streamsql/streamsql/exec/stream"
)

// Set-returning functions in a continuous query: in the select list
// (SELECT id, unnest(tags) FROM events) or in FROM after the items whose
// columns they read (FROM events, jsonb_array_elements(payload->'items')
// AS item), bound as the batch engine binds them, into an lProjectSet.
// Each becomes a stream.ProjectSet: stateless, a row's values depend on
// the row alone (volatile arguments are refused by checkStream), so a
// retraction retracts the rows its insert made. A function of constants
// in FROM joins the items before it the same way (srf.go), and one with
// nothing before it is refused: it is no stream of changes.

// projectSet plans x over its input. The output has no key: the rows of
// one input row share its key.
func (s *streamPlanner) projectSet(x *lProjectSet, need map[int]bool) (sout, error) {
	sub := need
	for _, a := range x.args {
		sub = union(sub, a...)
	}
	inIDs := idSet(x.in.outIDs())
	for id := range refsOf(x.keep...) { // the conditions' input columns
		if inIDs[id] {
			sub = union(sub, s.b.colRef(id))
		}
	}
	in, err := s.node(x.in, sub)
	if err != nil {
		return sout{}, err
	}
	ps := &stream.ProjectSet{Input: in.node, Outer: x.outer, Ordinality: x.ordinality}
	for i, c := range x.calls {
		args, err := s.exprs(x.args[i], in.lay)
		if err != nil {
			return sout{}, err
		}
		ps.Funcs = append(ps.Funcs, c.setFunc(args))
	}
	lay := append(slices.Clone(in.lay), x.ids...)
	ps.Cols = s.p.cols(lay)
	if len(x.keep) > 0 {
		if ps.Keep, err = s.expr(andOf(x.keep), lay); err != nil {
			return sout{}, err
		}
	}
	return sout{node: ps, lay: lay, appendOnly: in.appendOnly}, nil
}
