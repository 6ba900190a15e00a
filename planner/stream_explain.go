package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
)

// ExplainStream renders a streaming plan as an indented tree, one operator
// a line, each with the state it keeps:
//
//	StreamHashAgg: count(*) GROUP BY auction   state: per group (auction): count
//	└─StreamFilter: (price > 100)
//	  └─StreamScan: table bid (append only)
//
// A parallel plan (stream_parallel.go) is cut into fragments, numbered
// from the root's, 0. A fragment runs as one instance or as several: a
// parallel operator's (its line ends in (xN)), a split source's readers,
// and the stateless operators fused above either (stream.Fused, (xN)
// too). A StreamExchange line sends an input's fragment into a parallel
// operator's instances by hash; when the input has several instances,
// each hashes its rows straight to the operator's (N×N: "fragment 2 (3
// instances) into fragment 1"). A StreamMerge line gathers a fragment's
// instances where a single operator (or the view) consumes them.
func ExplainStream(root stream.Node) []string {
	e := &explainer{}
	if root != nil {
		e.visit(root, "", "", false)
	}
	return e.out
}

// explainer renders a plan; frags counts the fragments numbered so far.
type explainer struct {
	out   []string
	frags int
	cur   int // the fragment being rendered
}

// visit renders n and its inputs. perInstance is set when n's consumer
// runs once per instance of n's output (an exchange, a fused operator):
// otherwise an output of several instances is gathered by a StreamMerge
// line, which starts a fragment.
func (e *explainer) visit(n stream.Node, first, rest string, perInstance bool) {
	w := stream.Width(n)
	if w > 1 && !perInstance {
		e.frags++
		e.cur = e.frags
		e.out = append(e.out, first+fmt.Sprintf("StreamMerge: fragment %d (%d instances)", e.cur, w))
		first, rest = rest+"└─", rest+"  "
	}
	if p, ok := n.(*stream.Parallel); ok {
		e.visitParallel(p, first, rest)
		return
	}
	if s, ok := n.(*stream.Shared); ok {
		// its instances pass their input's on (stream_subshare.go); the
		// copies after the first are not computed, so not shown
		line := first + s.Explain()
		if w > 1 {
			line += fmt.Sprintf(" (x%d)", w)
		}
		e.out = append(e.out, line)
		if s.Idx == 0 {
			e.visit(s.Input, rest+"└─", rest+"  ", true)
		}
		return
	}
	line := first + n.Explain()
	if w > 1 && stream.Fused(n) {
		line += fmt.Sprintf(" (x%d)", w)
	}
	if st := streamState(n); st != "" {
		line += "   state: " + st
	}
	e.out = append(e.out, line)
	ins := n.Inputs()
	cur := e.cur
	for i, in := range ins {
		e.cur = cur
		f, r := rest+"├─", rest+"│ "
		if i == len(ins)-1 {
			f, r = rest+"└─", rest+"  "
		}
		e.visit(in, f, r, stream.Fused(n))
	}
}

// visitParallel renders the keyed operator of a Parallel (its instances,
// in the current fragment) and, in front of each of its inputs, the hash
// exchange from the input's fragment.
func (e *explainer) visitParallel(p *stream.Parallel, first, rest string) {
	op := p.Input
	into := e.cur
	line := first + op.Explain() + fmt.Sprintf(" (x%d)", p.N)
	if p.Local {
		name, body := "StreamPartialAgg: ", strings.TrimPrefix(op.Explain(), "StreamHashAgg: ")
		if _, ok := op.(*stream.WindowAgg); ok {
			name, body = "StreamPartialWindowAgg: ", strings.TrimPrefix(op.Explain(), "StreamWindowAgg: ")
		}
		line = first + name + body + fmt.Sprintf(" (x%d, fused with its input, no exchange)", p.N)
	}
	if st := streamState(op); st != "" {
		line += "   state: " + st + ", per instance"
	}
	e.out = append(e.out, line)
	ins := op.Inputs()
	if p.Local {
		// the partial phase of a two-phase aggregation: instance k
		// runs over instance k of its input, in the same fragment
		for i, in := range ins {
			f, r := rest+"├─", rest+"│ "
			if i == len(ins)-1 {
				f, r = rest+"└─", rest+"  "
			}
			e.cur = into
			e.visit(in, f, r, true)
		}
		return
	}
	for i, in := range ins {
		f, r := rest+"├─", rest+"│ "
		if i == len(ins)-1 {
			f, r = rest+"└─", rest+"  "
		}
		e.frags++
		e.cur = e.frags
		e.out = append(e.out, f+p.ExchangeExplain(i, e.frags, into))
		e.visit(in, r+"└─", r+"  ", true)
	}
}

