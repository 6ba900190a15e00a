// Package membudget accounts the memory of batch queries: a server-wide
// Pool (--memory-limit) that no combination of statements can pass, and one
// Query per statement execution (statement_mem_limit) that reserves from it.
//
// Operators that retain state (sort buffers, hash tables, aggregate states,
// recursive CTE work tables, values under construction) call Grow before
// keeping more and Shrink when they let go; a Grow that would pass the
// statement's or the server's limit fails with PostgreSQL's 53200 "out of
// memory" for that statement only. Sizes are measured where it is cheap
// (Arrow buffer lengths, string lengths) and never estimated upward.
//
// Concurrency: a Pool is shared by all sessions and safe for concurrent use;
// a Query is safe for concurrent use too (a plan's subqueries and parallel
// operators may share it). A nil *Query accepts everything: tests and
// internal plans run unlimited.
package membudget

import (
	"sync/atomic"

	"github.com/streamsql/streamsql/pgerr"
)

// MaxAllocSize is PostgreSQL's largest single value (1 GB - 1): no text,
// bytea, array or jsonb value may be longer.
const MaxAllocSize = 0x3fffffff

// Pool is the server-wide budget every statement reserves from.
type Pool struct {
	limit int64 // <= 0: unlimited
	used  atomic.Int64
}

// NewPool returns a pool of limit bytes (<= 0: unlimited).
func NewPool(limit int64) *Pool { return &Pool{limit: limit} }

// Limit returns the pool's size (<= 0: unlimited).
func (p *Pool) Limit() int64 {
	if p == nil {
		return 0
	}
	return p.limit
}

// Used returns the bytes reserved by running statements.
func (p *Pool) Used() int64 {
	if p == nil {
		return 0
	}
	return p.used.Load()
}

func (p *Pool) grow(n int64) bool {
	if p == nil {
		return true
	}
	if v := p.used.Add(n); p.limit > 0 && v > p.limit {
		p.used.Add(-n)
		return false
	}
	return true
}

func (p *Pool) shrink(n int64) {
	if p != nil {
		p.used.Add(-n)
	}
}

// Query is one statement execution's budget.
type Query struct {
	pool    *Pool
	limit   int64 // <= 0: only the pool limits
	workMem int64
	used    atomic.Int64
	closed  atomic.Bool
}

// NewQuery returns a statement budget of limit bytes (<= 0: unlimited but
// for the pool) whose sort and hash operators each aim to stay under
// workMem bytes.
func NewQuery(pool *Pool, limit, workMem int64) *Query {
	return &Query{pool: pool, limit: limit, workMem: workMem}
}

// Limit returns the statement's limit (<= 0: none but the pool's).
func (q *Query) Limit() int64 {
	if q == nil {
		return 0
	}
	return q.limit
}

// WorkMem returns the per-operator budget (work_mem), 0 when unset.
func (q *Query) WorkMem() int64 {
	if q == nil {
		return 0
	}
	return q.workMem
}

// Used returns the bytes the statement holds.
func (q *Query) Used() int64 {
	if q == nil {
		return 0
	}
	return q.used.Load()
}

// Grow reserves n more bytes, or fails with 53200 and reserves nothing.
func (q *Query) Grow(n int64) error {
	if q == nil || n <= 0 {
		return nil
	}
	v := q.used.Add(n)
	if q.limit > 0 && v > q.limit {
		q.used.Add(-n)
		return OutOfMemory(n)
	}
	if !q.pool.grow(n) {
		q.used.Add(-n)
		return OutOfMemory(n)
	}
	return nil
}

// Shrink gives back n bytes reserved by Grow.
func (q *Query) Shrink(n int64) {
	if q == nil || n <= 0 {
		return
	}
	q.used.Add(-n)
	q.pool.shrink(n)
}

// Check reports whether n more transient bytes (a value or a batch being
// built, not kept past the call) would fit, without reserving them.
func (q *Query) Check(n int64) error {
	if q == nil || n <= 0 {
		return nil
	}
	if q.limit > 0 && q.used.Load()+n > q.limit {
		return OutOfMemory(n)
	}
	if p := q.pool; p != nil && p.limit > 0 && p.used.Load()+n > p.limit {
		return OutOfMemory(n)
	}
	return nil
}

// Close gives everything the statement still holds back to the pool; it is
// safe to call more than once. Grow after Close still counts, so that a
// late operator cannot slip past the limit.
func (q *Query) Close() {
	if q == nil || q.closed.Swap(true) {
		return
	}
	n := q.used.Swap(0)
	q.pool.shrink(n)
}

// OutOfMemory is PostgreSQL's error for a request past the budget.
func OutOfMemory(n int64) error {
	return pgerr.New(pgerr.OutOfMemory, "out of memory").
		WithDetail("Failed on request of size %d in memory context \"ExecutorState\".", n)
}

// Account is one operator's share of a statement's budget: it remembers
// what it reserved so that Release gives it all back.
// Used by one goroutine.
type Account struct {
	q    *Query
	used int64
}

// NewAccount returns an account on q (q may be nil: unlimited).
func NewAccount(q *Query) *Account { return &Account{q: q} }

// Grow reserves n more bytes for the operator.
func (a *Account) Grow(n int64) error {
	if a == nil || n <= 0 {
		return nil
	}
	if err := a.q.Grow(n); err != nil {
		return err
	}
	a.used += n
	return nil
}

// Shrink gives back n of the bytes the operator holds.
func (a *Account) Shrink(n int64) {
	if a == nil || n <= 0 {
		return
	}
	n = min(n, a.used)
	a.q.Shrink(n)
	a.used -= n
}

// Used returns what the operator holds.
func (a *Account) Used() int64 {
	if a == nil {
		return 0
	}
	return a.used
}

// OverWorkMem reports whether the operator holds more than work_mem.
func (a *Account) OverWorkMem() bool {
	return a != nil && a.q.WorkMem() > 0 && a.used > a.q.WorkMem()
}

// Release gives back everything the operator holds.
func (a *Account) Release() {
	if a == nil {
		return
	}
	a.q.Shrink(a.used)
	a.used = 0
}

// StringBuffer checks appending more bytes to a value already have bytes
// long, as PostgreSQL's enlargeStringInfo does (concat, format, replace,
// string_agg...): 54000 "out of memory" past MaxAllocSize.
func StringBuffer(have, more int64) error {
	if more < 0 || more >= MaxAllocSize-have {
		return pgerr.New(pgerr.ProgramLimitExceeded, "out of memory").
			WithDetail("Cannot enlarge string buffer containing %d bytes by %d more bytes.", have, more)
	}
	return nil
}

// LengthTooLarge is 54000 "requested length too large" (repeat, lpad, rpad,
// translate).
func LengthTooLarge() error {
	return pgerr.New(pgerr.ProgramLimitExceeded, "requested length too large")
}

// AllocRequest checks one allocation of n bytes as PostgreSQL's palloc does
// (||, overlay on text and bytea): XX000 "invalid memory alloc request size".
func AllocRequest(n int64) error {
	if n > MaxAllocSize {
		return pgerr.New(pgerr.InternalError, "invalid memory alloc request size %d", n)
	}
	return nil
}
