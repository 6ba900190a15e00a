package blackhole

import (
	"context"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/connector/sink/encode"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
)

func init() { sink.Register("blackhole", Open) }

// Open validates a blackhole sink: no options but the format's
// (force_append_only, primary_key); FORMAT is optional.
func Open(spec sink.Spec) (sink.Sink, error) {
	var unknown []string
	for k := range spec.Options {
		if !encode.IsOption(k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, pgerr.New(pgerr.InvalidParameterValue, "unknown blackhole sink option \"%s\"", unknown[0]).
			WithHint("The blackhole sink takes no options besides %s.", strings.Join(encode.Options, " and "))
	}
	s := &Sink{}
	if spec.Format != "" {
		f, err := encode.Parse(spec, "blackhole", encode.JSON, encode.CSV)
		if err != nil {
			return nil, err
		}
		s.newEnc = func() (encode.Encoder, error) { return encode.New(f, spec.Cols, spec.Key) }
	}
	return s, nil
}

// New returns a blackhole sink that calls onWrite (if not nil) with every
// batch written, on the writer's goroutine (Nexmark's sink, tests).
func New(onWrite func(rec arrow.RecordBatch, ops []stream.Op)) *Sink {
	return &Sink{onWrite: onWrite}
}

// Sink is a blackhole sink; immutable.
type Sink struct {
	newEnc  func() (encode.Encoder, error) // nil: no encoding
	onWrite func(rec arrow.RecordBatch, ops []stream.Op)
}

// NewWriter implements sink.Sink.
func (s *Sink) NewWriter(ctx context.Context, writer int) (sink.Writer, error) {
	w := &Writer{onWrite: s.onWrite}
	if s.newEnc != nil {
		e, err := s.newEnc()
		if err != nil {
			return nil, err
		}
		w.enc = e
	}
	return w, nil
}

// Recover implements sink.Sink: nothing was kept.
func (s *Sink) Recover(ctx context.Context, writer int, epoch uint64, pending []byte) (sink.Writer, error) {
	w, err := s.NewWriter(ctx, writer)
	if err == nil {
		w.(*Writer).committed.Store(epoch)
	}
	return w, err
}

// Writer counts rows; Status may be called from any goroutine.
type Writer struct {
	enc       encode.Encoder
	onWrite   func(rec arrow.RecordBatch, ops []stream.Op)
	open      int64 // rows written since the last commit (writer goroutine)
	bytes     int64 // encoded bytes (writer goroutine)
	rows      atomic.Int64
	committed atomic.Uint64
	openAt    atomic.Int64 // unix µs the uncommitted rows began (0: none)
}

// Write implements sink.Writer.
func (w *Writer) Write(ctx context.Context, rec arrow.RecordBatch, ops []stream.Op) error {
	if w.onWrite != nil {
		w.onWrite(rec, ops)
	}
	if w.enc != nil {
		err := w.enc.Encode(rec, ops, func(k, v []byte) error {
			w.bytes += int64(len(k) + len(v))
			return nil
		})
		if err != nil {
			return err
		}
	}
	if w.open == 0 {
		w.openAt.Store(time.Now().UnixMicro())
	}
	w.open += rec.NumRows()
	return nil
}

// Barrier implements sink.Writer.
func (w *Writer) Barrier(ctx context.Context, epoch uint64) error { return nil }

// PreCommit implements sink.Writer: nothing to keep.
func (w *Writer) PreCommit(ctx context.Context, epoch uint64) ([]byte, error) { return nil, nil }

// Commit implements sink.Writer.
func (w *Writer) Commit(ctx context.Context, epoch uint64, pending []byte) error {
	w.rows.Add(w.open)
	w.open = 0
	w.openAt.Store(0)
	w.committed.Store(epoch)
	return nil
}

// Status implements sink.Writer.
func (w *Writer) Status() sink.Status {
	st := sink.Status{Rows: w.rows.Load(), CommittedEpoch: w.committed.Load(), Status: "running"}
	if at := w.openAt.Load(); at != 0 {
		st.OpenTxnAgeMs = (time.Now().UnixMicro() - at) / 1000
	}
	return st
}

// Close implements sink.Writer.
func (w *Writer) Close() error { return nil }
