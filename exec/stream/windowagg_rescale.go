package stream

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Rescaling a WindowAgg (rescale.go). Its records name a GROUP BY key by
// a serial (windowagg_state.go): the key's record ('K') holds its values,
// its groups ('G': panes, or a session's times) and entries ('E': the
// windows it emitted or owes) name it by serial. A key's vnode is the hash
// of its values that route (the GROUP BY keys that are plain columns, as
// HashAgg's), so a new instance keeps the keys it owns with every record
// naming them; a key lived in one old instance, so nothing collides.
// Serials are per instance: the kept keys get new ones (1, 2, ... in the
// order of the old instances, then of their serials). The EMIT EVERY
// stash (rows owed at the next tick) is split by the same key columns of
// its rows (an output row carries its key after window_start and
// window_end), chunk by chunk in the old instances' order. The meta
// records merge as HashAgg's do: the watermarks the minimum over the
// parts (every instance saw every watermark, so they agree), the late
// rows summed into instance 0, the arrival counters their maximum.

func (w *WindowAgg) rescales() {}

// waggRecRef is a group or entry record of an old instance.
type waggRecRef struct {
	part int
	tag  byte
	ser  uint64
	rest []byte // the key after the serial (the time or window id)
	val  []byte
}

// waggKeyRef is a key record of an old instance.
type waggKeyRef struct {
	part int
	ser  uint64
	val  []byte
}

