package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// EXPLAIN [ANALYZE] [(ANALYZE, DURATION 'i')] {MATERIALIZED VIEW | SINK}
// name (docs/observability.md). Without ANALYZE: the view's streaming
// plan with its fragments, as EXPLAIN CREATE MATERIALIZED VIEW prints it
// (the running job's plan, or the stored query planned again when the
// view does not run). With ANALYZE: the running dataflow, each operator
// with its rows in and out, rows/s, the share of the time it spent
// handling messages (busy) and the share it waited on its consumer
// (backpressure), its state size estimate (as of its last barrier) and
// its watermark, since the view (or sink)
// started, or over DURATION: the operators' counters are read twice, that
// long apart, and the difference shown (a cancel or statement_timeout
// ends the wait). The counters are the ones of streamsql_operators; the
// statement never waits for an operator.

// explainStreamColumns is the result column, as PostgreSQL's EXPLAIN.
var explainStreamColumns = []types.Column{{Name: "QUERY PLAN", Type: types.TText}}

// execExplainStream runs EXPLAIN ... MATERIALIZED VIEW | SINK.
func (s *Session) execExplainStream(ctx context.Context, env *planner.Env, x *sql.ExplainStream) (*Result, error) {
	kind, what := catalog.KindMatView, "materialized view"
	if x.Sink {
		kind, what = catalog.KindSink, "sink"
	}
	schema, name := splitName(x.Name)
	r, err := s.eng.cat.Resolve(schema, name, s.set.searchPath())
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", x.Name)
	}
	if r.Kind != kind {
		return nil, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a %s", x.Name, what)
	}
	if kind == catalog.KindMatView {
		if err := s.checkPriv(r, catalog.PrivSelect); err != nil {
			return nil, err
		}
	} else if err := s.checkOwner(r); err != nil {
		return nil, err
	}
	j := s.eng.flow.Job(r.OID)
	if !x.Analyze {
		var plan stream.Node
		if j != nil {
			plan = j.Spec().Plan
		} else {
			q, err := s.eng.planView(r)
			if err != nil {
				return nil, err
			}
			plan = q.Root
		}
		lines := []string{rootLine(r, kind)}
		for i, l := range planner.ExplainStream(plan) {
			if i == 0 {
				lines = append(lines, "└─"+l)
			} else {
				lines = append(lines, "  "+l)
			}
		}
		return textRows("EXPLAIN", explainStreamColumns, lines), nil
	}
	if j == nil || j.Err() != nil {
		return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "%s \"%s\" is not running", what, r.Name).
			WithHint("EXPLAIN without ANALYZE shows its plan; streamsql_views.last_error says why it stopped.")
	}
	before, since := j.Operators(), j.Started()
	if before == nil {
		return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "the server does not count operator rows (it runs without operator statistics)")
	}
	var d time.Duration
	if x.Duration.Text != "" {
		if d, err = planner.IntervalDuration(env, x.Duration); err != nil {
			return nil, err
		}
		if d <= 0 {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "EXPLAIN option DURATION must be positive")
		}
		since = time.Now()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil, ctxErr(ctx)
		case <-t.C:
		}
		after := s.eng.flow.Job(r.OID)
		if after != j {
			return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "%s \"%s\" restarted while it was measured", what, r.Name)
		}
		now := j.Operators()
		for i := range now {
			if i < len(before) {
				now[i] = diffStats(now[i], before[i])
			}
		}
		before = now
	} else {
		before = j.Operators()
	}
	secs := time.Since(since).Seconds()
	return textRows("EXPLAIN", explainStreamColumns, analyzeLines(r, kind, j, before, secs, d)), nil
}

// ctxErr is the error of a statement whose context ended.
func ctxErr(ctx context.Context) error {
	return pgerr.Canceled(ctx.Err())
}

// rootLine is the first line of the plan: the view or sink.
func rootLine(r *catalog.Relation, kind catalog.RelKind) string {
	if kind == catalog.KindSink {
		return "Sink: " + r.Name + " (connector " + r.Connector + ")"
	}
	return "Materialize: " + r.Name
}

// diffStats is a's counters minus b's (the same operator read earlier).
func diffStats(a, b dataflow.OperatorStats) dataflow.OperatorStats {
	a.RowsIn -= b.RowsIn
	a.RowsOut -= b.RowsOut
	a.Chunks -= b.Chunks
	a.Bytes -= b.Bytes
	a.Backpressure -= b.Backpressure
	a.Busy -= b.Busy // StateBytes is a level: the latest stands
	return a
}

