package datagen

import (
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/types"
)

// Generator produces a Config's rows a batch at a time. It is not safe for
// concurrent use; Generators of one Config produce the same rows.
type Generator struct {
	cfg    Config
	schema *arrow.Schema
	next   int64
}

// New returns a generator positioned at row 0.
func New(cfg Config) *Generator {
	return &Generator{cfg: cfg, schema: types.ArrowSchema(cfg.Columns)}
}

// Position is the index of the next row Next returns.
func (g *Generator) Position() int64 { return g.next }

// SetPosition positions the generator at row (for resuming after a checkpoint).
func (g *Generator) SetPosition(row int64) { g.next = max(row, 0) }

// Next returns the next up to max rows (max <= 0 means DefaultBatchRows; at
// most MaxBatchRows) as a batch with the Config's columns, or io.EOF once
// the Config's rows are exhausted.
func (g *Generator) Next(max int) (arrow.RecordBatch, error) {
	if max <= 0 {
		max = DefaultBatchRows
	}
	n := int64(min(max, MaxBatchRows))
	if lim := g.cfg.limit; lim >= 0 {
		if g.next >= lim {
			return nil, io.EOF
		}
		n = min(n, lim-g.next)
	}
	cols := make([]arrow.Array, len(g.cfg.fields))
	for i := range g.cfg.fields {
		cols[i] = g.cfg.fields[i].array(g.next, int(n))
	}
	rec := array.NewRecordBatch(g.schema, cols, n)
	for _, c := range cols {
		c.Release()
	}
	g.next += n
	return rec, nil
}
