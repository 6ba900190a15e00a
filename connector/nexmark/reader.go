package nexmark

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/connector/internal/pace"
	"github.com/streamsql/streamsql/pgerr"
)

// Reader streams one table of a Config's events from event 0 for the
// source runtime (connector.Reader). It is owned by the goroutine that
// calls Run, once.
type Reader struct {
	cfg   Config
	gen   *Generator
	pacer *pace.Pacer // nil unless cfg.Paced
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

// Run sends the table's rows to emit until a bounded stream ends (nil), ctx
// is canceled (ctx.Err()) or emit fails (its error). Batches are never
// empty. Unpaced, a batch holds DefaultBatchRows rows and batches follow
// each other as fast as emit returns. Paced, a batch covers about a tenth
// of a second's events (at least one row) and leaves once its last event
// is due: the first batch at once, event n of a later batch at n /
// EventsPerSecond seconds after the first batch's last event.
func (r *Reader) Run(ctx context.Context, emit func(arrow.RecordBatch) error) error {
	share := 0
	switch r.cfg.Table {
	case "person":
		share = 1
	case "auction":
		share = 3
	case "bid":
		share = 46
	default:
		return pgerr.New(pgerr.InvalidParameterValue, "nexmark: a reader needs a table (person, auction or bid), not %q", r.cfg.Table)
	}
	size := DefaultBatchRows
	if r.pacer != nil {
		size = pace.Batch(r.cfg.EventsPerSecond*float64(share)/proportionDenominator, DefaultBatchRows)
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := r.gen.Next(size)
		if errors.Is(err, io.EOF) {
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
		if rec.NumRows() == 0 {
			rec.Release()
			continue
		}
		if r.pacer != nil {
			if err := r.pacer.Wait(ctx, r.gen.Position()-1); err != nil {
				rec.Release()
				return err
			}
		}
		if err := emit(rec); err != nil {
			return err
		}
	}
}
