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
// it when it reads that view).
func (rt *Runtime) ReadViews(ctx context.Context, ids []uint32) (map[uint32][]arrow.RecordBatch, error) {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var jobs []*Job
	for _, id := range ids {
		if j := rt.Job(id); j != nil {
			jobs = append(jobs, j)
		}
	}
	if len(jobs) == 0 {
		return nil, nil
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
		var target uint64
		for i, j := range jobs {
			if err := j.Err(); err != nil {
				return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" failed: %v", j.spec.Name, err)
			}
			if j.stopped.Load() {
				return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" was dropped or restarted while it was read", j.spec.Name)
			}
			if holds[i] == nil {
				e, rel := j.view.Hold()
				holds[i] = &held{e, rel}
			}
			target = max(target, holds[i].epoch)
		}
		behind := false
		for i, h := range holds {
			if h.epoch < target { // let it catch up; keep the leaders held
				h.release()
				holds[i] = nil
				behind = true
			}
		}
		if !behind {
			out := make(map[uint32][]arrow.RecordBatch, len(jobs))
			for _, j := range jobs {
				_, rows, err := j.view.SnapshotEpoch()
				if err != nil {
					return nil, err
				}
				out[j.spec.ID] = rows
			}
			return out, nil
		}
		if err := rt.waitJobs(ctx, jobs, target); err != nil {
			return nil, err
		}
	}
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
