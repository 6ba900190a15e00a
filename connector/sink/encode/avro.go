package encode

import (
	"bytes"
	"context"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/hamba/avro/v2"
	"github.com/streamsql/streamsql/connector/internal/avroconv"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// AvroEncoder writes ENCODE AVRO records in the schema registry's wire
// format: the value (and, when the sink has a key, the key) is a record of
// the columns, its schema derived from their types (avroconv.NewWriter)
// and registered under subject "<topic>-value" ("<topic>-key"). Prepare
// registers the schemas; Encode needs them. Owned by one goroutine; the
// Registry it shares caches ids for every writer.
type AvroEncoder struct {
	f            Format
	reg          *avroconv.Registry
	topic        string
	value, key   *avroconv.Writer
	keyIdx       []int
	vid, kid     int
	ready        bool
	vbuf, kbuf   []byte
	before, prev []byte
	env          *avro.RecordSchema // DEBEZIUM: the envelope (value schema)
	now          func() int64       // DEBEZIUM's ts_ms
}

// NewAvro returns the Avro encoder of f (Encoding Avro) over cols with
// key (UPSERT needs one; PLAIN writes it as the record key when not nil),
// writing to topic with reg. Column names that are not Avro names are a
// 42P17 error.
func NewAvro(f Format, reg *avroconv.Registry, name, topic string, cols []types.Column, key []int) (*AvroEncoder, error) {
	if f.Kind == Upsert && len(key) == 0 {
		return nil, pgerr.Internal("encode: UPSERT without a key")
	}
	e := &AvroEncoder{f: f, reg: reg, topic: topic, keyIdx: key, now: func() int64 { return time.Now().UnixMilli() }}
	var err error
	if f.Kind == Debezium {
		if e.value, e.env, err = avroconv.NewDebeziumWriter(name, cols); err != nil {
			return nil, err
		}
	} else if e.value, err = avroconv.NewWriter(name, cols, nil); err != nil {
		return nil, err
	}
	if len(key) > 0 {
		if e.key, err = avroconv.NewWriter(name+"_key", cols, key); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// ValueSchema is the value schema written (the envelope for DEBEZIUM).
func (e *AvroEncoder) ValueSchema() avro.Schema {
	if e.env != nil {
		return e.env
	}
	return e.value.Schema()
}

// Prepare registers the value and key schemas (cached by the Registry):
// an 08000 error while the registry does not answer, a 42P17 one when it
// refuses the schema (incompatible with the subject's earlier versions).
func (e *AvroEncoder) Prepare(ctx context.Context) error {
	if e.ready {
		return nil
	}
	var err error
	if e.vid, err = e.reg.Register(ctx, e.topic+"-value", e.ValueSchema()); err != nil {
		return err
	}
	if e.key != nil {
		if e.kid, err = e.reg.Register(ctx, e.topic+"-key", e.key.Schema()); err != nil {
			return err
		}
	}
	e.ready = true
	return nil
}

// Encode implements Encoder (after Prepare).
func (e *AvroEncoder) Encode(rec arrow.RecordBatch, ops []stream.Op, emit EmitFunc) error {
	if !e.ready {
		return pgerr.Internal("encode: Avro encoder used before Prepare")
	}
	n := int(rec.NumRows())
	cols := rec.Columns()
	op := func(i int) stream.Op {
		if ops == nil {
			return stream.Insert
		}
		return ops[i]
	}
	keyOf := func(dst []byte, i int) []byte {
		return e.key.Append(avroconv.AppendFrame(dst[:0], e.kid), cols, i)
	}
	if e.f.Kind == Debezium {
		return e.debezium(cols, n, op, keyOf, emit)
	}
	for i := 0; i < n; i++ {
		o := op(i)
		var key []byte
		if e.key != nil {
			e.kbuf = keyOf(e.kbuf, i)
			key = e.kbuf
		}
		switch e.f.Kind {
		case Plain:
			if o == stream.Delete || o == stream.UpdateBefore {
				continue // Parse allowed retractions only with force_append_only
			}
		case Upsert:
			if o == stream.UpdateBefore {
				// Its update_after overwrites the key, unless the update
				// changed the key: then the old key is deleted.
				if i+1 < n && op(i+1) == stream.UpdateAfter {
					e.before = keyOf(e.before, i+1)
					if bytes.Equal(e.kbuf, e.before) {
						continue
					}
				}
				o = stream.Delete
			}
			if o == stream.Delete {
				if err := emit(key, nil); err != nil {
					return err
				}
				continue
			}
		}
		e.vbuf = e.value.Append(avroconv.AppendFrame(e.vbuf[:0], e.vid), cols, i)
		if err := emit(key, e.vbuf); err != nil {
			return err
		}
	}
	return nil
}

// debezium writes Debezium envelopes: an update_before/update_after pair
// is one "u" record with both rows, as ENCODE JSON does.
func (e *AvroEncoder) debezium(cols []arrow.Array, n int, op func(int) stream.Op, keyOf func([]byte, int) []byte, emit EmitFunc) error {
	ts := e.now()
	return debeziumRows(n, op, func(before, after int, code byte) error {
		e.vbuf = e.value.AppendEnvelope(avroconv.AppendFrame(e.vbuf[:0], e.vid), cols, before, after, code, ts)
		var key []byte
		if e.key != nil {
			e.kbuf = keyOf(e.kbuf, envelopeKeyRow(before, after))
			key = e.kbuf
		}
		return emit(key, e.vbuf)
	})
}
