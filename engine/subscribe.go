package engine

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// SUBSCRIBE returns a result that never ends: each row is one change of the
// view, as (op, epoch_time, the view's columns...). op is insert, delete,
// update_before, update_after, or progress (a row of NULLs marking an
// epoch that completed with no change, WITH (progress = true)). The rows of
// the initial snapshot (WITH (snapshot = true), the default) are inserts.

// subscribeColumns are a subscription's result columns.
func subscribeColumns(cols []types.Column) []types.Column {
	out := make([]types.Column, 0, len(cols)+2)
	out = append(out, types.Column{Name: "op", Type: types.TText}, types.Column{Name: "epoch_time", Type: types.TTimestampTZ})
	return append(out, cols...)
}

// planSubscribe resolves what a SUBSCRIBE reads: a materialized view, or a
// query planned as a private job. It returns the view's columns.
type subscribeTarget struct {
	viewOID uint32               // SUBSCRIBE TO view
	query   *planner.StreamQuery // SUBSCRIBE (query) or TO a table/source
	cols    []types.Column
}

func (s *Session) planSubscribe(env *planner.Env, x *sql.Subscribe) (*subscribeTarget, error) {
	if x.Target != "" {
		schema, name := "", x.Target
		rel, err := s.eng.cat.Resolve(schema, name, s.set.searchPath())
		if err != nil {
			return nil, err
		}
		if rel.Kind == catalog.KindMatView {
			if err := s.checkPriv(rel, catalog.PrivSelect); err != nil { // grant.go
				return nil, err
			}
			if x.Emit != nil {
				return nil, pgerr.Unsupported("%s cannot be used with SUBSCRIBE TO a materialized view; give it in the view's definition", x.Emit.Written)
			}
			cols := make([]types.Column, len(rel.Columns))
			for i, c := range rel.Columns {
				cols[i] = types.Column{Name: c.Name, Type: c.Type}
			}
			return &subscribeTarget{viewOID: rel.OID, cols: cols}, nil
		}
	}
	env.Streams = flowStreams{s.eng}
	env.Emit = x.Emit
	env.TemporalJoins = x.TemporalJoins
	env.SessionFrames = x.SessionFrames
	q, err := planner.PlanStream(env, x.Stmt)
	if err != nil {
		return nil, err
	}
	return &subscribeTarget{query: q, cols: q.Columns}, nil
}

var nextPrivateJob atomic.Uint32

// startSubscribe implements subscribeFunc (live.go) on the dataflow runtime:
// SUBSCRIBE TO view reads the view's changelog; SUBSCRIBE (query) and TO a
// table or source run the query as a private job that ends with the
// subscription.
func (e *Engine) startSubscribe(ctx context.Context, s *Session, x *sql.Subscribe) ([]types.Column, func(context.Context) (exec.Iterator, error), error) {
	var since *time.Time
	snapshotGiven := false
	for _, o := range x.Options {
		k := strings.ToLower(o.Key)
		switch k {
		case "since":
			fo := s.Format()
			v, err := types.ParseText(o.Value, types.TTimestampTZ, &fo)
			if err != nil {
				return nil, nil, err
			}
			t := time.UnixMicro(int64(v.(types.TimestampValue)))
			since = &t
		case "snapshot":
			snapshotGiven = true
		case "progress":
		default:
			return nil, nil, pgerr.New(pgerr.InvalidParameterValue, "unrecognized SUBSCRIBE option \"%s\"", o.Key).
				WithHint("Options are snapshot, progress and since.")
		}
	}
	if since != nil && snapshotGiven && x.Snapshot {
		return nil, nil, pgerr.New(pgerr.InvalidParameterValue, "SUBSCRIBE cannot take both since and snapshot = true").
			WithHint("since resumes after an epoch the subscriber has seen; snapshot starts from the view as of now.")
	}
	env := s.env(ctx, nil)
	p, err := s.planSubscribe(env, x)
	if err != nil {
		return nil, nil, err
	}
	if e.cfg.Cluster != nil { // clusterRefusal let it run on the coordinator
		if p.query != nil {
			return nil, nil, pgerr.Unsupported("SUBSCRIBE to a query, a table or a source is not supported on a cluster yet: subscribe to a materialized view (see docs/cluster.md)").
				WithHint("Create a materialized view of the query and subscribe to it.")
		}
		if since != nil {
			return nil, nil, pgerr.Unsupported("SUBSCRIBE ... WITH (since = ...) is not supported on a cluster yet: a view's change log is kept by the node that is coordinator, and a new one does not have it (see docs/cluster.md)")
		}
	}
	if since != nil && p.query != nil {
		return nil, nil, pgerr.Unsupported("SUBSCRIBE ... WITH (since = ...) works with SUBSCRIBE TO a materialized view").
			WithHint("Create a materialized view of the query and subscribe to it.")
	}
	cols := subscribeColumns(p.cols)
	opts := dataflow.SubOptions{Snapshot: x.Snapshot, Progress: x.Progress}
	start := func(ctx context.Context) (exec.Iterator, error) {
		var sub *dataflow.Subscription
		var err error
		switch {
		case since != nil:
			sub, err = e.flow.SubscribeSince(p.viewOID, dataflow.EpochAt(*since), opts)
		case p.query != nil:
			id := privateJobBase + nextPrivateJob.Add(1)
			sub, err = e.flow.SubscribeQuery(dataflow.JobSpec{ID: id, Name: "subscribe", Plan: p.query.Root, Key: p.query.Key, Cols: p.query.Columns}, opts)
		default:
			sub, err = e.flow.Subscribe(p.viewOID, opts)
		}
		if err != nil && p.query == nil && e.flow.Job(p.viewOID) == nil {
			return nil, e.viewNotRunning(p.viewOID)
		}
		if err != nil {
			return nil, err
		}
		// Once the snapshot's epoch is complete, every row committed from
		// now on comes as a change (snapshot = false sends nothing older).
		if err := e.flow.WaitEpoch(ctx, sub.Start()); err != nil {
			sub.Close()
			return nil, err
		}
		if since == nil && p.query == nil {
			// Before the first row: a restart must be able to resume
			// this subscription (WITH (since = ...)).
			if err := e.flow.CoverChangelog(ctx, p.viewOID); err != nil {
				sub.Close()
				return nil, err
			}
		}
		return &subIter{ctx: ctx, sub: sub, cols: cols}, nil
	}
	return cols, start, nil
}

