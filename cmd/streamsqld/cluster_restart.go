package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/streamsql/streamsql/cluster/dist"
	"github.com/streamsql/streamsql/cluster/failpoint"
	"github.com/streamsql/streamsql/engine"
)

// Restart of views after a node's loss or arrival (docs/contributing/
// cluster.md, "Restart after a node's loss"): the coordinator watches
// its views and the membership and restarts, from the committed cluster
// checkpoint, every view whose assignment no longer names exactly the
// live nodes, or whose job failed and stayed failed for a lease TTL (a
// transient failure with the same nodes).

// superviseEvery is how often the coordinator checks its views.
const superviseEvery = 200 * time.Millisecond

// superviseViews runs on every node until ctx ends; it acts only while
// the node is the coordinator.
func superviseViews(ctx context.Context, r *dist.Runner, eng *engine.Engine, ttl time.Duration, logf func(string, ...any)) {
	failedSince := map[uint32]time.Time{}
	// refused are the sinks a restart did not restart (their checkpoint,
	// or that of a view they read, is damaged: errSinkDamaged): not tried
	// again on their own (the same checkpoint gives the same answer, and
	// a sink over a view would restart the view with it every round);
	// a restart of views connected to one tries it again.
	refused := map[uint32]bool{}
	t := time.NewTicker(superviseEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !r.IsCoordinator() {
			if r.Orphaned() {
				// cut off from etcd: no other node can have taken the
				// role yet; its views go on until etcd answers again
				continue
			}
			// A coordinator that lost the role (a zombie): another node
			// runs the jobs now. A worker has none of them here.
			if stopped := eng.StopClusterJobs(r.Jobs()); len(stopped) > 0 {
				logf("cluster: no longer the coordinator: stopped this node's jobs %v (their sinks no longer write)", stopped)
			}
			continue
		}
		if !ensureTables(ctx, r, eng, logf) { // cluster_tables.go
			continue
		}
		var restart []uint32
		lctx, cancel := context.WithTimeout(ctx, ttl) // a read stuck on a broken connection (after a pause) must not stop the loop
		nodes, err := r.Nodes(lctx)
		cancel()
		if err != nil {
			continue // etcd unreachable: no decision now
		}
		for _, job := range r.Jobs() {
			need, ok := r.NeedsRestart(job, nodes)
			if !ok || refused[job] {
				continue
			}
			if _, err := eng.ClusterViewPlan(job); err != nil {
				continue // not replayed here yet (a restarted cluster's coordinator)
			}
			if eng.ClusterViewFailed(job) {
				if failedSince[job].IsZero() {
					failedSince[job] = time.Now()
				}
				need = need || time.Since(failedSince[job]) >= ttl
			} else {
				delete(failedSince, job)
			}
			if need {
				restart = append(restart, job)
			}
		}
		if len(restart) == 0 {
			continue
		}
		if ok, notRestarted := restartViews(ctx, r, eng, restart, logf); ok {
			for _, job := range restart {
				delete(failedSince, job)
			}
			for _, job := range notRestarted {
				refused[job] = true
			}
		}
	}
}

