package encode

import (
	"bytes"
	"fmt"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// EmitFunc receives one record: key is nil for formats without a key
// (PLAIN, and DEBEZIUM over a query without key); value is nil for a
// tombstone (UPSERT's delete). Both alias the encoder's buffer and are
// valid only until EmitFunc returns.
type EmitFunc func(key, value []byte) error

// Encoder turns rows into records. It is owned by one goroutine.
type Encoder interface {
	// Encode passes the records of rec's rows to emit in row order. ops is
	// nil when every row is an insert. rec's columns are the encoder's.
	Encode(rec arrow.RecordBatch, ops []stream.Op, emit EmitFunc) error
}

// New returns the encoder of f (not Parquet, which files write directly)
// over cols; key indexes the key columns (UPSERT needs one; others use it
// for the record key when not nil).
func New(f Format, cols []types.Column, key []int) (Encoder, error) {
	switch {
	case f.Encoding == Parquet:
		return nil, fmt.Errorf("encode: parquet has no record encoder")
	case f.Encoding == CSV && f.Kind != Plain:
		return nil, fmt.Errorf("encode: ENCODE CSV is PLAIN only")
	case f.Kind == Upsert && len(key) == 0:
		return nil, fmt.Errorf("encode: UPSERT without a key")
	}
	e := &encoder{f: f, key: key}
	for i, c := range cols {
		jc := jsonCol{name: appendJSONString(nil, c.Name), json: jsonValue(c.Type), text: textValue(c.Type)}
		jc.name = append(jc.name, ':')
		_ = i
		e.cols = append(e.cols, jc)
	}
	e.now = func() int64 { return time.Now().UnixMilli() }
	return e, nil
}

type jsonCol struct {
	name []byte // "name":
	json valueFunc
	text valueFunc
}

type encoder struct {
	f    Format
	cols []jsonCol
	key  []int
	now  func() int64 // ts_ms of DEBEZIUM records
	kbuf []byte
	vbuf []byte
	bbuf []byte // DEBEZIUM's before row
}

// Encode implements Encoder.
func (e *encoder) Encode(rec arrow.RecordBatch, ops []stream.Op, emit EmitFunc) error {
	n := int(rec.NumRows())
	cols := rec.Columns()
	op := func(i int) stream.Op {
		if ops == nil {
			return stream.Insert
		}
		return ops[i]
	}
	switch e.f.Kind {
	case Plain:
		for i := 0; i < n; i++ {
			if o := op(i); o == stream.Delete || o == stream.UpdateBefore {
				continue // Parse allowed retractions only with force_append_only
			}
			if e.f.Encoding == CSV {
				e.vbuf = e.csvRow(e.vbuf[:0], cols, i)
			} else {
				e.vbuf = e.jsonRow(e.vbuf[:0], cols, i)
			}
			var key []byte
			if e.key != nil {
				e.kbuf = e.jsonKey(e.kbuf[:0], cols, i)
				key = e.kbuf
			}
			if err := emit(key, e.vbuf); err != nil {
				return err
			}
		}
	case Upsert:
		for i := 0; i < n; i++ {
			o := op(i)
			e.kbuf = e.jsonKey(e.kbuf[:0], cols, i)
			if o == stream.UpdateBefore {
				// Its update_after overwrites the key, unless the update
				// changed the key: then the old key is deleted.
				if i+1 < n && op(i+1) == stream.UpdateAfter {
					e.bbuf = e.jsonKey(e.bbuf[:0], cols, i+1)
					if bytes.Equal(e.kbuf, e.bbuf) {
						continue
					}
				}
				o = stream.Delete
			}
			var val []byte
			if o != stream.Delete {
				e.vbuf = e.jsonRow(e.vbuf[:0], cols, i)
				val = e.vbuf
			}
			if err := emit(e.kbuf, val); err != nil {
				return err
			}
		}
	case Debezium:
		ts := e.now()
		return debeziumRows(n, op, func(before, after int, code byte) error {
			e.vbuf = e.debezium(e.vbuf[:0], cols, before, after, code, ts)
			var key []byte
			if e.key != nil {
				e.kbuf = e.jsonKey(e.kbuf[:0], cols, envelopeKeyRow(before, after))
				key = e.kbuf
			}
			return emit(key, e.vbuf)
		})
	}
	return nil
}

// debeziumRows calls fn with each Debezium envelope of n changes (op
// gives each row's op): an insert has only after, a delete only before,
// an update_before followed by its update_after is one "u" envelope with
// both (-1 where a side is absent).
func debeziumRows(n int, op func(int) stream.Op, fn func(before, after int, code byte) error) error {
	for i := 0; i < n; i++ {
		before, after, code := -1, -1, byte('c')
		switch op(i) {
		case stream.Insert:
			after = i
		case stream.Delete:
			before, code = i, 'd'
		case stream.UpdateBefore:
			if i+1 < n && op(i+1) == stream.UpdateAfter {
				before, after, code = i, i+1, 'u'
				i++
			} else {
				before, code = i, 'd'
			}
		case stream.UpdateAfter:
			after, code = i, 'u'
		}
		if err := fn(before, after, code); err != nil {
			return err
		}
	}
	return nil
}

// envelopeKeyRow is the row whose key an envelope carries: after's, or
// before's for a delete.
func envelopeKeyRow(before, after int) int {
	if after < 0 {
		return before
	}
	return after
}

// jsonRow appends row i as a JSON object of every column.
func (e *encoder) jsonRow(dst []byte, cols []arrow.Array, i int) []byte {
	dst = append(dst, '{')
	for c, jc := range e.cols {
		if c > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, jc.name...)
		if cols[c].IsNull(i) {
			dst = append(dst, "null"...)
		} else {
			dst = jc.json(dst, cols[c], i)
		}
	}
	return append(dst, '}')
}