// subIter turns a subscription's updates into result batches. Next blocks
// until an update arrives (or ctx ends); it never reports the end.
// TryNext does not block. One goroutine at a time.
type subIter struct {
	ctx  context.Context
	sub  *dataflow.Subscription
	cols []types.Column
	pend []arrow.RecordBatch // built, not yet returned
}

// Next implements exec.Iterator.
func (it *subIter) Next() (arrow.RecordBatch, error) {
	for len(it.pend) == 0 {
		u, err := it.sub.Next(it.ctx)
		if err != nil {
			return nil, err
		}
		if err := it.add(u); err != nil {
			return nil, err
		}
	}
	return it.pop(), nil
}

// TryNext returns a batch if one is ready now.
func (it *subIter) TryNext() (arrow.RecordBatch, bool, error) {
	for len(it.pend) == 0 {
		u, ok, err := it.sub.TryNext()
		if err != nil || !ok {
			return nil, false, err
		}
		if err := it.add(u); err != nil {
			return nil, false, err
		}
	}
	return it.pop(), true, nil
}

func (it *subIter) pop() arrow.RecordBatch {
	b := it.pend[0]
	it.pend = it.pend[1:]
	return b
}

// Close implements exec.Iterator.
func (it *subIter) Close() error {
	it.sub.Close()
	return nil
}

// add converts one update into batches of the result's columns.
func (it *subIter) add(u dataflow.Update) error {
	schema := types.ArrowSchema(it.cols)
	ts := arrow.Timestamp(u.Time.UnixMicro())
	if len(u.Rows) == 0 {
		// progress: op 'progress', the epoch, NULL columns
		arrs := make([]arrow.Array, len(it.cols))
		for i, c := range it.cols {
			b := array.NewBuilder(memory.DefaultAllocator, c.Type.ArrowType())
			switch i {
			case 0:
				b.(*array.StringBuilder).Append("progress")
			case 1:
				b.(*array.TimestampBuilder).Append(ts)
			default:
				b.AppendNull()
			}
			arrs[i] = b.NewArray()
			b.Release()
		}
		it.pend = append(it.pend, array.NewRecordBatch(schema, arrs, 1))
		return nil
	}
	row := 0
	for _, rec := range u.Rows {
		n := int(rec.NumRows())
		if n == 0 {
			continue
		}
		ob := array.NewStringBuilder(memory.DefaultAllocator)
		tb := array.NewBuilder(memory.DefaultAllocator, types.TTimestampTZ.ArrowType()).(*array.TimestampBuilder)
		for i := 0; i < n; i++ {
			op := stream.Insert
			if u.Ops != nil {
				op = u.Ops[row+i]
			}
			ob.Append(op.String())
			tb.Append(ts)
		}
		row += n
		arrs := append([]arrow.Array{ob.NewArray(), tb.NewArray()}, rec.Columns()...)
		ob.Release()
		tb.Release()
		if len(arrs) != len(it.cols) {
			return fmt.Errorf("subscription: %d columns, want %d", len(arrs), len(it.cols))
		}
		it.pend = append(it.pend, array.NewRecordBatch(schema, arrs, int64(n)))
	}
	return nil
}
