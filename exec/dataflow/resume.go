package dataflow

import (
	"github.com/streamsql/streamsql/exec/stream"
	"math"

	"github.com/streamsql/streamsql/storage/checkpoint"
)

// Resuming a job from the recovered checkpoint (docs/contributing/
// checkpoints.md, "Recovery at start"): its operators restore their state,
// its table readers read the writes after the recorded LSNs (no backfill),
// its source readers start at the recorded positions and its view inputs
// take the upstream view's changes after the checkpoint's epoch (no
// snapshot). A job resumes only when the checkpoint has it with the same
// plan, every root recorded a position, every upstream view resumed too,
// and every table still has the writes after the cut; otherwise it starts
// from its inputs as a new job does.

// resumeInputs are a resuming job's root inputs, opened before anything
// starts, in the order startTree meets the leaves.
type resumeInputs struct {
	epoch  uint64
	meta   *jobMeta
	rec    *checkpoint.Checkpoint // what it resumes from
	parked bool                   // a parked job (Runtime.Park), after the recovery
	scale  *rescalePlan           // the checkpoint has another parallelism (rescale.go)
	feeds  []Feed                 // per table root
	srcs   []sourceRun            // per source root
	wms    []rootMeta             // per root, for its watermark
	nt     int                    // tables handed out
	ns     int                    // sources handed out
	nr     int                    // roots handed out
}

// close releases inputs not handed out (a resume that was given up).
func (ri *resumeInputs) close() {
	for _, f := range ri.feeds[ri.nt:] {
		f.Close()
	}
}

// prepareResume opens a resuming job's inputs, or returns nil (the job
// starts from scratch) with the reason logged. rt.mu is held.
func (rt *Runtime) prepareResume(j *Job) *resumeInputs {
	spec := j.spec
	if rt.ck == nil {
		return nil
	}
	rt.ck.mu.Lock()
	meta, rec := rt.ck.resume[spec.ID], rt.ck.rec
	parked := false
	if meta == nil || rec == nil {
		if p := rt.ck.parked[spec.ID]; p != nil {
			meta, rec, parked = &p.meta, p.rec, true
		}
	}
	rt.ck.mu.Unlock()
	if meta == nil || rec == nil {
		return nil
	}
	why := ""
	tres, _ := rt.in.(TableResumer)
	sres, _ := rt.in.(SourceResumer)
	switch {
	case !meta.Resumable:
		why = "a source of it could not record its position"
	case !stream.Checkpointable(spec.Plan):
		why = "an operator of it does not checkpoint"
	}
	var scale *rescalePlan
	if why == "" {
		scale, why = planRescale(meta, spec.Plan)
	}
	ri := &resumeInputs{epoch: rec.Manifest.Epoch, meta: meta, rec: rec, parked: parked, scale: scale}
	var leaves []*stream.Scan
	var walk func(n stream.Node)
	walk = func(n stream.Node) {
		if s, ok := n.(*stream.Scan); ok {
			leaves = append(leaves, s)
			return
		}
		if s, ok := n.(*stream.Shared); ok && s.Idx > 0 && j.sharesPlans() {
			return // its group's first computes it (share.go)
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(spec.Plan)
	roots := 0
	opened := map[*stream.ScanShare]bool{} // shared reads (share.go): their first scan opens them
	for _, s := range leaves {
		if why != "" {
			break
		}
		if j.sharing(s) {
			if opened[s.Share] {
				continue
			}
			opened[s.Share] = true
			s = j.sharedOf(s).scan
		}
		switch s.Kind {
		case stream.ScanTable, stream.ScanSource:
			if roots >= len(meta.Roots) {
				why = "its inputs changed"
				break
			}
			if k := rt.readersOf(s); s.Kind == stream.ScanSource && (k > 1 || meta.Roots[roots].Splits > 1) {
				why = ri.openSplit(j, s, meta.Roots, roots, k, sres)
				roots += k
				continue
			}
			rm := meta.Roots[roots]
			roots++
			ri.wms = append(ri.wms, rm)
			if s.Kind == stream.ScanTable {
				if rm.Table != s.Rel {
					why = "its inputs changed"
					break
				}
				if tres == nil {
					why = "its tables cannot resume"
					break
				}
				f, err := tres.TableFeedFrom(s.Rel, rm.LSN)
				if err != nil {
					why = err.Error()
					break
				}
				ri.feeds = append(ri.feeds, f)
				continue
			}
			if rm.Source != s.Rel {
				why = "its inputs changed"
				break
			}
			if sres == nil {
				why = "its sources cannot resume"
				break
			}
			src, err := j.openScan(s, rm.Pos, 0, 1, func() (sourceRun, error) {
				return openSourceAt(sres, j.spec.ID, s.Rel, rm.Pos, j.rowError)
			})
			if err != nil {
				why = err.Error()
				break
			}
			ri.srcs = append(ri.srcs, src)
		case stream.ScanValues:
			if roots >= len(meta.Roots) || !meta.Roots[roots].Values {
				why = "its inputs changed"
				break
			}
			ri.wms = append(ri.wms, meta.Roots[roots])
			roots++
		case stream.ScanView:
			up := rt.jobs[s.Rel]
			switch {
			case up == nil || !up.resumed:
				why = "a view it reads was rebuilt"
			case parked && (up.recovery.Epoch != ri.epoch || up.first <= rt.epoch):
				// A parked job resumes over a view only when the view
				// resumed from the same checkpoint and no epoch started
				// since (HoldEpochs): it takes every change after it.
				why = "a view it reads has moved on since the checkpoint"
			}
		}
	}
	if why == "" && roots != len(meta.Roots) {
		why = "its inputs changed"
	}
	if why != "" {
		ri.close()
		rt.cfg.Logf("materialized view %s is rebuilt from its inputs instead of resuming from checkpoint %d: %s", spec.Name, ri.epoch, why)
		j.recovery.Rebuilt = why
		return nil
	}
	if scale != nil {
		rt.cfg.Logf("materialized view %s resumes from checkpoint %d with its parallelism changed from %d to %d: keyed state redistributed by vnode", spec.Name, ri.epoch, scale.from, planParallelism(spec.Plan))
	}
	return ri
}

// applyWM gives a resumed root's watermark tracker the checkpoint's
// watermark, to be sent again before the first barrier.
func (ri *resumeInputs) applyWM(w *wmTracker) {
	rm := ri.wms[ri.nr]
	ri.nr++
	if rm.HasW || len(rm.Parts) > 0 {
		wm := int64(math.MinInt64)
		if rm.HasW {
			wm = rm.WM
		}
		w.restore(wm, rm.Parts)
	}
}

// openSplit opens the k readers of split source scan s at the positions
// of the checkpoint's roots from index at, or returns why it cannot.
func (ri *resumeInputs) openSplit(j *Job, s *stream.Scan, roots []rootMeta, at, k int, sres SourceResumer) string {
	if why := splitWhy(roots, at, s, k); why != "" {
		return why
	}
	if sres == nil {
		return "its sources cannot resume"
	}
	for i := range k {
		rm := roots[at+i]
		ri.wms = append(ri.wms, rm)
		src, err := j.openSplit(s, rm.Pos, i, k)
		if err != nil {
			return err.Error()
		}
		ri.srcs = append(ri.srcs, src)
	}
	return ""
}
