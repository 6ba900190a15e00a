package planner

import (
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// lApply is a LATERAL item the rewrite into a join does not cover
// (grouping, LIMIT, set operations, joins... in the subquery): right runs
// once per row of left, reading left's columns as outer references
// (exec.Apply). kind is InnerJoin or LeftJoin; conds are the ON clause's.
type lApply struct {
	left, right lnode
	kind        exec.JoinKind
	conds       []expr.Expr
}

func (n *lApply) outIDs() []int {
	return append(append([]int(nil), n.left.outIDs()...), n.right.outIDs()...)
}

// apply translates an lApply: the right side is planned with the left's
// layout pushed as an outer row (marked applied: the binder bound those
// references as plain columns and counted no level for them).
func (p *physical) apply(x *lApply) (exec.Node, []int, error) {
	left, llay, err := p.node(x.left, idSet(x.left.outIDs()))
	if err != nil {
		return nil, nil, err
	}
	if p.applied == nil {
		p.applied = map[int]bool{}
	}
	k := len(p.outer)
	p.outer = append(p.outer, llay)
	p.applied[k] = true
	right, rlay, err := p.node(x.right, idSet(x.right.outIDs()))
	p.outer = p.outer[:k]
	delete(p.applied, k)
	if err != nil {
		return nil, nil, err
	}
	lay := append(append([]int(nil), llay...), rlay...)
	a := &exec.Apply{Left: left, Right: right, Kind: x.kind, Cols: p.cols(lay)}
	if len(x.conds) > 0 {
		if a.Cond, err = p.expr(andOf(x.conds), lay); err != nil {
			return nil, nil, err
		}
	}
	return a, lay, nil
}

// appliedRef turns a column of a LATERAL apply's left side, read inside
// its right side, into the outer reference exec.Apply serves (nil when the
// column is no such one).
func (p *physical) appliedRef(c *expr.ColRef) expr.Expr {
	return p.appliedBelow(c.Idx, c.T, c.Name, len(p.outer))
}

// appliedAbove finds the column of outer reference x, which the binder
// counted to the level of layout p.outer[k] but which that level read as
// a LATERAL reference (a plain column there, appliedRef), among the
// applied rows outside k.
func (p *physical) appliedAbove(x *expr.OuterRef, k int) expr.Expr {
	return p.appliedBelow(x.Idx, x.T, x.Name, k)
}

// appliedBelow is the outer reference to column id in the innermost
// applied row of p.outer below index below (nil: none holds it).
func (p *physical) appliedBelow(id int, t types.T, name string, below int) expr.Expr {
	for k := below - 1; k >= 0; k-- {
		if !p.applied[k] {
			continue
		}
		if i := position(p.outer[k], id); i >= 0 {
			return &expr.OuterRef{Depth: len(p.outer) - k, Idx: i, T: t, Name: name}
		}
	}
	return nil
}

// outerIndex maps an outer reference's depth as the binder counted it to
// its layout in p.outer and its run-time depth, which also counts the
// rows of the LATERAL applies in between.
func (p *physical) outerIndex(depth int) (k, runtime int, ok bool) {
	seen := 0
	for k := len(p.outer) - 1; k >= 0; k-- {
		if p.applied[k] {
			continue
		}
		seen++
		if seen == depth {
			return k, len(p.outer) - k, true
		}
	}
	return 0, 0, false
}
