package dataflow

import (
	"encoding/json"
	"fmt"

	"github.com/streamsql/streamsql/storage/checkpoint"
)

// The recovery side of checkpoints: installing the checkpoint jobs resume
// from, parking the state of jobs that cannot start yet, and ending the
// recovery (checkpoint.go has the taking side).

// Recover installs the checkpoint that jobs started before EndRecovery
// resume from, for a runtime made with Config.RecoveryPending (the engine
// reads the checkpoint after New, in the background). A checkpoint whose
// runtime record is bad is not used (an error; jobs are rebuilt). No job
// may have started before it.
func (rt *Runtime) Recover(cp *checkpoint.Checkpoint) error {
	if rt.ck == nil {
		return nil
	}
	if err := rt.ck.setRecovered(cp); err != nil {
		return err
	}
	if cp != nil {
		rt.mu.Lock()
		rt.epoch = max(rt.epoch, cp.Manifest.Epoch) // later epochs come after it
		rt.mu.Unlock()
	}
	return nil
}

// parkedJob is a job's record and state in the recovered checkpoint,
// kept after EndRecovery.
type parkedJob struct {
	meta jobMeta
	rec  *checkpoint.Checkpoint // only this job's operators
}

// Park keeps the recovered checkpoint's record and state of job id, whose
// job could not start (its source cannot be opened now), after
// EndRecovery: a later StartJob of it (ALTER MATERIALIZED VIEW ... RESUME,
// the engine's retry) resumes from them instead of rebuilding, when its
// inputs still have the checkpoint's positions and it reads no view (the
// views it reads have moved on since). It reports whether the checkpoint
// has the job. Call it before EndRecovery.
func (rt *Runtime) Park(id uint32) bool {
	if rt.ck == nil {
		return false
	}
	c := rt.ck
	c.mu.Lock()
	defer c.mu.Unlock()
	meta := c.resume[id]
	if c.rec == nil || meta == nil {
		return false
	}
	if c.parked == nil {
		c.parked = map[uint32]*parkedJob{}
	}
	c.parked[id] = &parkedJob{meta: *meta, rec: c.rec.Subset(fmt.Sprintf("%d/", id))}
	return true
}

// ParkFrom keeps job id's record and state in cp, a checkpoint read
// after the recovery (a cluster's committed checkpoint,
// docs/contributing/cluster.md "Restart after a node's loss"), as Park
// keeps the recovered one's: the next StartJob of id resumes from it.
// It reports whether cp has the job; without it the job starts from its
// inputs.
func (rt *Runtime) ParkFrom(id uint32, cp *checkpoint.Checkpoint) (bool, error) {
	if rt.ck == nil || cp == nil {
		return false, nil
	}
	var meta ckptMeta
	if err := json.Unmarshal(cp.Manifest.Meta, &meta); err != nil {
		return false, fmt.Errorf("dataflow: checkpoint %d: bad runtime record: %w", cp.Manifest.Epoch, err)
	}
	c := rt.ck
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.parked, id)
	for i := range meta.Jobs {
		if meta.Jobs[i].ID != id {
			continue
		}
		if c.parked == nil {
			c.parked = map[uint32]*parkedJob{}
		}
		c.parked[id] = &parkedJob{meta: meta.Jobs[i], rec: cp.Subset(fmt.Sprintf("%d/", id))}
		return true, nil
	}
	return false, nil
}

// unpark forgets job id's parked state (it started).
func (c *ckptState) unpark(id uint32) {
	c.mu.Lock()
	delete(c.parked, id)
	c.mu.Unlock()
}

// RecoveredEpoch is the epoch of the checkpoint jobs resume from (0: none).
func (rt *Runtime) RecoveredEpoch() uint64 {
	if rt.ck == nil || rt.ck.rec == nil {
		return 0
	}
	return rt.ck.rec.Manifest.Epoch
}

// recovering reports whether jobs may still resume from the recovered
// checkpoint: until EndRecovery the ticker injects no barrier, so that
// every resumed job, and the views it reads, start at the checkpoint's
// epoch (a view that published a later epoch before its reader resumed
// would leave a gap).
func (rt *Runtime) recovering() bool {
	if rt.pending.Load() {
		return true
	}
	if rt.ck == nil {
		return false
	}
	rt.ck.mu.Lock()
	defer rt.ck.mu.Unlock()
	return rt.ck.rec != nil
}

// EndRecovery forgets the recovered checkpoint: jobs started later (a view
// rebuilt after ALTER TABLE) start from their inputs. The engine calls it
// once the views of the catalog are started.
func (rt *Runtime) EndRecovery() {
	defer rt.progressed() // Checkpoint waits for it
	defer rt.pending.Store(false)
	if rt.cl != nil {
		rt.mu.Lock()
		rt.endReplayTargets()
		rt.mu.Unlock()
	}
	if rt.ck == nil {
		return
	}
	rt.ck.mu.Lock()
	rt.ck.rec, rt.ck.resume = nil, nil
	rt.ck.mu.Unlock()
}
