package engine

import (
	"fmt"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
)

// execMerge runs MERGE: every writing WHEN clause's rows are computed
// first (each reads the tables as they were before the statement, as the
// one join PostgreSQL makes), then applied in one all-or-nothing write. A
// target row that WHEN MATCHED clauses would write twice (two source rows
// join it) is refused, as PostgreSQL refuses it.
func (s *Session) execMerge(ectx *exec.Context, m *planner.Merge) (*Result, error) {
	var writes []*pendingWrite
	seen := map[int64]bool{}
	var n int64
	for _, p := range m.Parts {
		w, err := s.computeWrite(ectx, p.Insert, p.Update, p.Delete)
		if err != nil {
			return nil, err
		}
		if p.Matched {
			for _, id := range w.ids {
				if seen[id] {
					return nil, pgerr.New(pgerr.CardinalityViolation, "MERGE command cannot affect row a second time").
						WithHint("Ensure that not more than one source row matches any one target row.")
				}
				seen[id] = true
			}
		}
		n += w.rows()
		writes = append(writes, w)
	}
	if err := s.applyWrites(ectx.Eval.Ctx, writes); err != nil {
		return nil, err
	}
	return &Result{Tag: fmt.Sprintf("MERGE %d", n)}, nil
}

// explainMerge is a MERGE's plan: each writing WHEN clause's rows.
func explainMerge(m *planner.Merge) *exec.PlanTree {
	t := &exec.PlanTree{Line: "Merge on " + m.Rel.Name}
	for _, p := range m.Parts {
		var what string
		var src exec.Node
		switch {
		case p.Update != nil:
			what, src = "Update", p.Update.Source
		case p.Delete != nil:
			what, src = "Delete", p.Delete.Source
		default:
			what, src = "Insert", p.Insert.Source
		}
		if p.Matched {
			what = "When Matched: " + what
		} else {
			what = "When Not Matched: " + what
		}
		t.Children = append(t.Children, explainWrite(what, src)) // ddl.go
	}
	return t
}
