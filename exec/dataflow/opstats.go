package dataflow

import (
	"reflect"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/stream"
)

// Per-operator counters (the HTTP /metrics and /api/v1 of package web,
// docs/observability.md). Every operator's output channel passes through a
// meter goroutine (meter) that counts the rows of each chunk and the time
// it waits to hand a message on because the consumer's queue is full
// (backpressure). Counting is per message, with atomics: a scrape reads
// them without taking any lock of the dataflow. An operator's rows in are
// the sum of its inputs' rows out, computed when read.

// opMeter is one operator instance's counters. Written by its meter
// goroutine only, read by anyone.
type opMeter struct {
	node     stream.Node
	id       int   // position in the job's plan: inputs before consumers, the root last
	inputs   []int // ids of the operators feeding it
	instance int   // which parallel instance of the operator
	frag     int   // its fragment (labels.go)
	// recv, for an instance of a parallel operator fed by hash
	// exchanges, counts the rows they sent it (its rows in); nil: its
	// rows in are its inputs' rows out
	recv     *atomic.Int64
	rows     atomic.Int64
	chunks   atomic.Int64
	bytes    atomic.Int64 // Arrow bytes of the chunks; counted for Scans only (sizeOf)
	sizeOf   bool
	blocked  atomic.Int64 // ns waiting on a full output queue
	lastWM   atomic.Int64 // the last watermark it sent (µs); valid when hasWM
	hasWM    atomic.Bool
	lastSeen atomic.Int64 // unix ns of its last message (0: none yet)
	self     stream.Meter // what the operator reports: state size, busy time
}

// OperatorStats is one operator instance's counters since the job
// started (a snapshot: the values are read one by one, not together).
type OperatorStats struct {
	ID       int    // position in the plan, inputs before consumers; the view (or sink) itself is -1
	Name     string // short kind, e.g. "HashAgg", "Materialize"
	Explain  string // its EXPLAIN line
	Inputs   []int  // ids of the operators feeding it
	Instance int    // parallel instance (0 while operators run one instance)
	RowsIn   int64  // rows its inputs sent it (an instance of a parallel operator: the rows the exchanges sent it)
	RowsOut  int64  // rows it sent on (for the view: its net changes)
	Chunks   int64  // batches it sent on
	// Bytes is the size of the Arrow buffers of the batches a Scan sent
	// (what the job read from the relation; 0 for other operators).
	Bytes int64
	// Backpressure is how long it waited to send because the consumer's
	// queue was full.
	Backpressure time.Duration
	// Relation and RelationKind name what a Scan reads ("source",
	// "table", "materialized view"); "" for other operators.
	Relation, RelationKind string
	// Watermark is the last watermark it sent (µs since the Unix epoch).
	Watermark    int64
	HasWatermark bool
	// StateBytes is the operator's estimate of its state's size as of its
	// last barrier (HasState: it keeps state; stream/statesize.go).
	StateBytes int64
	HasState   bool
	// Busy is the time it spent handling messages, neither waiting for
	// input nor blocked on its output (0 for a Scan, which only passes its
	// reader's batches on).
	Busy time.Duration
	// Node is the plan's operator (nil for the view or sink itself): the
	// instances of a parallel operator share it.
	Node stream.Node
	// Fragment is the fragment the instance runs in (the label of its
	// goroutines, labels.go; 0 for the view or sink itself).
	Fragment int
}

// meter passes in on through a counting goroutine, recording m as the
// operator's counters. The goroutine stops with the job, like the
// operators.
func (j *Job) meter(m *opMeter, in <-chan stream.Message) <-chan stream.Message {
	out := make(chan stream.Message, stream.ChannelSize)
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		defer close(out)
		done := j.env.Ctx.Done()
		for {
			var msg stream.Message
			var ok bool
			select {
			case msg, ok = <-in:
			case <-done:
				return
			}
			if !ok {
				return
			}
			switch msg.Kind {
			case stream.KindChunk:
				m.rows.Add(int64(msg.Chunk.Len()))
				m.chunks.Add(1)
				if m.sizeOf {
					m.bytes.Add(recordBytes(msg.Chunk.Rec))
				}
			case stream.KindWatermark:
				if msg.Watermark.Col >= 0 { // not a split reader's mark (fragments.go)
					m.lastWM.Store(msg.Watermark.Value)
					m.hasWM.Store(true)
				}
			}
			select { // the common case: room in the queue, no clock read
			case out <- msg:
				continue
			default:
			}
			t := time.Now()
			select {
			case out <- msg:
				m.blocked.Add(int64(time.Since(t)))
			case <-done:
				return
			}
		}
	}()
	return out
}

