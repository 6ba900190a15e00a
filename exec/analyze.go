package exec

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Analyze collects EXPLAIN ANALYZE's counters for one statement execution:
// per plan node, the times it was opened (loops), the rows it produced and
// the time spent inside it (its children included), as PostgreSQL's
// instrumentation does. Operators are not changed: OpenNode wraps each
// iterator when Context.Analyze is set. It is safe for concurrent use (a node
// may be opened by several goroutines); the counters are read by
// ExplainAnalyze once the execution is over.
type Analyze struct {
	// Timing measures time per node (EXPLAIN (ANALYZE, TIMING OFF) clears it
	// and prints rows and loops only).
	Timing bool

	mu    sync.Mutex
	stats map[Node]*nodeStats
}

// NewAnalyze returns an empty collector.
func NewAnalyze(timing bool) *Analyze {
	return &Analyze{Timing: timing, stats: map[Node]*nodeStats{}}
}

// nodeStats are one node's counters summed over its loops.
type nodeStats struct {
	loops   atomic.Int64
	rows    atomic.Int64
	startNs atomic.Int64 // time until the first Next returned, summed over loops
	totalNs atomic.Int64 // time inside Open and Next, summed over loops
}

func (a *Analyze) statsOf(n Node) *nodeStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.stats[n]
	if st == nil {
		st = &nodeStats{}
		a.stats[n] = st
	}
	return st
}

// OpenNode opens n, through EXPLAIN ANALYZE's counters when ctx.Analyze is
// set. Operators open their inputs with it rather than with n.Open.
func OpenNode(ctx *Context, n Node) (Iterator, error) {
	if ctx == nil || ctx.Analyze == nil {
		return n.Open(ctx)
	}
	a := ctx.Analyze
	st := a.statsOf(n)
	st.loops.Add(1)
	var t0 time.Time
	if a.Timing {
		t0 = time.Now()
	}
	it, err := n.Open(ctx)
	if err != nil {
		return nil, err
	}
	ai := &analyzeIter{in: it, st: st, timing: a.Timing}
	if a.Timing {
		ai.spent = time.Since(t0)
	}
	return ai, nil
}

// analyzeIter counts one loop of a node; it is used by one goroutine.
type analyzeIter struct {
	in     Iterator
	st     *nodeStats
	timing bool
	spent  time.Duration // inside Open and Next so far
	first  bool          // the first Next has returned
	done   bool          // counters added to st
}

func (a *analyzeIter) Next() (arrow.RecordBatch, error) {
	var t0 time.Time
	if a.timing {
		t0 = time.Now()
	}
	b, err := a.in.Next()
	if a.timing {
		a.spent += time.Since(t0)
		if !a.first {
			a.first = true
			a.st.startNs.Add(int64(a.spent))
		}
	}
	if b != nil {
		a.st.rows.Add(b.NumRows())
	} else {
		a.flush()
	}
	return b, err
}

// flush adds the loop's time to the node's counters, once.
func (a *analyzeIter) flush() {
	if a.done {
		return
	}
	a.done = true
	if a.timing {
		if !a.first {
			a.first = true
			a.st.startNs.Add(int64(a.spent))
		}
		a.st.totalNs.Add(int64(a.spent))
	}
}

func (a *analyzeIter) Close() error {
	a.flush()
	return a.in.Close()
}

// ExplainAnalyze renders the plan as Explain does, each line followed by the
// node's actual counters in PostgreSQL's shape: "(actual time=S..T rows=R
// loops=L)" with S and T the milliseconds to the first and the last batch
// and R the rows, all per loop; "(actual rows=R loops=L)" without timing;
// "(never executed)" for a node that was not opened.
func ExplainAnalyze(n Node, a *Analyze) string { return AnalyzedTree(n, a).Text(false) }

// AnalyzedTree is Tree with each node's counters (PlanTree.Actual): as
// text (ExplainAnalyze's suffix) and as PostgreSQL's JSON fields "Actual
// Startup Time", "Actual Total Time" (with timing), "Actual Rows" and
// "Actual Loops".
func AnalyzedTree(n Node, a *Analyze) *PlanTree {
	return treeWith(n, func(n Node, t *PlanTree) {
		t.Actual = a.actual(n)
		t.ActualFields = a.actualFields(n)
	})
}

// actualFields are n's counters as JSON fields.
func (a *Analyze) actualFields(n Node) [][2]any {
	a.mu.Lock()
	st := a.stats[n]
	a.mu.Unlock()
	if st == nil || st.loops.Load() == 0 {
		return [][2]any{{"Actual Loops", 0}}
	}
	loops := st.loops.Load()
	rows := (st.rows.Load() + loops/2) / loops
	var out [][2]any
	if a.Timing {
		ms := func(ns int64) float64 { return math.Round(float64(ns)/float64(loops)/1e3) / 1e3 }
		out = append(out, [2]any{"Actual Startup Time", ms(st.startNs.Load())}, [2]any{"Actual Total Time", ms(st.totalNs.Load())})
	}
	return append(out, [2]any{"Actual Rows", rows}, [2]any{"Actual Loops", loops})
}

// actual is the "(actual ...)" suffix of n's line.
func (a *Analyze) actual(n Node) string {
	a.mu.Lock()
	st := a.stats[n]
	a.mu.Unlock()
	if st == nil || st.loops.Load() == 0 {
		return "(never executed)"
	}
	loops := st.loops.Load()
	rows := (st.rows.Load() + loops/2) / loops
	if !a.Timing {
		return fmt.Sprintf("(actual rows=%d loops=%d)", rows, loops)
	}
	ms := func(ns int64) float64 { return float64(ns) / float64(loops) / 1e6 }
	return fmt.Sprintf("(actual time=%.3f..%.3f rows=%d loops=%d)", ms(st.startNs.Load()), ms(st.totalNs.Load()), rows, loops)
}
