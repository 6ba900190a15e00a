package nexmark

import (
	"errors"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// stream collects a whole bounded stream as rows of column strings, per table.
type stream struct {
	person, auction, bid [][]string
	watermarks           []int64
	events               int64
}

func rowsOf(rec arrow.RecordBatch) [][]string {
	if rec == nil {
		return nil
	}
	out := make([][]string, rec.NumRows())
	for i := range out {
		row := make([]string, rec.NumCols())
		for j := range row {
			row[j] = rec.Column(j).ValueStr(i)
		}
		out[i] = row
	}
	return out
}

func collect(t testing.TB, cfg Config, step int) stream {
	t.Helper()
	g := New(cfg)
	var s stream
	for {
		b, err := g.Next(step)
		if errors.Is(err, io.EOF) {
			return s
		}
		if err != nil {
			t.Fatal(err)
		}
		s.person = append(s.person, rowsOf(b.Person)...)
		s.auction = append(s.auction, rowsOf(b.Auction)...)
		s.bid = append(s.bid, rowsOf(b.Bid)...)
		s.watermarks = append(s.watermarks, int64(b.Watermark))
		s.events += b.Events
	}
}

func int64Col(rec arrow.RecordBatch, name string) []int64 {
	idx := rec.Schema().FieldIndices(name)[0]
	switch a := rec.Column(idx).(type) {
	case *array.Int64:
		return a.Int64Values()
	case *array.Timestamp:
		v := a.TimestampValues()
		out := make([]int64, len(v))
		for i, x := range v {
			out[i] = int64(x)
		}
		return out
	}
	panic("not an int64 column: " + name)
}

func stringCol(rec arrow.RecordBatch, name string) *array.String {
	return rec.Column(rec.Schema().FieldIndices(name)[0]).(*array.String)
}
