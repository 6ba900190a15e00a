package nexmark

import (
	"context"
	"errors"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/connector/internal/pace"
	"github.com/streamsql/streamsql/connector/internal/position"
	"github.com/streamsql/streamsql/pgerr"
)

// Reader streams one table of a Config's events from event 0, or from the
// position given to Seek, for the source runtime (connector.Reader). It is
// owned by the goroutine that calls Seek and then Run, once.
type Reader struct {
	cfg   Config
	gen   *Generator
	pacer *pace.Pacer // nil unless cfg.Paced
	at    int64       // the position: the event after the last batch passed to emit
	// splits is how many readers share the stream (Split; 0: one)
	splits int
	// group is the blocks in each of a split reader's groups, once decided
	// (layout; 0: not yet)
	group int
}

// NewReader returns a reader of cfg.Table's rows (cfg.Table must be set),
// paced in wall-clock time at cfg.EventsPerSecond when cfg.Paced.
func NewReader(cfg Config) *Reader {
	return NewReaderWithClock(cfg, nil)
}

// NewReaderWithClock is NewReader pacing on clock (nil: the real clock).
func NewReaderWithClock(cfg Config, clock pace.Clock) *Reader {
	r := &Reader{cfg: cfg, gen: New(cfg)}
	if cfg.Paced && cfg.EventsPerSecond > 0 {
		if clock == nil {
			r.pacer = pace.New(cfg.EventsPerSecond)
		} else {
			r.pacer = pace.NewWithClock(cfg.EventsPerSecond, clock)
		}
	}
	return r
}

// Split makes the reader reader i of n that share the stream
// (Generator.SetSplit): it reads the groups of events whose number is
// i mod n. Unpaced, a group holds one step's rows (DefaultBatchRows, times
// the instances of a reader that routes: SetRoute), so each step is one
// stretch of event time and the next stretch is another reader's; paced, a
// group is one block of 50 events, so that every reader carries its share
// of the rate at every moment. Call it before SetRoute, Seek and Run. Its
// positions are its own: resume it with a position that reader i of n of
// the same layout reported (they record the group).
func (r *Reader) Split(i, n int) error {
	if n <= 1 && i == 0 {
		return nil
	}
	if i < 0 || i >= n {
		return pgerr.New(pgerr.InvalidParameterValue, "nexmark: reader %d of %d does not exist", i, n)
	}
	r.splits = n
	r.gen.SetSplit(i, n)
	return nil
}

// SetColumns makes the reader build only columns cols of its table
// (Generator.SetColumns: ascending indexes into Columns(cfg.Table); nil:
// every column): its batches hold those, in that order. Its values and
// positions are those of a reader of every column, so a position one
// reported resumes the other. Call it before Run.
func (r *Reader) SetColumns(cols []int) error {
	return r.gen.SetColumns(r.cfg.Table, cols)
}

// Seek makes Run start at pos, a Position of a reader of the same Config
// (nil: event 0), as if the events before it had been read; pacing starts
// its schedule there. Call it before Run. A malformed position is an XX001
// error, one past a bounded stream's end a 55000 error.
func (r *Reader) Seek(pos []byte) error {
	r.layout()
	if pos == nil {
		r.gen.SetPosition(0)
		r.at = 0
		return nil
	}
	var v []uint64
	var err error
	if r.splits > 1 {
		v, err = position.Decode(pos, position.NexmarkV2, 2, "nexmark")
		if err == nil && v[1] != uint64(r.group) {
			return pgerr.New(pgerr.ObjectNotInPrerequisiteState, "nexmark: cannot resume a split reader dealt groups of %d blocks at a position of one dealt groups of %d", r.group, v[1]).
				WithHint("The readers' steps or pacing changed; the position comes from another layout.")
		}
	} else {
		v, err = position.Decode(pos, position.NexmarkV1, 1, "nexmark")
	}
	if err != nil {
		return err
	}
	n := v[0]
	if n > math.MaxInt64 || r.cfg.Events > 0 && int64(n) > r.cfg.Events {
		return pgerr.New(pgerr.ObjectNotInPrerequisiteState, "nexmark: cannot resume at event %d, past the stream's last event", n).
			WithHint("The position comes from a source with other options.")
	}
	r.gen.SetPosition(int64(n))
	r.at = r.gen.Position()
	return nil
}

// Position is the reader's position after the last batch it passed to emit
// (connector.Positioner), or the end once Run returned nil: the next event
// number, which may be past events of other tables that follow the batch's
// last row. Call it on the Run goroutine, from emit or after Run returned.
func (r *Reader) Position() []byte {
	if r.splits > 1 {
		return position.Encode(position.NexmarkV2, uint64(r.at), uint64(r.group))
	}
	return position.Encode(position.NexmarkV1, uint64(r.at))
}