// newMeter registers the counters of n (an operator of the job's plan).
// Called while the job is being started (rt.mu held), before it is
// published: Operators reads j.meters without a lock afterwards.
func (j *Job) newMeter(n stream.Node, inputs []int, instance int) *opMeter {
	m := &opMeter{node: n, id: len(j.meters), inputs: inputs, instance: instance}
	_, m.sizeOf = n.(*stream.Scan)
	j.meters = append(j.meters, m)
	return m
}

// Operators returns the counters of the job's operators: the plan's,
// inputs before their consumers, then the view's (or sink's) with id -1.
// Safe for concurrent use; never blocks the dataflow. Nil when the
// runtime does not count (Config.NoOperatorStats).
func (j *Job) Operators() []OperatorStats {
	if j.meters == nil {
		return nil
	}
	byID := make([]int64, len(j.meters))
	for i, m := range j.meters {
		byID[i] = m.rows.Load()
	}
	out := make([]OperatorStats, len(j.meters), len(j.meters)+1)
	for i, m := range j.meters {
		var in int64
		for _, c := range m.inputs {
			in += byID[c]
		}
		if len(m.inputs) == 0 { // a Scan passes its reader's rows on
			in = byID[i]
		}
		if m.recv != nil { // an instance fed by exchanges: its own share
			in = m.recv.Load()
		}
		out[i] = OperatorStats{ID: m.id, Name: OperatorName(m.node), Explain: m.node.Explain(), Inputs: m.inputs, Instance: m.instance,
			RowsIn: in, RowsOut: byID[i], Chunks: m.chunks.Load(), Bytes: m.bytes.Load(), Backpressure: time.Duration(m.blocked.Load()),
			Watermark: m.lastWM.Load(), HasWatermark: m.hasWM.Load(), Node: m.node, Fragment: m.frag}
		out[i].StateBytes, out[i].HasState = m.self.StateBytes()
		out[i].Busy = m.self.Busy()
		if s, ok := m.node.(*stream.Scan); ok {
			out[i].Relation, out[i].RelationKind = s.Name, s.Kind.String()
		}
	}
	last := OperatorStats{ID: -1, Name: "Materialize", Explain: "Materialize: " + j.spec.Name, RowsOut: j.rowsOut.Load()}
	if j.spec.Sink != nil {
		last.Name, last.Explain = "Sink", "Sink: "+j.spec.Name
	} else {
		last.StateBytes, last.HasState = j.viewMeter.StateBytes()
		last.Busy = j.viewMeter.Busy()
	}
	for _, id := range j.rootMeters { // the plan's root: one meter, or one per instance
		last.Inputs = append(last.Inputs, id)
		last.RowsIn += byID[id]
		last.Chunks += j.meters[id].chunks.Load() // the batches it received
	}
	return append(out, last)
}

// OperatorName is n's kind without the package and "Stream" prefix
// ("HashAgg", "Scan"): the operator label of metrics.
func OperatorName(n stream.Node) string {
	t := reflect.TypeOf(n)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return strings.TrimPrefix(t.Name(), "Stream")
}

// startMetered starts instance k of n (of width instances, in fragment
// frag: its goroutines' labels, labels.go) on env over ins and counts its
// output (see meter) and what it reports itself (its stream.Meter: state
// size, busy time), unless the runtime does not count
// (Config.NoOperatorStats). It sets j.outMeters to the meter's id (nothing
// when not counting).
func (j *Job) startMetered(n stream.Node, inputs []int, k, width, frag int, env *stream.Env, ins []<-chan stream.Message) <-chan stream.Message {
	name := OperatorName(n)
	var out <-chan stream.Message
	if j.rt.cfg.NoOperatorStats {
		j.outMeters = nil
		j.labeled(frag, k, width, RoleOperator, name, func() { out = n.Start(env, ins) })
		return out
	}
	m := j.newMeter(n, inputs, k)
	m.frag = frag
	j.outMeters = []int{m.id}
	j.labeled(frag, k, width, RoleOperator, name, func() { out = n.Start(env.WithMeter(&m.self), ins) })
	j.labeled(frag, k, width, RoleMeter, name, func() { out = j.meter(m, out) })
	return out
}

// Subscribers counts the job's subscriptions (active or waiting to
// start). It takes the job's subscriber lock for a moment.
func (j *Job) Subscribers() int {
	j.subMu.Lock()
	defer j.subMu.Unlock()
	n := 0
	for _, s := range j.subs {
		if !s.dead {
			n++
		}
	}
	return n
}

// recordBytes is the size of rec's Arrow buffers (shared buffers counted
// once per column that uses them).
func recordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += dataBytes(c.Data())
	}
	return n
}

func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		n += dataBytes(d.Dictionary())
	}
	return n
}
