package datagen

import (
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Generator produces a Config's rows a batch at a time. It is not safe for
// concurrent use; Generators of one Config produce the same rows.
type Generator struct {
	cfg    Config
	schema *arrow.Schema
	// cols are the columns Next builds (SetColumns; nil: every column)
	cols []int
	next int64
	// split of splits: the generator yields only the rows of the blocks
	// (SplitBlock rows each) whose number is split mod splits (SetSplit;
	// splits 1: every row).
	split, splits int64
}

// SplitBlock is the number of consecutive rows a split generator yields
// before the next SplitBlock rows go to the next generator (SetSplit).
const SplitBlock = DefaultBatchRows

// New returns a generator positioned at row 0.
func New(cfg Config) *Generator {
	return &Generator{cfg: cfg, schema: types.ArrowSchema(cfg.Columns), splits: 1}
}

// SetColumns makes the generator build only columns cols of the Config
// (indexes into Config.Columns, ascending, without repeats; nil: every
// column): its batches hold those, in that order (projection pushdown,
// docs/contributing/streaming.md). Every column is a function of its own
// seed and the row number, so each built value, and every row count and
// position, is the one a generator of every column yields. A bad list is
// a 22023 error.
func (g *Generator) SetColumns(cols []int) error {
	if cols == nil {
		g.cols, g.schema = nil, types.ArrowSchema(g.cfg.Columns)
		return nil
	}
	keep := make([]types.Column, 0, len(cols))
	for i, c := range cols {
		if c < 0 || c >= len(g.cfg.Columns) || i > 0 && c <= cols[i-1] {
			return pgerr.New(pgerr.InvalidParameterValue, "datagen: columns %v are not ascending indexes of the source's %d columns", cols, len(g.cfg.Columns))
		}
		keep = append(keep, g.cfg.Columns[c])
	}
	g.cols, g.schema = make([]int, len(cols)), types.ArrowSchema(keep) // not nil, even when empty
	copy(g.cols, cols)
	return nil
}

// SetSplit makes the generator one of n (at least 1) that share the rows:
// it yields the blocks of SplitBlock rows whose number (row / SplitBlock)
// is i mod n (0 <= i < n), in order, so the union of the n generators'
// rows is the rows of one, each generated as one generator generates it
// (a row is a function of its number). Positions stay row numbers: after
// a batch, the number of the generator's next row; SetPosition to another
// number starts at the generator's first row at or after it.
func (g *Generator) SetSplit(i, n int) {
	g.split, g.splits = int64(i), max(int64(n), 1)
	g.align()
}

// align moves next to the generator's first row at or after it, and
// returns where the block it is in ends (MaxInt64 when not split).
func (g *Generator) align() int64 {
	if g.splits <= 1 {
		return math.MaxInt64
	}
	b := g.next / SplitBlock
	if r := ((b-g.split)%g.splits + g.splits) % g.splits; r != 0 {
		b += g.splits - r
		g.next = b * SplitBlock
	}
	return (b + 1) * SplitBlock
}

// Position is the index of the next row Next returns.
func (g *Generator) Position() int64 { return g.next }

// SetPosition positions the generator at row (for resuming after a checkpoint).
func (g *Generator) SetPosition(row int64) { g.next = max(row, 0) }

// Next returns the next up to max rows (max <= 0 means DefaultBatchRows; at
// most MaxBatchRows) as a batch of the Config's columns (those
// SetColumns chose), or io.EOF once the Config's rows are exhausted.
func (g *Generator) Next(max int) (arrow.RecordBatch, error) {
	if max <= 0 {
		max = DefaultBatchRows
	}
	blockEnd := g.align()
	n := int64(min(max, MaxBatchRows))
	if lim := g.cfg.limit; lim >= 0 {
		if g.next >= lim {
			g.next = lim // a split generator's last block may start past the end
			return nil, io.EOF
		}
		n = min(n, lim-g.next)
	}
	n = min(n, blockEnd-g.next)
	var cols []arrow.Array
	if g.cols == nil {
		cols = make([]arrow.Array, len(g.cfg.fields))
		for i := range g.cfg.fields {
			cols[i] = g.cfg.fields[i].array(g.next, int(n))
		}
	} else {
		cols = make([]arrow.Array, len(g.cols))
		for i, c := range g.cols {
			cols[i] = g.cfg.fields[c].array(g.next, int(n))
		}
	}
	rec := array.NewRecordBatch(g.schema, cols, n)
	for _, c := range cols {
		c.Release()
	}
	g.next += n
	return rec, nil
}
