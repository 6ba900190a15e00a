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

// ClusterCheckpointer is implemented by a ClusterNode whose coordinator
// can tell when the cluster committed a checkpoint (CHECKPOINT on a
// cluster).
type ClusterCheckpointer interface {
	// WaitCommitted waits until the cluster's committed checkpoint is of
	// epoch or later (true), or until no commit is in flight while the
	// committed one is older (false: the epoch's commit was skipped or
	// failed, whose error last says), or ctx ends.
	WaitCommitted(ctx context.Context, epoch uint64) (ok bool, last error, err error)
}

// clusterCheckpointTries bounds how many checkpoints CHECKPOINT takes on
// a cluster before it reports that none was committed.
const clusterCheckpointTries = 5

// execCheckpoint runs CHECKPOINT. On a cluster's coordinator it returns
// once the cluster's checkpoint is committed (the pointer in etcd names
// it), taking another when the commit of its epoch was skipped (one was
// in flight) or failed.
func (s *Session) execCheckpoint(ctx context.Context) (*Result, error) {
	if _, on := s.eng.flow.CheckpointStats(); !on {
		return &Result{Tag: "CHECKPOINT"}, nil // tables are durable at every commit; nothing else to do
	}
	cc, cluster := s.eng.cfg.Cluster.(ClusterCheckpointer)
	var last error
	for try := 0; ; try++ {
		epoch, err := s.eng.flow.Checkpoint(ctx)
		if err != nil || !cluster {
			return checkpointResult(err)
		}
		if try == clusterCheckpointTries {
			return nil, pgerr.New(pgerr.IOError, "checkpoint failed: the cluster committed none of %d checkpoints: %v", try, last)
		}
		ok, why, err := cc.WaitCommitted(ctx, epoch)
		if err != nil || ok {
			return checkpointResult(err)
		}
		last = why
	}
}

// checkpointResult is CHECKPOINT's answer after a checkpoint that ended
// with err.
func checkpointResult(err error) (*Result, error) {
	if err != nil {
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
