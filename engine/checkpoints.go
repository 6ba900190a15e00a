package engine

import (
	"context"
	"errors"
	"syscall"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Checkpoints of the views' state (docs/contributing/checkpoints.md): the
// runtime takes one every Config.CheckpointInterval; CHECKPOINT takes one
// now and returns once it is committed; streamsql_checkpoints shows the
// last one.

// execCheckpoint runs CHECKPOINT.
func (s *Session) execCheckpoint(ctx context.Context) (*Result, error) {
	if _, on := s.eng.flow.CheckpointStats(); !on {
		return &Result{Tag: "CHECKPOINT"}, nil // tables are durable at every commit; nothing else to do
	}
	if _, err := s.eng.flow.Checkpoint(ctx); err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		if pe := pgerr.As(err); pe != nil {
			return nil, pe
		}
		code := pgerr.IOError
		if errors.Is(err, syscall.ENOSPC) {
			code = pgerr.DiskFull
		}
		return nil, pgerr.New(code, "checkpoint failed: %v", err)
	}
	return &Result{Tag: "CHECKPOINT"}, nil
}

// checkpointStatus feeds streamsql_checkpoints.
func (e *Engine) checkpointStatus() (catalog.CheckpointStatus, bool) {
	st, on := e.flow.CheckpointStats()
	if !on {
		return catalog.CheckpointStatus{}, false
	}
	out := catalog.CheckpointStatus{Bytes: st.Bytes, ChainBytes: st.ChainBytes, Full: st.Full,
		DurationUS: st.Duration.Microseconds(), Views: int64(st.Jobs), Count: st.Count,
		Failures: st.Failures, LastError: st.LastError}
	if st.Epoch != 0 {
		out.Epoch = types.TimestampValue(dataflow.EpochTime(st.Epoch).UnixMicro())
		out.Committed = types.TimestampValue(st.Time.UnixMicro())
	}
	if r := e.recovered.Load(); r != 0 {
		out.Recovered = types.TimestampValue(dataflow.EpochTime(r).UnixMicro())
	}
	return out, true
}
