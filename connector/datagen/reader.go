package datagen

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/connector/internal/pace"
)

// Reader streams a Config's rows from row 0 for the source runtime
// (connector.Reader). It is owned by the goroutine that calls Run, once.
type Reader struct {
	gen   *Generator
	rate  float64
	pacer *pace.Pacer // nil when unpaced
}

// NewReader returns a reader of cfg's rows, paced at cfg.RowsPerSecond in
// wall-clock time when that is set.
func NewReader(cfg Config) *Reader {
	r := &Reader{gen: New(cfg), rate: cfg.RowsPerSecond}
	if r.rate > 0 {
		r.pacer = pace.New(r.rate)
	}
	return r
}

// NewReaderWithClock is NewReader with the pacing clock given (tests).
func NewReaderWithClock(cfg Config, clock pace.Clock) *Reader {
	r := NewReader(cfg)
	if r.pacer != nil {
		r.pacer = pace.NewWithClock(r.rate, clock)
	}
	return r
}

// Run sends the rows to emit in batches until the Config's rows are
// exhausted (it returns nil), ctx is canceled (ctx.Err()) or emit fails
// (its error). Unpaced, batches have DefaultBatchRows rows and follow each
// other as fast as emit returns; paced, a batch holds a tenth of a second's
// rows (at least 1, at most DefaultBatchRows); the first leaves at once,
// each later one when its last row is due, k/RowsPerSecond seconds after
// the first batch for a row k rows after the first batch's last.
func (r *Reader) Run(ctx context.Context, emit func(arrow.RecordBatch) error) error {
	size := DefaultBatchRows
	if r.pacer != nil {
		size = pace.Batch(r.rate, DefaultBatchRows)
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := r.gen.Next(size)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
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
