package engine

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// EXPLAIN ANALYZE of batch queries: the query is planned at Prepare, run to
// the end at Execute with exec.Analyze counting each node's rows, loops and
// time, its rows discarded, and the plan printed with the counters and the
// Planning/Execution Time footer. Runs on the session's goroutine.

// analyzePlan is an EXPLAIN ANALYZE statement's prepared part.
type analyzePlan struct {
	opts     explainOpts
	planning time.Duration
	// execute is EXPLAIN ANALYZE EXECUTE's statement, whose arguments
	// are evaluated when it runs (the query is inner's).
	execute *pg.ExecuteStmt
	inner   *Prepared
}

// prepareExplainAnalyze plans the query under EXPLAIN ANALYZE into pl.
// Only queries are run: INSERT, UPDATE and DELETE (which PostgreSQL would
// run for real) and other statements are refused.
func (s *Session) prepareExplainAnalyze(env *planner.Env, e *pg.ExplainStmt, opts explainOpts, pl *plan, p *Prepared) error {
	if ex := e.Query.GetExecuteStmt(); ex != nil {
		inner, err := s.lookupPrepared(ex.Name)
		if err != nil {
			return err
		}
		ipl, _ := inner.plan.(*plan)
		if ipl == nil || ipl.kind != kindSelect || len(ipl.query.With) > 0 {
			return pgerr.Unsupported("EXPLAIN ANALYZE EXECUTE of %s is not supported: only queries (SELECT, VALUES, TABLE) are run", ex.Name).
				WithHint("Use EXPLAIN EXECUTE without ANALYZE to see the plan.")
		}
		if err := executeArity(ex, inner); err != nil { // prepare.go
			return err
		}
		pl.kind, pl.query = kindExplainAnalyze, ipl.query
		pl.analyze = &analyzePlan{opts: opts, execute: ex, inner: inner}
		p.Columns = []types.Column{{Name: "QUERY PLAN", Type: explainType(opts)}}
		return nil
	}
	if e.Query.GetSelectStmt() == nil {
		what := "this statement"
		switch {
		case e.Query.GetInsertStmt() != nil:
			what = "INSERT"
		case e.Query.GetUpdateStmt() != nil:
			what = "UPDATE"
		case e.Query.GetDeleteStmt() != nil:
			what = "DELETE"
		case e.Query.GetCreateTableAsStmt() != nil:
			what = "CREATE MATERIALIZED VIEW"
		}
		return pgerr.Unsupported("EXPLAIN ANALYZE of %s is not supported: only queries (SELECT, VALUES, TABLE) are run", what).
			WithHint("Use EXPLAIN without ANALYZE to see the plan.")
	}
	t0 := time.Now()
	q, err := planner.PlanSelect(env, e.Query)
	if err != nil {
		return err
	}
	if err := refuseRowLocks(q, "EXPLAIN ANALYZE"); err != nil { // rowlock.go
		return err
	}
	pl.kind, pl.query = kindExplainAnalyze, q
	pl.analyze = &analyzePlan{opts: opts, planning: time.Since(t0)}
	p.Columns = []types.Column{{Name: "QUERY PLAN", Type: explainType(opts)}}
	p.ParamTypes = q.ParamTypes
	return nil
}

// execExplainAnalyze runs the prepared query with counters, discards its
// rows and returns the annotated plan. cancel ends the statement's context.
func (s *Session) execExplainAnalyze(ctx context.Context, ectx *exec.Context, pl *plan, cols []types.Column, cancel context.CancelFunc) (*Result, error) {
	defer cancel()
	if ex := pl.analyze.execute; ex != nil {
		params, err := s.executeArgs(ctx, ex, pl.analyze.inner)
		if err != nil {
			return nil, err
		}
		ectx.Eval.Params = params
	}
	if len(pl.query.Views) > 1 { // several views: read them at one epoch, as SELECT does
		views, err := s.eng.flow.ReadViews(ctx, pl.query.Views)
		if err != nil {
			return nil, err
		}
		ectx.Views, ectx.Eval.Views = views, views
	}
	a := exec.NewAnalyze(pl.analyze.opts.timing)
	ectx.Analyze = a
	t0 := time.Now()
	if err := drainAnalyzed(ectx, pl.query.Root); err != nil {
		return nil, err
	}
	elapsed := time.Since(t0)
	o := pl.analyze.opts
	tree := exec.AnalyzedTree(pl.query.Root, a)
	if o.json {
		var top map[string]any
		if o.summary {
			ms := func(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }
			top = map[string]any{"Planning Time": ms(pl.analyze.planning), "Execution Time": ms(elapsed)}
		}
		doc, err := tree.JSONWith(o.verbose, top)
		if err != nil {
			return nil, err
		}
		return textRows("EXPLAIN", cols, []string{doc}), nil
	}
	lines := strings.Split(strings.TrimRight(tree.Text(o.verbose), "\n"), "\n")
	if o.summary {
		lines = append(lines,
			fmt.Sprintf("Planning Time: %.3f ms", float64(pl.analyze.planning)/1e6),
			fmt.Sprintf("Execution Time: %.3f ms", float64(elapsed)/1e6))
	}
	return textRows("EXPLAIN", cols, lines), nil
}

// explainType is the type of EXPLAIN's one column: json under FORMAT
// JSON (one row), else text (a row a line).
func explainType(o explainOpts) types.T {
	if o.json {
		return types.TJSON
	}
	return types.TText
}

// drainAnalyzed opens root through the counters and reads it to the end,
// releasing every batch.
func drainAnalyzed(ectx *exec.Context, root exec.Node) (err error) {
	it, err := exec.OpenNode(ectx, root)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := it.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("EXPLAIN ANALYZE: %w", cerr)
		}
	}()
	for {
		b, err := it.Next()
		if err != nil {
			return err
		}
		if b == nil {
			return nil
		}
		b.Release()
	}
}
