package main

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/streamsql/streamsql/cluster/dist"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/storage/checkpoint"
)

// Views over views on a cluster (docs/contributing/cluster.md, "Views
// over views and sinks FROM a view"): the coordinator restarts the views
// connected by reads as one group, from one checkpoint, their jobs
// started together (engine.RestartClusterViews).

// viewGroup is jobs with every job of known connected to one of them by
// reads (the views they read, the views and sinks reading those, and so
// on), in OID order: upstream views first, since a view is created after
// what it reads. reads is each member's upstream views among known. ok
// false when a member is not in this node's catalog yet (a coordinator
// still replaying the log): the group waits, rather than restart a view
// without the views it reads.
func viewGroup(eng *engine.Engine, known, jobs []uint32) (group []uint32, reads map[uint32][]uint32, ok bool) {
	reads = map[uint32][]uint32{}
	adj := map[uint32][]uint32{}
	for _, job := range known {
		up, err := eng.ClusterViewReads(job)
		if err != nil {
			continue // not replayed here yet: only a problem if it is a member (below)
		}
		for _, u := range up {
			if slices.Contains(known, u) {
				reads[job] = append(reads[job], u)
				adj[job] = append(adj[job], u)
				adj[u] = append(adj[u], job)
			}
		}
	}
	seen := map[uint32]bool{}
	todo := slices.Clone(jobs)
	for len(todo) > 0 {
		j := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[j] {
			continue
		}
		seen[j] = true
		group = append(group, j)
		todo = append(todo, adj[j]...)
	}
	slices.Sort(group)
	for _, j := range group {
		if _, err := eng.ClusterViewPlan(j); err != nil {
			return nil, nil, false
		}
	}
	return group, reads, true
}

// components splits jobs (in OID order) into the sets connected by
// reads, each in OID order, ordered by their first job.
func components(jobs []uint32, reads map[uint32][]uint32) [][]uint32 {
	comp := map[uint32]int{} // job -> its component's index
	var out [][]uint32
	for _, job := range jobs { // an upstream view comes before its readers
		c := -1
		for _, u := range reads[job] {
			if cu, ok := comp[u]; ok {
				if c >= 0 && cu != c { // joins two components: merge into c
					for _, j := range out[cu] {
						comp[j] = c
					}
					out[c] = append(out[c], out[cu]...)
					out[cu] = nil
				} else {
					c = cu
				}
			}
		}
		if c < 0 {
			c = len(out)
			out = append(out, nil)
		}
		comp[job] = c
		out[c] = append(out[c], job)
	}
	var res [][]uint32
	for _, c := range out {
		if len(c) > 0 {
			slices.Sort(c)
			res = append(res, c)
		}
	}
	slices.SortFunc(res, func(a, b []uint32) int { return cmp.Compare(a[0], b[0]) })
	return res
}

// restartFrom is the checkpoint a job of a group restarts from.
type restartFrom struct {
	cp   *checkpoint.Checkpoint
	from *dist.Restore // nil: from its inputs
	// tables: it restarts from its inputs because a table it reads
	// (itself or through a view) was loaded by this coordinator
	tables bool
}

func (p restartFrom) epoch() uint64 {
	if p.from == nil {
		return 0
	}
	return p.from.Epoch()
}

// alignGroup makes the members of a group that read views restart from
// the checkpoint those views restart from: a member whose upstream view
// restarts from another checkpoint (the previous one, its part damaged)
// or from its inputs restarts from its inputs too (a view rebuilds from
// the upstream's rows); for a sink that would write the upstream's rows
// again, so it is refused (errSinkDamaged, in refused) unless its
// upstream restarts from its inputs because of a reloaded table, the
// rule of a sink over a table. points is changed in place, in OID order
// (upstream first).
func alignGroup(eng *engine.Engine, group []uint32, reads map[uint32][]uint32, points map[uint32]restartFrom, logf func(string, ...any)) (refused []uint32) {
	for _, job := range group {
		p, ok := points[job]
		if !ok {
			continue
		}
		for _, u := range reads[job] {
			up, ok := points[u]
			if !ok || slices.Contains(refused, u) {
				// its upstream is not restarted: it stays failed with it
				refused = append(refused, job)
				logf("cluster: view %d not restarted: view %d it reads is not restarted", job, u)
				break
			}
			if up.from != nil && p.from != nil && up.epoch() == p.epoch() {
				continue
			}
			if p.from == nil {
				p.tables = p.tables || up.tables
				continue // from its inputs already
			}
			if eng.ClusterJobIsSink(job) && !up.tables {
				refused = append(refused, job)
				logf("ERROR: cluster: sink %d: view %d it reads restarts from %s, not from checkpoint %d: %v", job, u, describeFrom(up), p.epoch(), errSinkDamaged)
				break
			}
			logf("cluster: view %d restarts from its inputs: view %d it reads restarts from %s, not from checkpoint %d", job, u, describeFrom(up), p.epoch())
			p = restartFrom{tables: up.tables}
		}
		if slices.Contains(refused, job) {
			delete(points, job)
			continue
		}
		points[job] = p
	}
	return refused
}

// describeFrom says where a restart starts from.
func describeFrom(p restartFrom) string {
	if p.from == nil {
		return "its inputs"
	}
	return fmt.Sprintf("checkpoint %d", p.from.Epoch())
}