// streamState describes the state an operator keeps ("" for none).
func streamState(n stream.Node) string {
	switch x := n.(type) {
	case *stream.HashAgg:
		var parts []string
		for _, a := range x.Aggs {
			parts = append(parts, aggState(a, x.AppendOnly))
		}
		if len(parts) == 0 {
			parts = []string{"row count"}
		}
		if len(x.GroupBy) == 0 {
			return "one group: " + strings.Join(parts, ", ")
		}
		if x.Clean != nil {
			return "per open group (" + exprList(x.GroupBy) + "): " + strings.Join(parts, ", ")
		}
		return "per group (" + exprList(x.GroupBy) + "): " + strings.Join(parts, ", ")
	case *stream.HashJoin:
		if len(x.LeftKeys) == 0 {
			return "all left rows, all right rows"
		}
		return "left rows by (" + exprList(x.LeftKeys) + "), right rows by (" + exprList(x.RightKeys) + ")"
	case *stream.TemporalJoin:
		return "table rows by (" + exprList(x.TableKeys) + ")"
	case *stream.TopN:
		rows := "every row, in order"
		if x.AppendOnly && x.Limit >= 0 && x.Ties == stream.RowNumber {
			rows = fmt.Sprintf("the first %d rows, in order", x.Offset+x.Limit)
		}
		if len(x.PartitionBy) == 0 {
			return rows
		}
		if x.Close != nil {
			return "per open partition (" + exprList(x.PartitionBy) + "): " + rows
		}
		return "per partition (" + exprList(x.PartitionBy) + "): " + rows
	case *stream.OverWindow:
		rows := "every row with its results"
		if x.EOWC != nil {
			rows = "the rows not emitted yet and those their frames reach"
		}
		var parts []string
		seen := map[string]bool{}
		for _, c := range x.Calls {
			if p := exprList(c.PartitionBy); !seen[p] {
				seen[p] = true
				parts = append(parts, "("+p+")")
			}
		}
		if len(parts) == 1 && parts[0] == "()" {
			return rows
		}
		return "per partition " + strings.Join(parts, ", ") + ": " + rows
	case *stream.WindowAgg:
		var parts []string
		for _, a := range x.Aggs {
			parts = append(parts, aggState(a, false))
		}
		unit := map[stream.WindowKind]string{stream.Tumble: "window", stream.Hop: "pane", stream.Cumulate: "window", stream.Session: "session"}[x.Window.Kind]
		if len(x.GroupBy) > 0 {
			unit += " and group (" + exprList(x.GroupBy) + ")"
		}
		return "per open " + unit + ": " + strings.Join(parts, ", ")
	case *stream.EOWC:
		return "the rows the watermark has not passed"
	case *stream.TemporalFilter:
		if x.Op == ">" || x.Op == ">=" {
			return "the rows inside the window"
		}
		return "the rows not yet due"
	case *stream.Materialize:
		if len(x.Key) == 0 {
			return "the view's rows, counted"
		}
		names := make([]string, len(x.Key))
		for i, k := range x.Key {
			names[i] = x.Cols[k].Name
		}
		return "the view's rows by (" + strings.Join(names, ", ") + ")"
	}
	return ""
}

// aggState names what one aggregate keeps per group (over an append-only
// input, min and max keep their running extreme only).
func aggState(a stream.AggSpec, appendOnly bool) string {
	switch {
	case a.Distinct && a.Arg != nil:
		return "count per distinct " + a.Arg.String()
	case a.Kind == stream.AggCountStar, a.Kind == stream.AggCount:
		return "count"
	case a.Kind == stream.AggSum:
		return "sum"
	case a.Kind == stream.AggAvg:
		return "sum and count"
	case a.Kind == stream.AggBoolAnd, a.Kind == stream.AggBoolOr:
		return "true and false counts"
	case a.Kind == stream.AggStringAgg, a.Kind == stream.AggArrayAgg:
		return "every value with its order keys"
	case a.Kind >= stream.AggVarSamp && a.Kind <= stream.AggStddevPop:
		return "count, sum and sum of squared deviations"
	case a.Kind == stream.AggRegr:
		return "count, sums and sums of deviations"
	case a.Kind == stream.AggBitXor, (a.Kind == stream.AggBitAnd || a.Kind == stream.AggBitOr) && appendOnly:
		return "count and running " + a.String()
	case a.Kind == stream.AggBitAnd, a.Kind == stream.AggBitOr:
		return "count and per-bit counts"
	case (a.Kind == stream.AggMin || a.Kind == stream.AggMax) && appendOnly:
		return "running " + a.String()
	case a.Arg != nil: // min, max: every value with its count, so deletes stay exact
		return "count per value of " + a.Arg.String()
	}
	return a.String()
}

func exprList(es []expr.Expr) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return strings.Join(parts, ", ")
}
