package stream

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Rescaling a HashAgg (rescale.go). Its state is per group: a group's
// record holds its key cells, and the group's vnode is the hash of the
// keys its Parallel routes by, so the records of any old instance can be
// given to the new instance that owns their vnode. Group ids are per
// instance, so the groups kept are numbered again (0, 1, ... in the order
// of the old instances, then of their old ids) and the free lists are
// dropped; the output of an epoch is ordered by group id, so only the
// order of rows within an epoch differs from the old instances' (every
// consumer keys rows by value). The meta records merge: each watermark the
// minimum over the parts (every instance sees the same watermarks, so
// they agree), the late-row count summed into instance 0, the arrival
// counters of string_agg and array_agg their maximum.

func (h *HashAgg) rescales() {}

// restoreRescaled loads the groups of rs's parts whose vnode this
// instance owns; r is new, nothing consumed yet.
func (r *aggRun) restoreRescaled(rs *RescaledState) error {
	if r.table == nil {
		return errors.New("an aggregation without keys does not run in parallel")
	}
	var route []int // the group keys that route (none when one instance owns all)
	if rs.N > 1 {
		if len(rs.Keys) != 1 {
			return fmt.Errorf("%d routing key lists for one input", len(rs.Keys))
		}
		groupCols := make([]int, len(r.h.GroupBy))
		for i, e := range r.h.GroupBy {
			groupCols[i] = -1
			if c, ok := e.(*expr.ColRef); ok {
				groupCols[i] = c.Idx
			}
		}
		var err error
		if route, err = routingPositions(rs.Keys[0], groupCols); err != nil {
			return err
		}
	}
	clean := r.clean != nil
	merged := aggMeta{sent: map[int]int64{}}
	var groups [][]byte // live group records, in part and id order
	routeCells := make([][]cell, len(route))
	for p, part := range rs.Parts {
		if part == nil {
			continue
		}
		var meta []byte
		recs := map[uint32][]byte{}
		maxID := uint32(0)
		err := part.Range(func(k, v []byte) error {
			switch {
			case string(k) == string(hashAggMetaKey):
				meta = append([]byte(nil), v...)
			case len(k) == 5 && k[0] == 'g':
				id := binary.BigEndian.Uint32(k[1:])
				recs[id] = append([]byte(nil), v...)
				maxID = max(maxID, id)
			default:
				return fmt.Errorf("unknown checkpoint key %q", k)
			}
			return nil
		})
		if err != nil {
			return err
		}
		m, err := decodeAggMeta(meta, clean, len(collectSeqs(r.aggs)))
		if err != nil {
			return fmt.Errorf("instance %d: %w", p, err)
		}
		mergeAggMeta(&merged, m, p == 0)
		for id := uint32(0); len(recs) > 0 && id <= maxID; id++ {
			b := recs[id]
			if len(b) == 0 || b[0] == 0 {
				continue // absent or a free id
			}
			keys, err := r.groupKeyCells(b)
			if err != nil {
				return fmt.Errorf("instance %d group %d: %w", p, id, err)
			}
			for i, pos := range route {
				routeCells[i] = append(routeCells[i], keys[pos])
			}
			groups = append(groups, b)
		}
	}
	owned, err := r.ownedGroups(rs, route, routeCells, len(groups))
	if err != nil {
		return err
	}
	if rs.K != 0 {
		merged.late = 0
	}
	var recs stateRecords
	for i, g := range groups {
		if owned[i] {
			recs.add(uint32(recs.n), g)
		}
	}
	merged.next = recs.n
	return r.restore(appendAggMeta(nil, merged, clean), &recs)
}

// mergeAggMeta folds part m into acc: the watermarks' minimum (a column
// missing from a part was never sent), the late rows' sum, the arrival
// counters' maximum.
func mergeAggMeta(acc *aggMeta, m aggMeta, first bool) {
	acc.started = acc.started || m.started
	acc.late += m.late
	acc.seqs = maxSeqs(acc.seqs, m.seqs)
	if first {
		for c, v := range m.sent {
			acc.sent[c] = v
		}
		acc.wm, acc.outWM = m.wm, m.outWM
		return
	}
	for c, v := range acc.sent {
		if w, ok := m.sent[c]; !ok {
			delete(acc.sent, c)
		} else {
			acc.sent[c] = min(v, w)
		}
	}
	acc.wm, acc.outWM = min(acc.wm, m.wm), min(acc.outWM, m.outWM)
}

// groupKeyCells decodes the key cells of a live group's record.
func (r *aggRun) groupKeyCells(b []byte) ([]cell, error) {
	_, b, err := getVarint(b[1:])
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, errors.New("record cut short")
	}
	b = b[1:]
	out := make([]cell, len(r.keys))
	for k, kc := range r.keys {
		if out[k], b, err = getCellState(b, kc.st, kc.t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ownedGroups reports, per group of routeCells (n groups), whether this
// instance owns its vnode.
func (r *aggRun) ownedGroups(rs *RescaledState, route []int, routeCells [][]cell, n int) ([]bool, error) {
	ts := make([]types.T, len(route))
	for i, pos := range route {
		ts[i] = r.keys[pos].t
	}
	return ownedCells(r.ectx.Allocator(), rs, ts, routeCells, n)
}
