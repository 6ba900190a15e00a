package planner

import (
	"github.com/streamsql/streamsql/connector"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
)

// Projection pushdown into the generators (docs/contributing/streaming.md):
// a scan of a source whose connector prunes (connector.PrunesColumns)
// reads only the columns the plan needs of it: those its consumers need,
// those of the conditions pushed into the scan, and the watermark's
// column and the columns its expression reads (the reader computes the
// watermark over its batches). The scan's rows then hold those columns
// (stream.Scan.Read), its reader builds nothing else, and the layout of
// the scan's output is theirs, so every expression bound above it reads
// them where they are.

// pruneSource sets sc.Read to the columns of source scan x (over sc) that
// the plan reads, need being what its consumers need and filter the
// conditions evaluated over its rows, and returns the layout of the scan's
// output (x.ids, or those of the read columns); sc.Watermark is rebound
// over the read columns. A scan that reads every column is left as it is.
func pruneSource(sc *stream.Scan, x *lScan, need map[int]bool, filter []expr.Expr) []int {
	if sc.Kind != stream.ScanSource || !connector.PrunesColumns(x.rel.Connector) || len(x.ids) != len(sc.Cols) {
		return x.ids
	}
	used := union(need, filter...)
	var wmCols map[int]bool // relation column indexes
	if w := sc.Watermark; w != nil {
		wmCols = refsOf(w.Expr)
		wmCols[w.Col] = true
	}
	var read []int
	for i, id := range x.ids {
		if used[id] || wmCols[i] {
			read = append(read, i)
		}
	}
	if len(read) == 0 {
		// Nothing is read, but the rows still count: keep the first column.
		read = []int{0}
	}
	if len(read) == len(sc.Cols) {
		return x.ids
	}
	at := make(map[int]int, len(read)) // relation column -> output column
	lay := make([]int, len(read))
	for k, i := range read {
		at[i] = k
		lay[k] = x.ids[i]
	}
	if w := sc.Watermark; w != nil {
		sc.Watermark = rebindWatermark(w, func(c int) int { return at[c] })
	}
	sc.Read = read
	return lay
}

// rebindWatermark returns w over another layout of the scan's columns:
// column c of w's layout is column at(c) of the new one.
func rebindWatermark(w *stream.ScanWatermark, at func(int) int) *stream.ScanWatermark {
	e, _ := transform(w.Expr, func(n expr.Expr) (expr.Expr, bool, error) {
		if c, ok := n.(*expr.ColRef); ok {
			r := *c
			r.Idx = at(c.Idx)
			return &r, true, nil
		}
		return n, false, nil
	})
	return &stream.ScanWatermark{Col: at(w.Col), Expr: e, IdleTimeout: w.IdleTimeout}
}
