package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/dist"
	"github.com/streamsql/streamsql/cluster/objstore"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/storage/checkpoint"
)

// Which checkpoint a view restarts from (docs/contributing/cluster.md,
// "Failure cases": object missing or corrupt at restart). The committed
// pointer's checkpoint when its part of it reads whole; when it is
// damaged (objstore.ErrCorrupt: an object missing, or not the bytes the
// manifest names), the pointer's previous checkpoint, which is never
// collected while it is the previous one; from its inputs only when
// neither has the view. A sink is never restarted from an older
// checkpoint than the pointer's, nor from its inputs, once the pointer's
// is damaged: it may have written the output of the epochs in between,
// and a replay does not cut the same epochs, so it would write some of it
// again or lose some; it stays failed, loudly, until it is dropped.

// errSinkDamaged refuses a sink's restart past its damaged checkpoint.
var errSinkDamaged = errors.New("not restarted: restarting a sink from an older checkpoint or its inputs would break exactly-once output; DROP SINK and create it again")

// restartPoint picks job's checkpoint for the restart pl: cp and the
// checkpoint it is read from (nil, nil: from its inputs). An error other
// than errSinkDamaged means the checkpoint cannot be read now (the store
// errs or stalls): the restart is postponed.
func restartPoint(ctx context.Context, pl *dist.Plan, eng *engine.Engine, job uint32, logf func(string, ...any)) (*checkpoint.Checkpoint, *dist.Restore, error) {
	if pl.Restore == nil {
		return nil, nil, nil
	}
	sink := eng.ClusterJobIsSink(job)
	if sink && pl.FellBack() {
		logf("ERROR: cluster: sink %d: committed checkpoint %d is damaged: %v", job, pl.Pointer.Epoch, errSinkDamaged)
		return nil, nil, errSinkDamaged
	}
	plan, err := eng.ClusterViewPlan(job)
	if err != nil {
		return nil, nil, err
	}
	cp, err := pl.Restore.JobCheckpoint(ctx, plan, job)
	if err == nil {
		if !dataflow.CheckpointHasJob(cp, job) {
			logf("cluster: view %d restarts from its inputs: checkpoint %d does not have it", job, pl.Restore.Epoch())
			return nil, nil, nil
		}
		return cp, pl.Restore, nil
	}
	if !errors.Is(err, objstore.ErrCorrupt) {
		return nil, nil, err
	}
	damaged := fmt.Errorf("checkpoint %d is damaged: %w", pl.Restore.Epoch(), err)
	if sink {
		logf("ERROR: cluster: sink %d: %v: %v", job, damaged, errSinkDamaged)
		return nil, nil, errSinkDamaged
	}
	prev, err := pl.Previous(ctx)
	if err != nil && !errors.Is(err, objstore.ErrCorrupt) {
		return nil, nil, err
	}
	if err != nil {
		damaged = fmt.Errorf("%v; %w", damaged, err)
	}
	if prev != nil {
		cp, err = prev.JobCheckpoint(ctx, plan, job)
		if err != nil && !errors.Is(err, objstore.ErrCorrupt) {
			return nil, nil, err
		}
		if err == nil && dataflow.CheckpointHasJob(cp, job) {
			logf("cluster: view %d restores from the previous checkpoint, %d: %v", job, prev.Epoch(), damaged)
			return cp, prev, nil
		}
		if err == nil {
			err = fmt.Errorf("it does not have the view")
		}
		damaged = fmt.Errorf("%v; the previous one, %d: %w", damaged, prev.Epoch(), err)
	}
	logf("cluster: view %d restarts from its inputs: %v", job, damaged)
	return nil, nil, nil
}

// alreadyRan says whether statement st of the log failed to replay only
// because this node ran it before it restarted on its old data directory:
// it created a relation (st.OID), the replay found it existing (42P07,
// 42710), and the catalog has that OID (catalogs that replay the same
// log hand out the same OIDs). The relation's instances are placed by
// the next restart entry (the log's assignment names this node's old
// incarnation).
func alreadyRan(eng *engine.Engine, st cluster.Statement, err error) bool {
	code := pgerr.CodeOf(err)
	return st.OID != 0 && (code == pgerr.DuplicateTable || code == pgerr.DuplicateObject) && eng.ClusterHasRelation(st.OID)
}
