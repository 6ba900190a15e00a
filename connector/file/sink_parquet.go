package file

import (
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// parquetFile is an in-progress Parquet file of the file sink (FORMAT
// PARQUET), written from the Arrow batches as they are (arrow-go's
// pqarrow, Snappy compression, the Arrow schema stored in the file so that
// readers get the same Arrow types back). Columns keep streamsql's Arrow
// storage (types/arrow.go): numeric is a string column of its exact text.
type parquetFile struct {
	w *pqarrow.FileWriter
}

// parquetRowGroup is the most rows a row group holds.
const parquetRowGroup = 128 * 1024

func (p *parquetFile) open(out io.Writer, cols []types.Column) error {
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(parquetRowGroup))
	w, err := pqarrow.NewFileWriter(types.ArrowSchema(cols), out, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return err
	}
	p.w = w
	return nil
}

// write appends the inserted rows of rec (with force_append_only also the
// update_after rows; Parse refused retractions otherwise).
func (p *parquetFile) write(rec arrow.RecordBatch, ops []stream.Op, force bool, f *outFile) error {
	put := func(r arrow.RecordBatch) error {
		if err := p.w.WriteBuffered(r); err != nil {
			return err
		}
		f.rows += r.NumRows()
		f.bytes += recordBytes(r)
		return nil
	}
	if ops == nil {
		return put(rec)
	}
	n := len(ops)
	for i := 0; i < n; {
		if ops[i] == stream.Delete || ops[i] == stream.UpdateBefore {
			i++
			continue
		}
		j := i + 1
		for j < n && (ops[j] == stream.Insert || ops[j] == stream.UpdateAfter) {
			j++
		}
		sub := rec.NewSlice(int64(i), int64(j))
		err := put(sub)
		sub.Release()
		if err != nil {
			return err
		}
		i = j
	}
	return nil
}

func (p *parquetFile) close() error {
	err := p.w.Close()
	p.w = nil
	return err
}

// parquetColumnsOK refuses column types Parquet files cannot hold.
func parquetColumnsOK(cols []types.Column) error {
	for _, c := range cols {
		k := c.Type.Kind
		if k == types.Array {
			k = c.Type.Elem.Kind
		}
		if k == types.Interval {
			return pgerr.Unsupported("FORMAT PARQUET cannot write column \"%s\" of type %s", c.Name, c.Type).
				WithHint("Cast it to text, or use FORMAT JSON or CSV.")
		}
	}
	return nil
}

// recordBytes estimates the size of r's data (its share of buffers it may
// share with other slices), for max_file_bytes.
func recordBytes(r arrow.RecordBatch) int64 {
	var n int64
	var add func(d arrow.ArrayData)
	add = func(d arrow.ArrayData) {
		span := int64(max(1, d.Offset()+d.Len())) // a slice's share of shared buffers
		for _, b := range d.Buffers() {
			if b != nil {
				n += int64(b.Len()) * int64(d.Len()) / span
			}
		}
		for _, c := range d.Children() {
			add(c)
		}
	}
	for _, c := range r.Columns() {
		add(c.Data())
	}
	return n
}
