package stream

import (
	"sync/atomic"
	"time"

	"github.com/streamsql/streamsql/types"
)

// Meter is what one operator instance reports about itself while it runs
// (issue 16, docs/observability.md): the estimated size of its state and
// the time it spends handling messages. The operator's goroutine writes
// it (atomics, once per message or barrier); anyone may read it at any
// time without blocking the operator. The runtime gives each operator its
// own Meter through Env.WithMeter; without one (Env.Meter nil) operators
// measure nothing.
type Meter struct {
	// stateBytes is the operator's state estimate as of its last barrier
	// (stateful operators only: hasState).
	stateBytes atomic.Int64
	hasState   atomic.Bool
	// handling is the ns spent between taking a message off an input and
	// being ready for the next one; sendWait the ns of that spent blocked
	// on a full output queue (not work: Busy excludes it).
	handling atomic.Int64
	sendWait atomic.Int64
}

// StateBytes returns the operator's last reported state size and whether
// it keeps state at all.
func (m *Meter) StateBytes() (int64, bool) { return m.stateBytes.Load(), m.hasState.Load() }

// Busy is the time the operator spent handling messages: neither waiting
// for input nor blocked on its output.
func (m *Meter) Busy() time.Duration {
	return time.Duration(max(m.handling.Load()-m.sendWait.Load(), 0))
}

// WithMeter returns an Env for one operator instance that reports into m:
// it shares e's context, clock, callbacks and Checkpointer; a failure of
// it fails e, and its Err reports e's failures too.
func (e *Env) WithMeter(m *Meter) *Env {
	c := &Env{Ctx: e.Ctx, Eval: e.Eval, OnRowError: e.OnRowError, Clock: e.Clock, OnLate: e.OnLate,
		Checkpoints: e.Checkpoints, Meter: m, parent: e}
	c.stop = func() { e.Fail(c.Err()) }
	return c
}

// stateSizer is implemented by operator states that can estimate their
// size cheaply (from counts they keep anyway, never by walking every row):
// reported at each barrier (Env.snapshot).
type stateSizer interface{ stateBytes() int64 }

// reportState records st's size in the operator's meter, if it has one.
func (e *Env) reportState(st Stateful) {
	if e.Meter == nil {
		return
	}
	if s, ok := st.(stateSizer); ok {
		e.Meter.stateBytes.Store(max(s.stateBytes(), 0))
		e.Meter.hasState.Store(true)
	}
}

// busyClock measures an operator goroutine's handling time: start when a
// message was taken, stop before waiting for the next (one clock read
// each, per message, not per row). Owned by the operator's goroutine.
type busyClock struct {
	m *Meter
	t time.Time // zero: not handling
}

func (e *Env) busyClock() busyClock { return busyClock{m: e.Meter} }

func (b *busyClock) start() {
	if b.m != nil {
		b.t = time.Now()
	}
}

func (b *busyClock) stop() {
	if b.m != nil && !b.t.IsZero() {
		b.m.handling.Add(int64(time.Since(b.t)))
		b.t = time.Time{}
	}
}

// Estimated sizes (bytes) used by the state estimates: an estimate per
// value of a column type, and the overhead of a map entry or a small
// per-row record.
const (
	estMapEntry = 48
	estRowHead  = 32
)

// estRowBytes is a rough in-memory size of one row of values of ts: a
// fixed-width value as a word (16 bytes for an interval), a variable-width
// one (text, numeric, bytea, json, arrays) as a string header and a short
// payload.
func estRowBytes(ts []types.T) int64 {
	var n int64
	for _, t := range ts {
		switch l := t.Len(); {
		case l > 8:
			n += int64(l)
		case l > 0:
			n += 8
		default:
			n += 32
		}
	}
	return n
}

// estColsBytes is estRowBytes for columns.
func estColsBytes(cs []types.Column) int64 {
	var n int64
	for _, c := range cs {
		n += estRowBytes([]types.T{c.Type})
	}
	return n
}
