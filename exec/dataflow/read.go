package dataflow

import (
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/pgerr"
)

// ReadViews returns the snapshots of views ids, all as of one epoch, so a
// query that reads several views sees them consistently. Views are held at
// the newest epoch any of them has published while the others catch up to
// it (a held view's job waits before publishing its next epoch, briefly).
// An id with no running job is left out of the result (the caller reports
// it when it reads that view). A view whose job failed is read as of its
// last completed epoch (its last rows), as its own reads are.
func (rt *Runtime) ReadViews(ctx context.Context, ids []uint32) (map[uint32][]arrow.RecordBatch, error) {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var jobs, failed []*Job
	for _, id := range ids {
		if j := rt.Job(id); j != nil {
			if j.Err() != nil { // it keeps its last rows; it cannot move on
				failed = append(failed, j)
				continue
			}
			jobs = append(jobs, j)
		}
	}
	if len(jobs) == 0 && len(failed) == 0 {
		return nil, nil
	}
	lastRows := func(out map[uint32][]arrow.RecordBatch) error {
		for _, j := range failed {
			_, rows, err := j.LastRows()
			if err != nil {
				return err
			}
			out[j.spec.ID] = rows
		}
		return nil
	}
	type held struct {
		epoch   uint64
		release func()
	}
	holds := make([]*held, len(jobs))
	releaseAll := func() {
		for i, h := range holds {
			if h != nil {
				h.release()
				holds[i] = nil
			}
		}
	}
	defer releaseAll()
	for {
		// A job that failed (now or meanwhile) cannot move on: it is read
		// at its last epoch and the others are held without it.
		if k := slices.IndexFunc(jobs, func(j *Job) bool { return j.Err() != nil }); k >= 0 {
			releaseAll()
			failed = append(failed, jobs[k])
			jobs = slices.Delete(jobs, k, k+1)
			holds = holds[:len(jobs)]
			continue
		}
		out := make(map[uint32][]arrow.RecordBatch, len(jobs)+len(failed))
		if len(jobs) == 0 {
			return out, lastRows(out)
		}
		var target uint64
		for i, j := range jobs {
			if j.stopped.Load() {
				return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" was dropped or restarted while it was read", j.spec.Name)
			}
			if holds[i] == nil {
				e, rel := j.view.Hold()
				holds[i] = &held{e, rel}
			}
			target = max(target, holds[i].epoch)
		}
		// Let the ones behind catch up, and stop them at target (gated
		// before their hold below target ends, so none runs past it);
		// keep the leaders held. Re-held views at other epochs (a job
		// restarted meanwhile) make another round.
		behind := false
		var gates []func()
		for i, h := range holds {
			if h.epoch < target {
				gates = append(gates, jobs[i].view.HoldAt(target))
				h.release()
				holds[i] = nil
				behind = true
			}
		}
		if !behind {
			for _, j := range jobs {
				_, rows, err := j.view.SnapshotEpoch()
				if err != nil {
					return nil, err
				}
				out[j.spec.ID] = rows
			}
			return out, lastRows(out)
		}
		err := rt.waitJobs(ctx, jobs, target)
		if err == nil {
			for i, j := range jobs {
				if holds[i] == nil {
					e, rel := j.view.Hold()
					holds[i] = &held{e, rel}
				}
			}
		}
		for _, g := range gates {
			g()
		}
		if err != nil {
			return nil, err
		}
	}
}

// WaitJobs waits until every job of jobs has completed epoch e, failed or
// stopped, or ctx ends.
func (rt *Runtime) WaitJobs(ctx context.Context, jobs []*Job, e uint64) error {
	return rt.waitJobs(ctx, jobs, e)
}

// waitJobs waits until every job has completed epoch e (or failed).
func (rt *Runtime) waitJobs(ctx context.Context, jobs []*Job, e uint64) error {
	return rt.waitProgress(ctx, func() bool {
		for _, j := range jobs {
			if j.done.Load() < e && j.Err() == nil && !j.stopped.Load() {
				return false
			}
		}
		return true
	})
}
