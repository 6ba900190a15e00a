package stream

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// lazyPairs is the record of candidate pairs (left ++ right columns) that a
// join's Cond is evaluated on. It gathers a column only when Cond reads it
// (Column), so the columns the condition does not look at, often most of
// them (the strings the output carries), are never built for pairs that
// the condition may drop. Any whole-record use (Columns, NewSlice,
// SetColumn, MarshalJSON) gathers every column. Owned by the join's
// goroutine for one Cond evaluation; Release releases what was gathered.
type lazyPairs struct {
	r          *joinRun
	schema     *arrow.Schema
	sref, oref []ref
	cols       []arrow.Array // nil until gathered
}

func newLazyPairs(r *joinRun, sref, oref []ref) *lazyPairs {
	return &lazyPairs{r: r, schema: r.pairs, sref: sref, oref: oref, cols: make([]arrow.Array, len(r.pairs.Fields()))}
}

// Column gathers column i of the pairs on first use.
func (p *lazyPairs) Column(i int) arrow.Array {
	if p.cols[i] == nil {
		side, c := 0, i
		if nl := len(p.r.sides[0].cols); i >= nl {
			side, c = 1, i-nl
		}
		sd := p.r.sides[side]
		recs, refs := sd.recs, p.oref
		if side == p.r.s {
			recs, refs = p.r.one[:], p.sref
		}
		p.cols[i] = gather(sd.cols[c].Type, recs, c, refs)
	}
	return p.cols[i]
}

func (p *lazyPairs) Columns() []arrow.Array {
	for i := range p.cols {
		p.Column(i)
	}
	return p.cols
}

// record is the pairs as a plain record (every column gathered).
func (p *lazyPairs) record() arrow.RecordBatch {
	return array.NewRecordBatch(p.schema, p.Columns(), p.NumRows())
}

func (p *lazyPairs) Schema() *arrow.Schema   { return p.schema }
func (p *lazyPairs) NumRows() int64          { return int64(len(p.sref)) }
func (p *lazyPairs) NumCols() int64          { return int64(len(p.cols)) }
func (p *lazyPairs) ColumnName(i int) string { return p.schema.Field(i).Name }
func (p *lazyPairs) Retain()                 {}

func (p *lazyPairs) Release() {
	for i, a := range p.cols {
		if a != nil {
			a.Release()
			p.cols[i] = nil
		}
	}
}

func (p *lazyPairs) SetColumn(i int, col arrow.Array) (arrow.RecordBatch, error) {
	rec := p.record()
	defer rec.Release()
	return rec.SetColumn(i, col)
}

func (p *lazyPairs) NewSlice(i, j int64) arrow.RecordBatch {
	rec := p.record()
	defer rec.Release()
	return rec.NewSlice(i, j)
}

func (p *lazyPairs) MarshalJSON() ([]byte, error) {
	rec := p.record()
	defer rec.Release()
	return rec.MarshalJSON()
}
