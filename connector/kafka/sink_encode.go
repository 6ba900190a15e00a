package kafka

import (
	"context"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/connector/internal/avroconv"
	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/connector/sink/encode"
	"github.com/streamsql/streamsql/exec/stream"
)

// recordEncoder turns a batch of output rows into Kafka records, in row
// order. emit's key and value are valid only during the call (the encoder
// reuses its buffers); a nil key is no key, a nil value a tombstone.
// An encoder is owned by one writer (one goroutine).
type recordEncoder interface {
	Encode(ctx context.Context, rec arrow.RecordBatch, ops []stream.Op, emit func(key, value []byte)) error
}

// newRecordEncoder validates spec's FORMAT ... ENCODE ... with the shared
// sink encoders (connector/sink/encode: every sink writes values the same
// way, and the Kafka source reads them back to the same values) and
// returns a factory of per-writer encoders. Errors are pgerr errors naming
// the format or option.
func newRecordEncoder(spec sink.Spec) (func() recordEncoder, error) {
	f, err := encode.Parse(spec, "kafka", encode.JSON, encode.Avro)
	if err != nil {
		return nil, err
	}
	if f.Encoding == encode.Avro {
		return newAvroEncoder(spec, f)
	}
	if _, err := encode.New(f, spec.Cols, spec.Key); err != nil {
		return nil, err
	}
	return func() recordEncoder {
		e, _ := encode.New(f, spec.Cols, spec.Key) // checked above
		return &sharedEncoder{enc: e}
	}, nil
}

// sharedEncoder adapts an encode.Encoder to recordEncoder (whose emit
// cannot fail).
type sharedEncoder struct {
	enc  encode.Encoder
	emit func(key, value []byte)
	wrap encode.EmitFunc
}

func (s *sharedEncoder) Encode(_ context.Context, rec arrow.RecordBatch, ops []stream.Op, emit func(key, value []byte)) error {
	if s.wrap == nil {
		s.wrap = func(key, value []byte) error { s.emit(key, value); return nil }
	}
	s.emit = emit
	return s.enc.Encode(rec, ops, s.wrap)
}

// newAvroEncoder is newRecordEncoder for ENCODE AVRO: the writers share
// one registry client (ids cached); each registers the schemas (cached)
// before its first record, so CREATE SINK and catalog loading do not need
// the registry, and a registry that does not answer fails the write,
// which the job retries.
func newAvroEncoder(spec sink.Spec, f encode.Format) (func() recordEncoder, error) {
	reg, err := avroconv.NewRegistry(f.Registry)
	if err != nil {
		return nil, err
	}
	topic := strings.TrimSpace(spec.Options["topic"])
	if _, err := encode.NewAvro(f, reg, spec.Name, topic, spec.Cols, spec.Key); err != nil {
		return nil, err
	}
	return func() recordEncoder {
		e, _ := encode.NewAvro(f, reg, spec.Name, topic, spec.Cols, spec.Key) // checked above
		return &avroRecordEncoder{enc: e}
	}, nil
}

// avroRecordEncoder adapts an encode.AvroEncoder to recordEncoder.
type avroRecordEncoder struct {
	enc  *encode.AvroEncoder
	emit func(key, value []byte)
	wrap encode.EmitFunc
}

func (a *avroRecordEncoder) Encode(ctx context.Context, rec arrow.RecordBatch, ops []stream.Op, emit func(key, value []byte)) error {
	if err := a.enc.Prepare(ctx); err != nil {
		return err
	}
	if a.wrap == nil {
		a.wrap = func(key, value []byte) error { a.emit(key, value); return nil }
	}
	a.emit = emit
	return a.enc.Encode(rec, ops, a.wrap)
}
