package engine

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector"
	"github.com/streamsql/streamsql/pgerr"
)

// Batch reads of sources (planner.SourceReader): SELECT * FROM src LIMIT n
// peeks at what a source parses, reading it from its start with a reader of
// its own (the views over the source are not disturbed).

// maxSourceRows bounds a batch read of a finite source without LIMIT (a
// datagen sequence column ends only at its type's maximum).
const maxSourceRows = 1 << 20

// errEnough stops a source reader once the batch read has its rows.
var errEnough = errors.New("engine: batch read of source has its rows")

func (f flowStreams) source(oid uint32) (connector.Source, *catalog.Relation, error) {
	rel := f.e.cat.Relation(oid)
	if rel == nil || rel.Kind != catalog.KindSource {
		return nil, nil, pgerr.New(pgerr.UndefinedTable, "source with OID %d does not exist", oid)
	}
	src, err := f.e.openConnector(rel)
	return src, rel, err
}

// SourceFinite implements planner.SourceReader.
func (f flowStreams) SourceFinite(oid uint32) (bool, error) {
	src, _, err := f.source(oid)
	if err != nil {
		return false, err
	}
	return connector.IsFinite(src), nil
}

// SourceRows implements planner.SourceReader: the first limit rows (-1: all)
// of the source from its start. Records the reader skips (a file's
// malformed lines) are skipped here too, as the views skip them.
func (f flowStreams) SourceRows(oid uint32, limit int64) ([]arrow.RecordBatch, error) {
	src, rel, err := f.source(oid)
	if err != nil {
		return nil, err
	}
	if limit == 0 {
		return nil, nil
	}
	r, err := connector.NewReader(src, connector.ReaderOptions{Errors: func(error) {}})
	if err != nil {
		return nil, err
	}
	var out []arrow.RecordBatch
	var n int64
	err = r.Run(context.Background(), func(b arrow.RecordBatch) error {
		if limit < 0 && n+b.NumRows() > maxSourceRows {
			return pgerr.New(pgerr.Code("54000"), "source \"%s\" has more than %d rows: a batch query reads at most that many without LIMIT", rel.Name, maxSourceRows).
				WithHint("Add LIMIT, or create a materialized view over the source.")
		}
		if limit >= 0 && n+b.NumRows() >= limit {
			out = append(out, b.NewSlice(0, limit-n))
			n = limit
			return errEnough
		}
		out = append(out, b)
		n += b.NumRows()
		return nil
	})
	if pgerr.As(err) != nil {
		return nil, err
	}
	if err != nil && !errors.Is(err, errEnough) {
		return nil, pgerr.New(pgerr.Code("58000"), "could not read source \"%s\": %v", rel.Name, err)
	}
	return out, nil
}
