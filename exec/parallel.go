package exec

import (
	"errors"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
)

// Intra-query parallelism of the batch operators (HashAgg with GROUP BY,
// HashJoin's probe). An operator's input iterator is still read by one
// goroutine (the feeder), which hands its batches out, numbered, to W
// workers; the results come back in input order (parMap), so a parallel
// operator sees its input in the order the serial one does, which is what
// makes its results identical (see hashagg_par.go and hashjoin_par.go).
// Context.Workers (the engine sets it from max_parallel_workers_per_gather)
// bounds W; GOMAXPROCS bounds it too.

// workers returns how many goroutines an operator of this execution may
// use: Context.Workers, at most GOMAXPROCS, at least 1.
func workers(ctx *Context) int {
	if ctx == nil || ctx.Workers <= 1 {
		return 1
	}
	return min(ctx.Workers, runtime.GOMAXPROCS(0))
}

// parallelSafe reports whether es can be evaluated from several goroutines
// sharing one expr.Context: only the node kinds listed here, no subqueries
// (they cache their results in the Context), no outer references and no
// volatile functions (nextval, random: their order of calls would change).
func parallelSafe(es ...expr.Expr) bool {
	for _, e := range es {
		if !exprParallelSafe(e) {
			return false
		}
	}
	return true
}

func exprParallelSafe(e expr.Expr) bool {
	if e == nil {
		return true
	}
	switch x := e.(type) {
	case *expr.ColRef, *expr.Const, *expr.Param:
		return true
	case *expr.Call:
		return !x.Fn.Volatile && parallelSafe(x.Args...)
	case *expr.Cast:
		return exprParallelSafe(x.E)
	case *expr.DomainCheck:
		return exprParallelSafe(x.E) && parallelSafe(x.Checks...)
	case *expr.And:
		return parallelSafe(x.Args...)
	case *expr.Or:
		return parallelSafe(x.Args...)
	case *expr.Not:
		return exprParallelSafe(x.E)
	case *expr.IsNull:
		return exprParallelSafe(x.E)
	case *expr.IsBool:
		return exprParallelSafe(x.E)
	case *expr.IsDistinct:
		return parallelSafe(x.L, x.R)
	case *expr.Case:
		for _, w := range x.Whens {
			if !parallelSafe(w.Cond, w.Result) {
				return false
			}
		}
		return exprParallelSafe(x.Else)
	case *expr.Coalesce:
		return parallelSafe(x.Args...)
	case *expr.NullIf:
		return parallelSafe(x.L, x.R)
	case *expr.InList:
		return exprParallelSafe(x.E) && parallelSafe(x.List...)
	case *expr.Like:
		return parallelSafe(x.E, x.Pattern, x.Escape)
	case *expr.ArrayExpr:
		return parallelSafe(x.Elems...)
	case *expr.RowExpr:
		return parallelSafe(x.Args...)
	case *expr.FieldSelect:
		return exprParallelSafe(x.E)
	case *expr.RowCompare:
		return parallelSafe(x.Eq...) && parallelSafe(x.Cmp...)
	case *expr.Subscript:
		return parallelSafe(x.E, x.Index)
	}
	return false
}

// errParStopped is what a stopped parMap's goroutines see; never returned
// to a caller (the error that stopped it is).
var errParStopped = errors.New("exec: parallel work stopped")

// parMap applies fn to the batches of one input on w goroutines and returns
// the results in input order. At most 2w+2 batches are between the feeder
// and the consumer at any time (read, being mapped or waiting their turn),
// so memory stays bounded whatever the input's size. next is called by one
// goroutine (the consumer); stop must be called before the input is closed.
type parMap[R any] struct {
	ctx     *Context
	done    chan struct{} // closed by stop
	tokens  chan struct{} // one per batch in flight
	jobs    chan parJob
	results chan parResult[R]
	end     chan parEnd // the feeder's last word: how many batches, and why it stopped
	wg      sync.WaitGroup
	once    sync.Once

	want    int // the next sequence number to return
	pending map[int]parResult[R]
	total   int // -1 until the feeder ends
	endErr  error
}

type parJob struct {
	seq int
	b   arrow.RecordBatch
}

type parResult[R any] struct {
	seq int
	r   R
	err error
}

type parEnd struct {
	n   int
	err error
}

// startParMap starts the feeder (reading in) and w workers applying fn;
// fn's worker argument (0..w-1) lets it keep per-worker scratch state.
func startParMap[R any](ctx *Context, in func() (arrow.RecordBatch, error), w int, fn func(worker int, b arrow.RecordBatch) (R, error)) *parMap[R] {
	p := &parMap[R]{
		ctx:     ctx,
		done:    make(chan struct{}),
		tokens:  make(chan struct{}, 2*w+2),
		jobs:    make(chan parJob, w),
		results: make(chan parResult[R], 2*w+2),
		end:     make(chan parEnd, 1),
		pending: map[int]parResult[R]{},
		total:   -1,
	}
	p.wg.Add(1 + w)
	go p.feed(in)
	for wk := 0; wk < w; wk++ {
		go p.work(wk, fn)
	}
	return p
}

func (p *parMap[R]) feed(in func() (arrow.RecordBatch, error)) {
	defer p.wg.Done()
	defer close(p.jobs)
	seq := 0
	var err error
	defer func() { p.end <- parEnd{n: seq, err: err} }()
	for {
		select {
		case p.tokens <- struct{}{}:
		case <-p.done:
			err = errParStopped
			return
		}
		if err = canceled(p.ctx); err != nil {
			return
		}
		var b arrow.RecordBatch
		func() {
			defer recoverErr(&err)
			b, err = in()
		}()
		if err != nil || b == nil {
			return
		}
		select {
		case p.jobs <- parJob{seq: seq, b: b}:
			seq++
		case <-p.done:
			err = errParStopped
			return
		}
	}
}

func (p *parMap[R]) work(wk int, fn func(int, arrow.RecordBatch) (R, error)) {
	defer p.wg.Done()
	for j := range p.jobs {
		res := parResult[R]{seq: j.seq}
		if res.err = canceled(p.ctx); res.err == nil {
			func() {
				defer recoverErr(&res.err)
				res.r, res.err = fn(wk, j.b)
			}()
		}
		select {
		case p.results <- res:
		case <-p.done:
			return
		}
	}
}

// next returns the next result in input order; ok is false at the end (or
// with an error: the first, in input order, of the input's and fn's).
func (p *parMap[R]) next() (r R, ok bool, err error) {
	for {
		if res, found := p.pending[p.want]; found {
			delete(p.pending, p.want)
			p.want++
			<-p.tokens
			if res.err != nil {
				return r, false, res.err
			}
			return res.r, true, nil
		}
		if p.total >= 0 && p.want >= p.total {
			return r, false, p.endErr
		}
		select {
		case res := <-p.results:
			p.pending[res.seq] = res
		case e := <-p.end:
			p.total, p.endErr = e.n, e.err
		}
	}
}

// stop ends the goroutines and waits for them; safe to call more than once.
func (p *parMap[R]) stop() {
	p.once.Do(func() {
		close(p.done)
		p.wg.Wait()
	})
}