// layout decides a split reader's groups (Split), once: after SetRoute,
// before the first position is taken or given. A resumed view's readers
// route as its new readers did (dataflow's noteRoutes), so they resume
// with the same groups; a view whose readers now route otherwise is
// rebuilt (Seek refuses the position).
func (r *Reader) layout() {
	if r.splits <= 1 || r.group > 0 {
		return
	}
	r.group = 1
	if r.pacer == nil {
		// One step's rows: a routed step's for its instances, else
		// DefaultBatchRows. Groups of DefaultBatchRows rows per reader
		// made an unrouted reader's group several steps, and the readers
		// stepping together (one group each in turn) read one at a time:
		// q7 at 8 readers took 2.5 times the CPU. Groups of one unrouted
		// step made a routed step span groups far apart in time.
		rows := DefaultBatchRows
		if r.gen.Routed() {
			rows *= r.gen.route.n
		}
		r.group = max(rows/max(tableShare(r.cfg.Table), 1), 1)
	}
	r.gen.SetGroup(r.group)
}

// tableShare is how many of every 50 events are of table t's (0: not a
// table).
func tableShare(t string) int {
	switch t {
	case "person":
		return kindShare[kindPerson]
	case "auction":
		return kindShare[kindAuction]
	case "bid":
		return kindShare[kindBid]
	}
	return 0
}

// Run sends the table's rows to emit until a bounded stream ends (nil), ctx
// is canceled (ctx.Err()) or emit fails (its error). Batches are never
// empty. Unpaced, a batch holds DefaultBatchRows rows and batches follow
// each other as fast as emit returns. Paced, a batch covers about a tenth
// of a second's events (at least one row) and leaves once its last event
// is due: the first batch at once, event n of a later batch at n /
// EventsPerSecond seconds after the first batch's last event.
func (r *Reader) Run(ctx context.Context, emit func(arrow.RecordBatch) error) error {
	return r.run(ctx, func(rec arrow.RecordBatch, _ []arrow.RecordBatch) error { return emit(rec) })
}

// SetRoute makes the reader route its rows (Generator.SetRoute) and
// reports whether it does; RunParts then emits them. Call it before Run.
func (r *Reader) SetRoute(col, n int, owner func(v int64) int) bool {
	return r.gen.SetRoute(r.cfg.Table, col, n, owner)
}

// SetRoute2 is SetRoute by two columns (Generator.SetRoute2).
func (r *Reader) SetRoute2(col, col2, n int, owner func(a, b int64) int) bool {
	return r.gen.SetRoute2(r.cfg.Table, col, col2, n, owner)
}

// Recycle implements connector.Recycler: it takes back the buffers of a
// batch Run or RunParts emitted (Generator.Recycle).
func (r *Reader) Recycle(rec arrow.RecordBatch) { r.gen.Recycle(rec) }

// Routes reports whether SetRoute routes the reader's rows
// (connector.PartsReader).
func (r *Reader) Routes() bool { return r.gen.Routed() }

// RunParts is Run for a reader that routes its rows (SetRoute): each step
// is emitted as one batch per instance (nil: none of its rows), all in one
// call, the position after the step being that of the call. Unpaced, a
// step generates DefaultBatchRows rows per instance, so each part is
// about as large as Run's batches.
func (r *Reader) RunParts(ctx context.Context, emit func(parts []arrow.RecordBatch) error) error {
	return r.run(ctx, func(_ arrow.RecordBatch, parts []arrow.RecordBatch) error {
		for k, p := range parts {
			if p.NumRows() == 0 {
				p.Release()
				parts[k] = nil
			}
		}
		return emit(parts)
	})
}

// run is Run and RunParts: emit gets a step's batch, or its parts when
// the generator routes.
func (r *Reader) run(ctx context.Context, emit func(rec arrow.RecordBatch, parts []arrow.RecordBatch) error) error {
	share := tableShare(r.cfg.Table)
	if share == 0 {
		return pgerr.New(pgerr.InvalidParameterValue, "nexmark: a reader needs a table (person, auction or bid), not %q", r.cfg.Table)
	}
	r.layout()
	defer r.gen.closePool()
	routed := r.gen.Routed()
	size := DefaultBatchRows
	if r.pacer != nil {
		size = pace.Batch(r.cfg.EventsPerSecond*float64(share)/proportionDenominator/float64(max(r.splits, 1)), DefaultBatchRows)
	} else if routed {
		size *= r.gen.route.n
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := r.gen.Next(size)
		if errors.Is(err, io.EOF) {
			r.at = r.gen.Position()
			return nil
		}
		if err != nil {
			return err
		}
		rec := b.Bid
		switch share {
		case 1:
			rec = b.Person
		case 3:
			rec = b.Auction
		}
		rows := int64(0)
		if routed {
			for _, p := range b.Parts {
				rows += p.NumRows()
			}
		} else {
			rows = rec.NumRows()
		}
		if rows == 0 {
			b.Release()
			continue
		}
		if r.pacer != nil {
			if err := r.pacer.Wait(ctx, r.gen.Position()-1); err != nil {
				b.Release()
				return err
			}
		}
		r.at = r.gen.Position()
		if err := emit(rec, b.Parts); err != nil {
			return err
		}
	}
}
