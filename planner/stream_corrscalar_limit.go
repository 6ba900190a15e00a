package planner

import (
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
)

// A correlated scalar subquery that returns at most one row by its LIMIT,
//
//	(SELECT cpu FROM m WHERE m.host = h.host ORDER BY ts DESC LIMIT 1)
//
// (the latest reading of each host) is the LEFT JOIN LATERAL of the same
// subquery: its outer references lowered to columns of the outer row
// (they are the LATERAL's left side), it is joined with the top row per
// correlation key (stream_lateral.go), and a row without one reads NULL,
// as PostgreSQL's scalar subquery over no rows does.

// correlatedScalarLimit returns in left-joined with sl's top row per key
// and the expression standing for sl's value, or ok false when sl does
// not have that shape.
func (s *streamPlanner) correlatedScalarLimit(in lnode, sl *sublink) (lnode, expr.Expr, bool, error) {
	if _, atMost := oneRow(sl.plan); !atMost {
		return nil, nil, false, nil
	}
	right, ok := lowerChain(sl.plan)
	if !ok {
		return nil, nil, false, nil
	}
	apply := &lApply{left: in, right: right, kind: exec.LeftJoin}
	j, ok, err := s.lateralJoin(apply)
	if !ok || err != nil {
		return nil, nil, ok, err
	}
	return j, s.b.colRef(sl.outID), true, nil
}

// lowerChain copies a chain of projections, limits, sorts and filters
// with its depth-1 outer references made column references (nil, false
// when a node of another kind, or one below the chain, reads the outer
// query, or a reference is deeper).
func lowerChain(n lnode) (lnode, bool) {
	ok := true
	lower := func(e expr.Expr) expr.Expr {
		if e == nil {
			return nil
		}
		if d, fine := outerDepth(e); !fine || d > 1 {
			ok = false
			return e
		}
		return lowerOuter(e)
	}
	switch x := n.(type) {
	case *lProject:
		in, fine := lowerChain(x.in)
		out := &lProject{in: in, ids: x.ids}
		for _, e := range x.exprs {
			out.exprs = append(out.exprs, lower(e))
		}
		return out, ok && fine
	case *lLimit:
		in, fine := lowerChain(x.in)
		return &lLimit{in: in, limit: lower(x.limit), offset: lower(x.offset), ties: x.ties}, ok && fine
	case *lSort:
		in, fine := lowerChain(x.in)
		out := &lSort{in: in}
		for _, k := range x.keys {
			k.E = lower(k.E)
			out.keys = append(out.keys, k)
		}
		return out, ok && fine
	case *lFilter:
		if hasOuterRefs(x.in) {
			return nil, false
		}
		out := &lFilter{in: x.in}
		for _, c := range x.conds {
			out.conds = append(out.conds, lower(c))
		}
		return out, ok
	}
	return n, !hasOuterRefs(n)
}
