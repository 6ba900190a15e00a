package dataflow

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// Projection pushdown (docs/contributing/streaming.md, "Projection
// pushdown into the generators"). A source scan with Read (set by the
// planner for connectors that prune, connector.PrunesColumns) emits only
// those columns. Inputs that are ColumnInputs (the engine's, the
// benchmark's) open its readers with the columns, and the reader builds
// only those; through other Inputs the reader builds every column and the
// runtime drops the others as each batch leaves the reader (no copy).
// Either way the scan's batches have the schema of Scan.Columns, and a
// reader's positions are those of a reader of every column.

// ColumnInputs is implemented by Inputs whose source readers can build
// only some columns of a source.
type ColumnInputs interface {
	// OpenSourceColumns opens reader split of splits (splits <= 1: the
	// only one) of source oid for the job (the view's OID) at pos (nil:
	// the start), pos being a position that reader split of splits
	// reported; it emits only columns cols (ascending indexes into the
	// source's columns), in that order.
	OpenSourceColumns(job, oid uint32, cols []int, pos []byte, split, splits int, onError func(error)) (SourceReader, error)
}

// readerRun is the sourceRun of an opened SourceReader that starts at pos;
// split tells that it is one of a split source's readers.
func readerRun(sr SourceReader, pos []byte, split bool) sourceRun {
	return sourceRun{run: sr.Run, position: sr.Position, partition: sr.Partition, partitions: sr.Partitions,
		marks: sr.Marks, finite: sr.Finite, inputEnd: sr.InputEnd, start: pos, split: split, recycle: sr.Recycle}
}

// openScan opens reader i of k of source scan s at pos (nil: the start):
// through ColumnInputs when s reads only some columns and the inputs can,
// else by open, whose batches then lose the columns s does not read.
func (j *Job) openScan(s *stream.Scan, pos []byte, i, k int, open func() (sourceRun, error)) (sourceRun, error) {
	if src, ok, err := j.openRouted(s, pos, i, k); ok {
		return src, err
	}
	if ci, ok := j.rt.in.(ColumnInputs); ok && s.Read != nil {
		sr, err := ci.OpenSourceColumns(j.spec.ID, s.Rel, s.Read, pos, i, k, j.rowError)
		if err != nil {
			return sourceRun{}, err
		}
		return readerRun(sr, pos, k > 1), nil
	}
	src, err := open()
	if err != nil || s.Read == nil {
		return src, err
	}
	src.run = pruneRun(src.run, s)
	return src, nil
}

// pruneRun wraps a reader of every column of s's source so that its
// batches hold only s.Read's columns (the same arrays, not copied).
func pruneRun(run RunFunc, s *stream.Scan) RunFunc {
	schema := types.ArrowSchema(s.Columns())
	return func(ctx context.Context, emit func(arrow.RecordBatch) error) error {
		return run(ctx, func(rec arrow.RecordBatch) error {
			if rec == nil { // the position moved without rows
				return emit(nil)
			}
			if int(rec.NumCols()) != len(s.Cols) {
				rec.Release()
				return fmt.Errorf("dataflow: a batch of source %s has %d columns, the source %d", s.Name, rec.NumCols(), len(s.Cols))
			}
			out := pickColumns(rec, schema, s.Read)
			rec.Release()
			return emit(out)
		})
	}
}

// pickColumns returns a record of rec's columns cols (the same arrays,
// retained, not copied), of schema.
func pickColumns(rec arrow.RecordBatch, schema *arrow.Schema, cols []int) arrow.RecordBatch {
	arrs := make([]arrow.Array, len(cols))
	for i, c := range cols {
		arrs[i] = rec.Column(c)
	}
	return array.NewRecordBatch(schema, arrs, rec.NumRows())
}