// jsonKey appends the key columns of row i as a JSON object.
func (e *encoder) jsonKey(dst []byte, cols []arrow.Array, i int) []byte {
	dst = append(dst, '{')
	for n, c := range e.key {
		if n > 0 {
			dst = append(dst, ',')
		}
		jc := e.cols[c]
		dst = append(dst, jc.name...)
		if cols[c].IsNull(i) {
			dst = append(dst, "null"...)
		} else {
			dst = jc.json(dst, cols[c], i)
		}
	}
	return append(dst, '}')
}

// debezium appends a Debezium envelope; before/after are row numbers or -1.
func (e *encoder) debezium(dst []byte, cols []arrow.Array, before, after int, op byte, ts int64) []byte {
	dst = append(dst, `{"before":`...)
	if before < 0 {
		dst = append(dst, "null"...)
	} else {
		dst = e.jsonRow(dst, cols, before)
	}
	dst = append(dst, `,"after":`...)
	if after < 0 {
		dst = append(dst, "null"...)
	} else {
		dst = e.jsonRow(dst, cols, after)
	}
	dst = append(dst, `,"op":"`...)
	dst = append(dst, op)
	dst = append(dst, `","ts_ms":`...)
	dst = strconv.AppendInt(dst, ts, 10)
	return append(dst, '}')
}

// csvRow appends row i as a CSV record (no newline): NULL is an empty
// field, an empty string is "", and fields with a comma, quote, CR or LF
// are quoted with doubled quotes (what the file source reads back).
func (e *encoder) csvRow(dst []byte, cols []arrow.Array, i int) []byte {
	for c, jc := range e.cols {
		if c > 0 {
			dst = append(dst, ',')
		}
		if cols[c].IsNull(i) {
			continue
		}
		start := len(dst)
		dst = jc.text(dst, cols[c], i)
		if needsQuote(dst[start:]) {
			e.bbuf = append(e.bbuf[:0], dst[start:]...)
			dst = append(dst[:start], '"')
			for _, b := range e.bbuf {
				if b == '"' {
					dst = append(dst, '"')
				}
				dst = append(dst, b)
			}
			dst = append(dst, '"')
		}
	}
	return dst
}

func needsQuote(f []byte) bool {
	if len(f) == 0 {
		return true
	}
	for _, b := range f {
		if b == ',' || b == '"' || b == '\n' || b == '\r' {
			return true
		}
	}
	return false
}

// CSVHeader returns the header line of cols (no newline).
func CSVHeader(cols []types.Column) []byte {
	var dst []byte
	for i, c := range cols {
		if i > 0 {
			dst = append(dst, ',')
		}
		if needsQuote([]byte(c.Name)) {
			dst = append(dst, '"')
			for _, b := range []byte(c.Name) {
				if b == '"' {
					dst = append(dst, '"')
				}
				dst = append(dst, b)
			}
			dst = append(dst, '"')
		} else {
			dst = append(dst, c.Name...)
		}
	}
	return dst
}
