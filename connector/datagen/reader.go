package datagen

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

// Reader streams a Config's rows from row 0, or from the position given to
// Seek, for the source runtime (connector.Reader). It is owned by the
// goroutine that calls Seek and then Run, once.
type Reader struct {
	gen   *Generator
	rate  float64
	pacer *pace.Pacer // nil when unpaced
	at    int64       // the position: the row after the last batch passed to emit
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

// Split makes the reader reader i of n that share the rows
// (Generator.SetSplit): it reads the blocks of SplitBlock rows whose
// number is i mod n. Call it before Seek and Run. Its positions are its
// own: resume it with a position that reader i of n reported.
func (r *Reader) Split(i, n int) error {
	if n <= 1 && i == 0 {
		return nil
	}
	if i < 0 || i >= n {
		return pgerr.New(pgerr.InvalidParameterValue, "datagen: reader %d of %d does not exist", i, n)
	}
	r.gen.SetSplit(i, n)
	if r.pacer != nil {
		r.rate /= float64(n) // its share of the rows, for the batch size
	}
	return nil
}

// SetColumns makes the reader build only columns cols of the Config
// (Generator.SetColumns; nil: every column). Its rows and positions are
// those of a reader of every column, so a position one reported resumes
// the other. Call it before Run.
func (r *Reader) SetColumns(cols []int) error { return r.gen.SetColumns(cols) }

// Seek makes Run start at pos, a Position of a reader of the same Config
// (nil: row 0), as if the rows before it had been read; pacing starts its
// schedule there. Call it before Run. A malformed position is an XX001
// error, one past the Config's last row a 55000 error.
func (r *Reader) Seek(pos []byte) error {
	if pos == nil {
		r.gen.SetPosition(0)
		r.at = 0
		return nil
	}
	v, err := position.Decode(pos, position.DatagenV1, 1, "datagen")
	if err != nil {
		return err
	}
	row, lim := v[0], r.gen.cfg.limit
	if row > math.MaxInt64 || lim >= 0 && int64(row) > lim {
		return pgerr.New(pgerr.ObjectNotInPrerequisiteState, "datagen: cannot resume at row %d, past the source's last row", row).
			WithHint("The position comes from a source with other options.")
	}
	r.gen.SetPosition(int64(row))
	r.at = r.gen.Position()
	return nil
}

// Position is the reader's position after the last batch it passed to emit
// (connector.Positioner), or the end once Run returned nil: the next row's
// number. Call it on the Run goroutine, from emit or after Run returned.
func (r *Reader) Position() []byte {
	return position.Encode(position.DatagenV1, uint64(r.at))
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
			r.at = r.gen.Position()
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
		r.at = r.gen.Position()
		if err := emit(rec); err != nil {
			return err
		}
	}
}