// analyzeLines renders the operators of a running job as a tree (the
// plan's shape), each with its figures over secs seconds.
func analyzeLines(r *catalog.Relation, kind catalog.RelKind, j *dataflow.Job, ops []dataflow.OperatorStats, secs float64, window time.Duration) []string {
	byNode := map[stream.Node][]dataflow.OperatorStats{}
	var root dataflow.OperatorStats
	for _, op := range ops {
		if op.ID == -1 {
			root = op
			continue
		}
		byNode[op.Node] = append(byNode[op.Node], op)
	}
	figures := func(st []dataflow.OperatorStats) string {
		var in, out, chunks int64
		var bp, busy time.Duration
		var wm, state int64
		hasWM, hasState := false, false
		for _, o := range st {
			// The instances of a parallel operator each count their own
			// share of the rows in (what the exchange sent each).
			in, out, chunks, bp = in+o.RowsIn, out+o.RowsOut, chunks+o.Chunks, bp+o.Backpressure
			busy += o.Busy
			if o.HasState {
				state, hasState = state+o.StateBytes, true
			}
			if o.HasWatermark && (!hasWM || o.Watermark < wm) {
				wm, hasWM = o.Watermark, true
			}
		}
		f := fmt.Sprintf("(rows in=%d out=%d, rows/s in=%s out=%s, batches=%d", in, out, rate(in, secs), rate(out, secs), chunks)
		if n := len(st); n > 0 && secs > 0 {
			// The share of the wall time its instances waited on a full
			// output queue (averaged over the instances).
			f += fmt.Sprintf(", busy=%.1f%%, backpressure=%.1f%%", 100*busy.Seconds()/secs/float64(n), 100*bp.Seconds()/secs/float64(n))
		}
		if hasState {
			f += ", state=" + sizeText(state)
		}
		if hasWM {
			f += ", watermark=" + time.UnixMicro(wm).UTC().Format("2006-01-02 15:04:05.000000")
		}
		if len(st) > 1 {
			f += fmt.Sprintf(", instances=%d", len(st))
		}
		return f + ")"
	}
	lines := []string{rootLine(r, kind) + "  " + figures([]dataflow.OperatorStats{root})}
	// A Shared's rows are what its group's first copy computes
	// (stream.Shared): its Input's output, counted there.
	firsts := map[*stream.SharedGroup]stream.Node{}
	var find func(n stream.Node)
	find = func(n stream.Node) {
		if s, ok := n.(*stream.Shared); ok && s.Idx == 0 {
			firsts[s.Group] = s.Input
		}
		for _, in := range n.Inputs() {
			find(in)
		}
	}
	find(j.Spec().Plan)
	counted := func(n stream.Node) []dataflow.OperatorStats {
		if p, ok := n.(*stream.Parallel); ok {
			n = p.Input
		}
		return byNode[n]
	}
	var visit func(n stream.Node, first, rest string)
	visit = func(n stream.Node, first, rest string) {
		if s, ok := n.(*stream.Shared); ok {
			var out int64
			for _, o := range counted(firsts[s.Group]) {
				out += o.RowsOut
			}
			lines = append(lines, first+s.Explain()+fmt.Sprintf("  (rows out=%d, rows/s out=%s)", out, rate(out, secs)))
			if s.Idx == 0 || len(counted(s.Input)) > 0 { // a copy runs only in a cluster
				visit(s.Input, rest+"└─", rest+"  ")
			}
			return
		}
		if p, ok := n.(*stream.Parallel); ok {
			lines = append(lines, first+p.Input.Explain()+fmt.Sprintf(" (x%d)", p.N)+"  "+figures(byNode[p.Input]))
			ins := p.Input.Inputs()
			for i, in := range ins {
				if i == len(ins)-1 {
					visit(in, rest+"└─", rest+"  ")
				} else {
					visit(in, rest+"├─", rest+"│ ")
				}
			}
			return
		}
		lines = append(lines, first+n.Explain()+"  "+figures(byNode[n]))
		ins := n.Inputs()
		for i, in := range ins {
			if i == len(ins)-1 {
				visit(in, rest+"└─", rest+"  ")
			} else {
				visit(in, rest+"├─", rest+"│ ")
			}
		}
	}
	visit(j.Spec().Plan, "└─", "  ")
	if window > 0 {
		lines = append(lines, fmt.Sprintf("Measured over: %.3f s", secs))
	} else {
		lines = append(lines, fmt.Sprintf("Measured over: %.3f s (since it started at %s)", secs, j.Started().UTC().Format(time.RFC3339)))
	}
	if p, ok := j.Backfill(); ok {
		state := "done"
		if p.Backfilling {
			state = "running"
		}
		lines = append(lines, fmt.Sprintf("Backfill: %s, %d of %d rows", state, p.RowsDone, p.RowsTotal))
	}
	return lines
}

// sizeText renders a byte count as pg_size_pretty does (bytes, kB, MB,
// GB, TB; a unit is used from 10240 of the one below).
func sizeText(n int64) string {
	units := []string{"bytes", "kB", "MB", "GB", "TB"}
	v, u := n, 0
	for u < len(units)-1 && (v >= 10240 || v <= -10240) {
		v, u = (v+512)/1024, u+1 // rounded half up, as PostgreSQL
	}
	return fmt.Sprintf("%d %s", v, units[u])
}

// rate renders n per secs seconds.
func rate(n int64, secs float64) string {
	if secs <= 0 {
		return "0"
	}
	return fmt.Sprintf("%.1f", float64(n)/secs)
}
