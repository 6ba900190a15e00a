package kafka

// PLACEHOLDER ENCODER. This file is a stand-in for the shared sink encoders
// (JSON plain/upsert/debezium) that the `sinks` branch builds; the
// coordinator replaces newRecordEncoder's body (and deletes the minimal
// encoder below) with the shared one when the branches merge. The Kafka
// sink depends only on the recordEncoder interface.

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// recordEncoder turns a batch of output rows into Kafka records, in row
// order. emit's key and value are valid only during the call (the encoder
// reuses its buffers); a nil key is no key, a nil value a tombstone.
// An encoder is owned by one writer (one goroutine).
type recordEncoder interface {
	Encode(rec arrow.RecordBatch, ops []stream.Op, emit func(key, value []byte)) error
}

// newRecordEncoder returns the encoder for spec's FORMAT/ENCODE. Errors
// are pgerr errors naming the format.
func newRecordEncoder(spec sink.Spec) (func() recordEncoder, error) {
	switch spec.Encode {
	case "", "JSON":
	default:
		return nil, pgerr.New(pgerr.FeatureNotSupported, "the kafka sink does not support ENCODE %s", spec.Encode).
			WithHint("Use ENCODE JSON.")
	}
	switch spec.Format {
	case "", "PLAIN", "JSON":
		return func() recordEncoder { return &jsonEncoder{cols: spec.Cols} }, nil
	case "UPSERT":
		if len(spec.Key) == 0 {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "FORMAT UPSERT needs a key: give primary_key = 'col[,col...]'")
		}
		return func() recordEncoder { return &jsonEncoder{cols: spec.Cols, key: spec.Key, upsert: true} }, nil
	}
	return nil, pgerr.New(pgerr.FeatureNotSupported, "the kafka sink does not support FORMAT %s yet", spec.Format).
		WithHint("Use FORMAT JSON or FORMAT UPSERT ENCODE JSON.")
}

// jsonEncoder is the minimal JSON encoder: PLAIN writes each added row as
// a JSON object (retractions are dropped, as force_append_only asks);
// UPSERT writes key = the key columns as a JSON object, value = the row,
// and a tombstone for a delete (and for an update's old row when the
// update changed the key).
type jsonEncoder struct {
	cols   []types.Column
	key    []int
	upsert bool
	kbuf   []byte
	kbuf2  []byte
	vbuf   []byte
}

func (e *jsonEncoder) Encode(rec arrow.RecordBatch, ops []stream.Op, emit func(key, value []byte)) error {
	n := int(rec.NumRows())
	for i := 0; i < n; i++ {
		op := stream.Insert
		if ops != nil {
			op = ops[i]
		}
		if !e.upsert {
			if op.Sign() > 0 {
				e.vbuf = appendRow(e.vbuf[:0], rec, i, e.cols, nil)
				emit(nil, e.vbuf)
			}
			continue
		}
		e.kbuf = appendRow(e.kbuf[:0], rec, i, e.cols, e.key)
		switch op {
		case stream.Insert, stream.UpdateAfter:
			e.vbuf = appendRow(e.vbuf[:0], rec, i, e.cols, nil)
			emit(e.kbuf, e.vbuf)
		case stream.Delete:
			emit(e.kbuf, nil)
		case stream.UpdateBefore:
			// The UpdateAfter that follows overwrites the key unless the
			// update moved the row to another key.
			if i+1 < n && ops[i+1] == stream.UpdateAfter {
				e.kbuf2 = appendRow(e.kbuf2[:0], rec, i+1, e.cols, e.key)
				if string(e.kbuf2) == string(e.kbuf) {
					continue
				}
			}
			emit(e.kbuf, nil)
		}
	}
	return nil
}

// appendRow appends row i as a JSON object of the columns idx (all when
// nil).
func appendRow(dst []byte, rec arrow.RecordBatch, i int, cols []types.Column, idx []int) []byte {
	dst = append(dst, '{')
	n := len(cols)
	if idx != nil {
		n = len(idx)
	}
	for j := 0; j < n; j++ {
		c := j
		if idx != nil {
			c = idx[j]
		}
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, cols[c].Name)
		dst = append(dst, ':')
		dst = appendJSONValue(dst, rec.Column(c), i, cols[c].Type)
	}
	return append(dst, '}')
}

func appendJSONValue(dst []byte, a arrow.Array, i int, t types.T) []byte {
	if a.IsNull(i) {
		return append(dst, "null"...)
	}
	switch a := a.(type) {
	case *array.Int64:
		return strconv.AppendInt(dst, a.Value(i), 10)
	case *array.Int32:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10)
	case *array.Int16:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10)
	case *array.Float64:
		return appendJSONFloat(dst, a.Value(i), 64)
	case *array.Float32:
		return appendJSONFloat(dst, float64(a.Value(i)), 32)
	case *array.Boolean:
		return strconv.AppendBool(dst, a.Value(i))
	case *array.String:
		switch t.Kind {
		case types.Numeric:
			if s := a.Value(i); s != "NaN" && s != "Infinity" && s != "-Infinity" {
				return append(dst, s...)
			}
		case types.JSON, types.JSONB:
			return append(dst, a.Value(i)...)
		}
		return appendJSONString(dst, a.Value(i))
	}
	return appendJSONString(dst, string(types.AppendText(nil, types.ValueAt(a, i, t), t, nil)))
}

func appendJSONFloat(dst []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return appendJSONString(dst, strconv.FormatFloat(f, 'g', -1, bits))
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}

const hexDigits = "0123456789abcdef"

func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\ufffd`...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
