package planner

import (
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// INTERSECT and EXCEPT (without ALL) in materialized views: both sides,
// each row tagged with the side it comes from, go through one union into
// an aggregation grouped by every column (so that NULLs are equal, as set
// operations compare rows) that keeps, per distinct row, whether the left
// side and whether the right side has it (bool_or, retractable); INTERSECT
// keeps the rows both have, EXCEPT those only the left has. The ALL forms
// count each distinct row's copies per side instead, and a Replicate sends
// the row least(left, right) times (INTERSECT ALL) or greatest(left -
// right, 0) times (EXCEPT ALL): the view's rows are then counted, with no
// key.
func (s *streamPlanner) intersectExcept(x *lSetOp) (sout, error) {
	cols := s.p.cols(x.ids)
	n := len(cols)
	refs := make([]expr.Expr, n)
	for i, c := range cols {
		refs[i] = &expr.ColRef{Idx: i, T: c.Type, Name: c.Name}
	}
	tagCols := append(append([]types.Column(nil), cols...), types.Column{Name: "left", Type: types.TBool})
	var ins []stream.Node
	for _, side := range []struct {
		n    lnode
		left bool
	}{{x.left, true}, {x.right, false}} {
		o, err := s.root(side.n, side.n.outIDs())
		if err != nil {
			return sout{}, err
		}
		es := append(append([]expr.Expr(nil), refs...), &expr.Const{V: side.left, T: types.TBool})
		ins = append(ins, &stream.Project{Input: o.node, Exprs: es, Cols: tagCols})
	}
	tag := &expr.ColRef{Idx: n, T: types.TBool, Name: "left"}
	if x.all {
		return s.setOpAll(x, cols, refs, &stream.Union{Ins: ins, Cols: tagCols}, tag)
	}
	boolOr, err := exec.ResolveAggregate("bool_or", []types.T{types.TBool}, false)
	if err != nil {
		return sout{}, err
	}
	inL, err := stream.AggSpecFor(exec.AggCall{Fn: boolOr, Args: []expr.Expr{tag}})
	if err != nil {
		return sout{}, err
	}
	inR, err := stream.AggSpecFor(exec.AggCall{Fn: boolOr, Args: []expr.Expr{&expr.Not{E: tag}}})
	if err != nil {
		return sout{}, err
	}
	h := &stream.HashAgg{Input: &stream.Union{Ins: ins, Cols: tagCols}, GroupBy: refs, Aggs: []stream.AggSpec{inL, inR},
		Cols: append(append([]types.Column(nil), cols...), types.Column{Name: "in_left", Type: types.TBool}, types.Column{Name: "in_right", Type: types.TBool})}
	var right expr.Expr = &expr.ColRef{Idx: n + 1, T: types.TBool, Name: "in_right"}
	if x.kind == exec.Except {
		right = &expr.Not{E: right}
	}
	f := &stream.Filter{Input: h, Cond: &expr.And{Args: []expr.Expr{&expr.ColRef{Idx: n, T: types.TBool, Name: "in_left"}, right}}}
	p := &stream.Project{Input: f, Exprs: refs, Cols: cols}
	return sout{node: p, lay: x.ids, key: append([]int(nil), x.ids...)}, nil
}

// setOpAll is INTERSECT ALL or EXCEPT ALL over the tagged union in: each
// distinct row's copies counted per side, then sent as many times as the
// set operation keeps.
func (s *streamPlanner) setOpAll(x *lSetOp, cols []types.Column, refs []expr.Expr, in stream.Node, tag expr.Expr) (sout, error) {
	n := len(cols)
	h := &stream.HashAgg{Input: in, GroupBy: refs,
		Aggs: []stream.AggSpec{{Kind: stream.AggCountStar, Filter: tag}, {Kind: stream.AggCountStar, Filter: &expr.Not{E: tag}}},
		Cols: append(append([]types.Column(nil), cols...), types.Column{Name: "left_rows", Type: types.TInt8}, types.Column{Name: "right_rows", Type: types.TInt8})}
	l := &expr.ColRef{Idx: n, T: types.TInt8, Name: "left_rows"}
	r := &expr.ColRef{Idx: n + 1, T: types.TInt8, Name: "right_rows"}
	var count expr.Expr
	var err error
	if x.kind == exec.Intersect {
		count, err = expr.NewCall("least", []expr.Expr{l, r})
	} else {
		var d expr.Expr
		if d, err = expr.NewBinary("-", l, r); err == nil {
			count, err = expr.NewCall("greatest", []expr.Expr{d, &expr.Const{V: int64(0), T: types.TInt8}})
		}
	}
	if err != nil {
		return sout{}, err
	}
	p := &stream.Project{Input: h, Exprs: append(append([]expr.Expr(nil), refs...), count),
		Cols: append(append([]types.Column(nil), cols...), types.Column{Name: "copies", Type: types.TInt8})}
	return sout{node: &stream.Replicate{Input: p}, lay: x.ids}, nil
}