// restartViews restarts jobs from the committed checkpoint with an
// assignment of the live nodes, each with the views connected to it by
// reads (viewGroup: a view over a view restarts with it, from the same
// checkpoint). The coordinator reads, for every view,
// its part of the checkpoint and decides whether the view resumes from
// it (its part has the view) before it logs any restart, so that every
// node restores the same way; a view whose job did not resume after all
// is restarted again from its inputs. When the checkpoint cannot be read
// now (the object store errs, or does not answer within the checkpoint
// timeout), nothing is restarted: it returns false and the supervision
// tries again at its next round. A view whose part of the checkpoint is
// damaged restarts from the previous one (restartPoint), and the views
// reading it from their inputs (alignGroup). It returns the sinks it
// refused to restart (errSinkDamaged).
//
// A view whose job did not resume from the checkpoint after all (the
// engine found a table's position no longer retained) makes a second
// start, within the same plan (commits still held): the plan takes a new
// assignment (Reassign) and every view of the group is logged and
// started again, that view from its inputs. The new generation names new
// exchange streams, so no instance of the first start meets one of the
// second: restarted again under the same generation, a worker's new
// instance could connect to the coordinator's stream of the first start
// just before that stopped, and end, while the coordinator's new job
// waited a minute for it (TestClusterTableWorkerKilled in CI).
func restartViews(ctx context.Context, r *dist.Runner, eng *engine.Engine, jobs []uint32, logf func(string, ...any)) (ok bool, refused []uint32) {
	group, reads, ok := viewGroup(eng, r.Jobs(), jobs)
	if !ok {
		logf("cluster: restart of views %v postponed: a view connected to them is not in this node's catalog yet", jobs)
		return false, nil
	}
	jobs = group
	start := time.Now()
	// The reads of the checkpoint (its manifest here, each view's part
	// below) are bounded: a stalled store postpones the restart.
	rctx, cancel := r.ReadContext(ctx)
	pl, err := r.BeginRestart(rctx)
	cancel()
	if err != nil {
		logf("cluster: restart of views %v postponed: %v", jobs, err)
		return false, nil
	}
	defer pl.End()
	from := "their inputs (nothing committed)"
	if pl.Restore != nil {
		from = fmt.Sprintf("checkpoint %d", pl.Restore.Epoch())
	}
	// Every view's checkpoint is read before any restart is logged, each
	// view's read bounded (a stalled store postpones the restart).
	points := map[uint32]restartFrom{}
	for _, job := range jobs {
		rctx, cancel := r.ReadContext(ctx)
		cp, from, err := restartPoint(rctx, pl, eng, job, logf)
		cancel()
		if errors.Is(err, errSinkDamaged) {
			refused = append(refused, job) // stays failed, until dropped
			continue
		}
		tables := false
		if err == nil && cp != nil && from.Epoch() <= r.TablesLoadedFrom() { // cluster_tables.go
			if plan, perr := eng.ClusterViewPlan(job); perr == nil && readsTable(plan) {
				logf("cluster: view %d restarts from its inputs: checkpoint %d: it reads a table, whose positions in the checkpoint are another coordinator's", job, from.Epoch())
				cp, from, tables = nil, nil, true
			}
		}
		if err != nil {
			logf("cluster: restart of views %v postponed: checkpoint %d cannot be read now: %v", jobs, pl.Restore.Epoch(), err)
			return false, nil
		}
		points[job] = restartFrom{cp: cp, from: from, tables: tables}
	}
	refused = append(refused, alignGroup(eng, jobs, reads, points, logf)...) // cluster_groups.go
	var run []uint32
	for _, job := range jobs {
		if _, ok := points[job]; ok {
			run = append(run, job)
		}
	}
	if jobs = run; len(jobs) == 0 {
		return true, refused
	}
	logf("cluster: restarting views %v from %s with assignment %d (%d nodes)", jobs, from, pl.Assign.Generation, len(pl.Assign.Nodes))
	again, ok := startViews(ctx, pl, eng, jobs, reads, points, logf)
	if ok && len(again) > 0 {
		if err := pl.Reassign(ctx); err != nil {
			logf("cluster: restart of views %v postponed: views %v did not resume from the checkpoint, and a new assignment failed: %v", jobs, again, err)
			return false, nil
		}
		for _, job := range again {
			points[job] = restartFrom{}
		}
		logf("cluster: views %v did not resume from the checkpoint: restarting views %v again with assignment %d, those from their inputs", again, jobs, pl.Assign.Generation)
		_, ok = startViews(ctx, pl, eng, jobs, reads, points, logf)
	}
	if !ok {
		return false, nil
	}
	logf("cluster: restart of views %v done in %s", jobs, time.Since(start).Round(time.Millisecond))
	return true, refused
}

// startViews logs and starts the restart of jobs from points with the
// plan's assignment. Per set of views connected by reads (components,
// upstream views first): every restart is logged (the workers start
// their instances), then the jobs here start together, no epoch between
// them. It returns the views whose jobs did not resume from the
// checkpoint they were given (again); ok false when a restart could not
// be logged.
func startViews(ctx context.Context, pl *dist.Plan, eng *engine.Engine, jobs []uint32, reads map[uint32][]uint32, points map[uint32]restartFrom, logf func(string, ...any)) (again []uint32, ok bool) {
	t0 := time.Now()
	for ci, comp := range components(jobs, reads) { // cluster_groups.go
		if ci > 0 {
			failpoint.Hit(failpoint.CoordinatorMidRestart, "checkpoint %d", pl.Pointer.Epoch)
		}
		group := make([]engine.ClusterRestart, len(comp))
		for i, job := range comp {
			if err := pl.LogFrom(ctx, job, points[job].from); err != nil {
				logf("cluster: restart of view %d not logged: %v", job, err)
				return nil, false
			}
			group[i] = engine.ClusterRestart{OID: job, From: points[job].cp}
		}
		epochs, errs := eng.RestartClusterViews(group)
		for i, job := range comp {
			switch {
			case errs[i] != nil:
				logf("cluster: view %d did not restart: %v", job, errs[i])
			case points[job].cp != nil && epochs[i] == 0:
				logf("cluster: view %d did not resume from checkpoint %d", job, points[job].from.Epoch())
				again = append(again, job)
			default:
				logf("cluster: view %d restarted %s in %s", job, howRestarted(epochs[i]), time.Since(t0).Round(time.Millisecond))
			}
		}
	}
	return again, true
}

// howRestarted says how a view restarted: from the checkpoint of epoch
// (0: from its inputs).
func howRestarted(epoch uint64) string {
	if epoch != 0 {
		return fmt.Sprintf("from checkpoint %d", epoch)
	}
	return "from its inputs"
}
