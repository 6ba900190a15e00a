package expr

import "sync"

// SharedResults holds the results of the plan parts that one statement
// execution reads more than once but must compute once (a WITH query
// with volatile functions referenced twice: PostgreSQL materializes it,
// so both references see the same random() values). Entries are keyed by
// the planner's node identity (exec.SharedScan's Key) and live as long as
// the execution's Context.
//
// Safe for concurrent use: the parts of one execution may open their
// inputs on several goroutines (parallel joins and aggregations).
type SharedResults struct {
	mu sync.Mutex
	m  map[any]*SharedEntry
}

// SharedEntry is one shared part's result. Its mutex is held by whoever
// computes it, so a second reader waits for the first's rows instead of
// computing them again.
type SharedEntry struct {
	Mu   sync.Mutex
	Done bool
	Rows any // the computing package's representation (exec: record batches)
}

// Entry returns key's entry, created empty on first use.
func (s *SharedResults) Entry(key any) *SharedEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[any]*SharedEntry{}
	}
	e := s.m[key]
	if e == nil {
		e = &SharedEntry{}
		s.m[key] = e
	}
	return e
}
