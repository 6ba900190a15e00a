package kafka

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/connector/sink/encode"
	"github.com/streamsql/streamsql/exec/stream"
)

// recordEncoder turns a batch of output rows into Kafka records, in row
// order. emit's key and value are valid only during the call (the encoder
// reuses its buffers); a nil key is no key, a nil value a tombstone.
// An encoder is owned by one writer (one goroutine).
type recordEncoder interface {
	Encode(rec arrow.RecordBatch, ops []stream.Op, emit func(key, value []byte)) error
}

// newRecordEncoder validates spec's FORMAT ... ENCODE ... with the shared
// sink encoders (connector/sink/encode: every sink writes values the same
// way, and the Kafka source reads them back to the same values) and
// returns a factory of per-writer encoders. Errors are pgerr errors naming
// the format or option.
func newRecordEncoder(spec sink.Spec) (func() recordEncoder, error) {
	f, err := encode.Parse(spec, "kafka", encode.JSON)
	if err != nil {
		return nil, err
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

func (s *sharedEncoder) Encode(rec arrow.RecordBatch, ops []stream.Op, emit func(key, value []byte)) error {
	if s.wrap == nil {
		s.wrap = func(key, value []byte) error { s.emit(key, value); return nil }
	}
	s.emit = emit
	return s.enc.Encode(rec, ops, s.wrap)
}
