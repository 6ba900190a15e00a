package nexmark

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Projection pushdown (docs/contributing/streaming.md, "Projection
// pushdown into the generators"): a generator told which columns of a
// table a plan reads (SetColumns) builds only those; its batches of that
// table have the pruned schema, the columns in table order. The other
// columns are not materialized at all, but every event still makes the
// random draws of its read columns exactly as without pruning, so each
// built value is the one a generator of every column builds, for any
// batch size, split and position: an event draws from its own stream
// (eventRNG), so a draw can only be skipped when no draw of a built
// column follows it in the event (the extra padding is always the last
// draw; the channel draw precedes only extra), and the draws that
// decide a later column's value (the lengths of names, descriptions,
// e-mails that size extra) are made whenever that column is built. A draw
// that is made but whose value is neither built nor routed by (the bid's
// price, which its table of powers of ten makes a tenth of a bid's cost)
// only advances the stream.

// colSet is a set of column indexes of one table (bit i: column i).
type colSet uint16

// allCols has every column of every table (at most 10).
const allCols colSet = 1<<16 - 1

func (s colSet) has(i int) bool { return s&(1<<i) != 0 }

// projection is what a generator builds of one table.
type projection struct {
	cols   colSet
	schema *arrow.Schema // the schema of the built columns
}

var fullProjections = [3]projection{
	kindPerson:  {allCols, personSchema},
	kindAuction: {allCols, auctionSchema},
	kindBid:     {allCols, bidSchema},
}

// SetColumns makes the generator build only columns cols of table's
// batches: indexes into Columns(table), ascending, without repeats (nil:
// every column, as before any SetColumns). The batches of that table then
// hold those columns in that order (their schema is the pruned one); the
// values, rows, positions and watermarks are those of a generator of
// every column. A bad table or column list is a 22023 error.
func (g *Generator) SetColumns(table string, cols []int) error {
	var k int
	switch table {
	case "person":
		k = kindPerson
	case "auction":
		k = kindAuction
	case "bid":
		k = kindBid
	default:
		return pgerr.New(pgerr.InvalidParameterValue, "nexmark: unknown table %q (expected person, auction or bid)", table)
	}
	if cols == nil {
		g.proj[k] = fullProjections[k]
		return nil
	}
	all := Columns(table)
	var set colSet
	keep := make([]types.Column, 0, len(cols))
	for i, c := range cols {
		if c < 0 || c >= len(all) || i > 0 && c <= cols[i-1] {
			return pgerr.New(pgerr.InvalidParameterValue, "nexmark: columns %v of table %s are not ascending indexes of its %d columns", cols, table, len(all))
		}
		set |= 1 << c
		keep = append(keep, all[c])
	}
	g.proj[k] = projection{cols: set, schema: types.ArrowSchema(keep)}
	return nil
}
