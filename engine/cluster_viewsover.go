package engine

import (
	"slices"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/storage/checkpoint"
)

// Views over views and sinks FROM a view on a cluster
// (docs/contributing/cluster.md, "Views over views and sinks FROM a
// view"). The upstream view's job, its rows and its change feed, runs on
// the coordinator, in the same runtime as the downstream job's leaves;
// the downstream job's keyed instances run on the nodes as any view's.
// A cluster checkpoint holds both at one epoch, so the downstream's
// position in the upstream's feed is the checkpoint's epoch: the
// coordinator restarts views connected by reads together, from one
// checkpoint, with no epoch between their starts (RestartClusterViews).

// clusterViewSpec plans materialized view oid from the catalog, as its
// job runs it (startView), on a cluster node: a worker has no job of it,
// and a view over it must be planned there as on the coordinator. ok
// false when not in a cluster or oid is no materialized view that plans.
func (e *Engine) clusterViewSpec(oid uint32) (dataflow.JobSpec, bool) {
	if e.cfg.Cluster == nil {
		return dataflow.JobSpec{}, false
	}
	rel := e.cat.Relation(oid)
	if rel == nil || rel.Kind != catalog.KindMatView {
		return dataflow.JobSpec{}, false
	}
	q, err := e.planView(rel)
	if err != nil {
		return dataflow.JobSpec{}, false
	}
	return dataflow.JobSpec{ID: oid, Name: rel.Name, Plan: q.Root, Key: q.Key, Cols: q.Columns, AppendOnly: q.AppendOnly}, true
}

// ClusterViewReads lists the materialized views that view (or sink) oid
// reads, in OID order, without duplicates.
func (e *Engine) ClusterViewReads(oid uint32) ([]uint32, error) {
	plan, err := e.ClusterViewPlan(oid)
	if err != nil {
		return nil, err
	}
	var out []uint32
	for _, sc := range dataflow.PlanScans(plan) {
		if sc.Kind == stream.ScanView && !slices.Contains(out, sc.Rel) {
			out = append(out, sc.Rel)
		}
	}
	slices.Sort(out)
	return out, nil
}

// ClusterRestart is one job of a group RestartClusterViews restarts:
// From is its checkpoint (nil: from its inputs).
type ClusterRestart struct {
	OID  uint32
	From *checkpoint.Checkpoint
}

// RestartClusterView stops view oid's job and starts it again
// (docs/contributing/cluster.md, "Restart after a node's loss"): from cp
// when it is not nil, else from its inputs. The runtime's Placement must
// already place its instances with the new assignment. It reports the
// checkpoint epoch the view resumed from (0: it was rebuilt from its
// inputs).
func (e *Engine) RestartClusterView(oid uint32, cp *checkpoint.Checkpoint) (uint64, error) {
	epochs, errs := e.RestartClusterViews([]ClusterRestart{{OID: oid, From: cp}})
	return epochs[0], errs[0]
}

// RestartClusterViews restarts jobs as RestartClusterView does, as one
// group: every epoch is held (dataflow.Runtime.HoldEpochs) from the first
// stop to the last start, the jobs are stopped in reverse order and
// started in order (upstream views first: the caller orders them), so
// that a view resumed over a view resumed from the same checkpoint takes
// every change after it. It reports, per job, the epoch it resumed from
// (0: from its inputs) and its start's error.
func (e *Engine) RestartClusterViews(jobs []ClusterRestart) ([]uint64, []error) {
	e.resumeMu.Lock()
	defer e.resumeMu.Unlock()
	held := time.Now()
	release := e.flow.HoldEpochs()
	defer func() {
		release()
		if len(jobs) > 1 {
			e.cfg.Logf("cluster: %d jobs restarted together, epochs held for %s", len(jobs), time.Since(held).Round(time.Millisecond))
		}
	}()
	epochs, errs := make([]uint64, len(jobs)), make([]error, len(jobs))
	rels := make([]*catalog.Relation, len(jobs))
	for i, jr := range jobs {
		if rels[i] = e.cat.Relation(jr.OID); !clusterJob(rels[i]) {
			errs[i] = pgerr.New(pgerr.UndefinedTable, "cluster: view %d to restart is not in the catalog", jr.OID)
		}
	}
	for i := len(jobs) - 1; i >= 0; i-- { // downstream first: an upstream's stop is no failure of theirs
		if errs[i] == nil {
			e.flow.StopJob(jobs[i].OID)
		}
	}
	for i, jr := range jobs {
		if errs[i] != nil {
			continue
		}
		rel := rels[i]
		if _, err := e.flow.ParkFrom(jr.OID, jr.From); err != nil {
			e.cfg.Logf("materialized view %s: %v: restarted from its inputs", rel.Name, err)
		}
		e.viewErrs.Delete(jr.OID)
		start := e.startView
		if rel.Kind == catalog.KindSink {
			start = e.startSink // its writer recovers to cp's epoch (sinks.go)
		}
		if err := start(rel); err != nil {
			e.viewErrs.Store(jr.OID, err)
			errs[i] = err
			continue
		}
		e.frozen.Delete(jr.OID)
		if j := e.flow.Job(jr.OID); j != nil {
			epochs[i] = j.Recovery().Epoch
		}
	}
	return epochs, errs
}
