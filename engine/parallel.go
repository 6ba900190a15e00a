package engine

import (
	"runtime"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
)

// Data parallelism of continuous queries (docs/contributing/parallel.md):
// streaming_parallelism, set before CREATE MATERIALIZED VIEW, CREATE SINK
// or SUBSCRIBE (query), is the number of instances of each keyed operator
// of its plan (planner.Env.Parallelism). A view and a sink keep theirs in
// the catalog (catalog.Relation.Parallelism) and are planned with it again
// at every restart. A view created without an explicit value (the
// server's default: catalog.Relation.ParallelismDefault) follows the
// server's --streaming-parallelism instead: a restart with another value
// rescales it, its keyed state redistributed by vnode
// (docs/contributing/parallel.md).

// spreadsDefault reports whether a view or query whose
// streaming_parallelism is the server's default (defaulted: not SET when
// it was created) is planned under the default rule
// (planner.Env.ParallelismAuto: the cores spread over its stateful
// operators): on a single server only. A cluster replays statements with
// the coordinator's parallelism SET, so it plans every view at that
// number.
func (e *Engine) spreadsDefault(defaulted bool) bool {
	return defaulted && e.cfg.Cluster == nil
}

// viewParallelism is the parallelism a view is planned with at start.
func (e *Engine) viewParallelism(rel *catalog.Relation) int {
	if rel.ParallelismDefault {
		return e.StreamingParallelism()
	}
	return max(rel.Parallelism, 1)
}

// StreamingParallelism returns the server's default streaming_parallelism.
func (e *Engine) StreamingParallelism() int {
	if e.cfg.StreamingParallelism > 0 {
		return min(e.cfg.StreamingParallelism, planner.MaxParallelism)
	}
	return min(max(runtime.GOMAXPROCS(0), 1), planner.MaxParallelism)
}

// setSessionDefaults gives a new session the server's defaults of the
// settings whose default is the server's (unless the client's startup
// parameters set them).
func (e *Engine) setSessionDefaults(st *settings, startup map[string]string) {
	def := strconv.Itoa(e.StreamingParallelism())
	for k := range startup {
		if strings.EqualFold(k, "streaming_parallelism") {
			return
		}
	}
	if st.defs == nil {
		st.defs = map[string]string{}
	}
	st.defs["streaming_parallelism"] = def
	st.vals["streaming_parallelism"] = def
}

// streamingParallelism is the session's streaming_parallelism.
func (s *Session) streamingParallelism() int {
	v, _ := s.set.get("streaming_parallelism")
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// checkParallelism accepts streaming_parallelism values: 1 up to
// planner.MaxParallelism (one instance per vnode).
func checkParallelism(v string) (string, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return "", pgerr.New(pgerr.InvalidParameterValue, "invalid value for parameter \"streaming_parallelism\": %q", v)
	}
	if n < 1 || n > planner.MaxParallelism {
		return "", pgerr.New(pgerr.InvalidParameterValue, "%d is outside the valid range for parameter \"streaming_parallelism\" (1 .. %d)", n, planner.MaxParallelism)
	}
	return strconv.Itoa(n), nil
}

// splitDistinct is the session's streaming_split_distinct.
func (s *Session) splitDistinct() string {
	v, _ := s.set.get("streaming_split_distinct")
	if v == "" {
		return planner.SplitDistinctAuto
	}
	return v
}

// viewSplitDistinct is the streaming_split_distinct a view or sink is
// planned with at start: the one it was created with, off for those
// created before the setting (their plan had no split).
func viewSplitDistinct(rel *catalog.Relation) string {
	if rel.SplitDistinct == "" {
		return planner.SplitDistinctOff
	}
	return rel.SplitDistinct
}