// restoreRescaled restores the keys of rs's parts this instance owns.
func (s waggState) restoreRescaled(rs *RescaledState) error {
	r := s.r
	if r.ck == nil {
		return errors.New("restore of a run started without checkpoints")
	}
	if r.keyTab == nil {
		return errors.New("a window aggregation without GROUP BY keys does not run in parallel")
	}
	var route []int // GROUP BY positions that route (none: keep everything)
	if rs.N > 1 {
		if len(rs.Keys) != 1 {
			return fmt.Errorf("%d routing key lists for one input", len(rs.Keys))
		}
		cols := make([]int, len(r.w.GroupBy))
		for i, e := range r.w.GroupBy {
			cols[i] = -1
			if c, ok := e.(*expr.ColRef); ok {
				cols[i] = c.Idx
			}
		}
		var err error
		if route, err = routingPositions(rs.Keys[0], cols); err != nil {
			return err
		}
	}
	var keys []waggKeyRef
	var recs []waggRecRef
	routeCells := make([][]cell, len(route))
	var stashes [][]byte
	merged := waggMeta{na: uint64(len(r.aggs)), nk: uint64(r.nk), wm: math.MaxInt64, outWM: math.MaxInt64}
	seen := false
	for p, part := range rs.Parts {
		if part == nil {
			continue
		}
		var meta []byte
		err := part.Range(func(k, v []byte) error {
			if len(k) == 0 {
				return errors.New("empty checkpoint key")
			}
			switch k[0] {
			case 'M':
				meta = slices.Clone(v)
				return nil
			case 'S':
				stashes = append(stashes, slices.Clone(v))
				return nil
			}
			ser, rest, err := getUvarint(k[1:])
			if err != nil {
				return fmt.Errorf("checkpoint key: %w", err)
			}
			switch k[0] {
			case 'K':
				if len(v) == 0 {
					return errors.New("empty key record")
				}
				b := v[1:]
				cells := make([]cell, len(r.keyCells))
				for j, kc := range r.keyCells {
					if cells[j], b, err = getCellState(b, kc.st, kc.t); err != nil {
						return fmt.Errorf("key record: %w", err)
					}
				}
				for i, pos := range route {
					routeCells[i] = append(routeCells[i], cells[pos])
				}
				keys = append(keys, waggKeyRef{part: p, ser: ser, val: slices.Clone(v)})
			case 'G', 'E':
				recs = append(recs, waggRecRef{part: p, tag: k[0], ser: ser, rest: slices.Clone(rest), val: slices.Clone(v)})
			default:
				return fmt.Errorf("checkpoint record %q", k[0])
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("instance %d: %w", p, err)
		}
		m, err := decodeWaggMeta(meta)
		if err != nil {
			return fmt.Errorf("instance %d: %w", p, err)
		}
		if m.na != merged.na || m.nk != merged.nk {
			return fmt.Errorf("instance %d: checkpoint of %d aggregates and %d keys, the plan has %d and %d", p, m.na, m.nk, merged.na, merged.nk)
		}
		merged.wm, merged.outWM, merged.late = min(merged.wm, m.wm), min(merged.outWM, m.outWM), merged.late+m.late
		merged.seqs = maxSeqs(merged.seqs, m.seqs)
		seen = true
	}
	if !seen {
		return errors.New("no instance's checkpoint holds a meta record")
	}
	ts := make([]types.T, len(route))
	for i, pos := range route {
		ts[i] = r.keyCells[pos].t
	}
	owned, err := ownedCells(r.ectx.Allocator(), rs, ts, routeCells, len(keys))
	if err != nil {
		return err
	}
	// New serials for the kept keys, in (old instance, serial) order.
	type pser struct {
		part int
		ser  uint64
	}
	order := make([]int, 0, len(keys))
	for i := range keys {
		if owned[i] {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(keys[a].part, keys[b].part), cmp.Compare(keys[a].ser, keys[b].ser))
	})
	var out pairs
	newSer := map[pser]uint64{}
	dropped := map[pser]bool{}
	for i := range keys {
		if !owned[i] {
			dropped[pser{keys[i].part, keys[i].ser}] = true
		}
	}
	var kb []byte
	for n, i := range order {
		ser := uint64(n + 1)
		newSer[pser{keys[i].part, keys[i].ser}] = ser
		kb = binary.AppendUvarint(append(kb[:0], 'K'), ser)
		out.add(kb, keys[i].val)
	}
	slices.SortStableFunc(recs, func(a, b waggRecRef) int { return cmp.Compare(a.part, b.part) })
	for _, rec := range recs {
		id := pser{rec.part, rec.ser}
		ser, ok := newSer[id]
		if !ok {
			if dropped[id] {
				continue
			}
			return fmt.Errorf("instance %d: checkpointed record of key %d, which has no record", rec.part, rec.ser)
		}
		kb = append(binary.AppendUvarint(append(kb[:0], rec.tag), ser), rec.rest...)
		out.add(kb, rec.val)
	}
	if rs.K != 0 {
		merged.late = 0
	}
	merged.nextSer = uint64(len(order) + 1)
	out.add([]byte{'M'}, appendWaggMeta(nil, merged))
	stash, err := s.splitStashes(rs, route, stashes)
	if err != nil {
		return err
	}
	if stash != nil {
		out.add([]byte{'S'}, stash)
	}
	return s.restore(&out)
}

// splitStashes merges the EMIT EVERY stashes of the old instances (as
// appendStash wrote them) into one of the rows this instance owns, by the
// routing key columns of the output rows (nil: no row).
func (s waggState) splitStashes(rs *RescaledState, route []int, stashes [][]byte) ([]byte, error) {
	cols := s.r.w.Cols
	type stashChunk struct {
		ops  []byte
		rows [][]types.Value
	}
	var chunks []stashChunk
	var all [][]types.Value
	for _, b := range stashes {
		nc, b, err := getUvarint(b)
		if err != nil {
			return nil, fmt.Errorf("stash: %w", err)
		}
		for ; nc > 0; nc-- {
			var n uint64
			if n, b, err = getUvarint(b); err != nil {
				return nil, fmt.Errorf("stash: %w", err)
			}
			var ch stashChunk
			for ; n > 0; n-- {
				if len(b) == 0 {
					return nil, errors.New("stash: truncated")
				}
				op := b[0]
				var row []types.Value
				if row, b, err = decodeStateRow(b[1:], cols); err != nil {
					return nil, fmt.Errorf("stash: %w", err)
				}
				ch.ops, ch.rows = append(ch.ops, op), append(ch.rows, row)
			}
			chunks = append(chunks, ch)
			all = append(all, ch.rows...)
		}
		if len(b) != 0 {
			return nil, fmt.Errorf("%d bytes after a stash", len(b))
		}
	}
	if len(all) == 0 {
		return nil, nil
	}
	keep := make([]bool, len(all))
	if rs.N <= 1 {
		for i := range keep {
			keep[i] = true
		}
	} else {
		outCols := make([]int, len(route))
		ts := make([]types.T, len(route))
		for i, pos := range route {
			outCols[i] = 2 + pos // window_start, window_end, then the keys
			ts[i] = cols[outCols[i]].Type
		}
		vn, err := rowVNodes(all, outCols, ts)
		if err != nil {
			return nil, fmt.Errorf("stash: %w", err)
		}
		for i, v := range vn {
			keep[i] = rs.Own(v)
		}
	}
	var body []byte
	nc, at := 0, 0
	for _, ch := range chunks {
		var rows []byte
		n := 0
		for i, row := range ch.rows {
			if !keep[at+i] {
				continue
			}
			var err error
			if rows, err = appendStateRow(append(rows, ch.ops[i]), row, cols); err != nil {
				return nil, fmt.Errorf("stash: %w", err)
			}
			n++
		}
		at += len(ch.rows)
		if n > 0 {
			body = append(binary.AppendUvarint(body, uint64(n)), rows...)
			nc++
		}
	}
	if nc == 0 {
		return nil, nil
	}
	return append(binary.AppendUvarint(nil, uint64(nc)), body...), nil
}
