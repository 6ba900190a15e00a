package stream

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/streamsql/streamsql/types"
)

// Rescaling a HashJoin (rescale.go). Its records hold each side's rows,
// so the routing columns of a row (its side's join keys that are plain
// columns) give its vnode, and equal keys, which meet in one instance,
// are kept together. A side's seqs are per instance: the rows kept are
// numbered again in (old instance, seq) order, which keeps the order of
// every key's rows since a key lived in one old instance. The meta
// records merge: next seqs from the count kept, a side indexed when any
// part was (the index chains equal rows), every watermark the minimum
// over the parts (every instance saw the same watermarks).

func (j *HashJoin) rescales() {}

// jkRescaled is one row record of an old instance.
type jkRescaled struct {
	part int
	side uint8
	seq  uint64
	val  []byte
	row  []types.Value
}

// restoreRescaled restores the rows of rs's parts this instance owns.
func (r *joinRun) restoreRescaled(rs *RescaledState) error {
	var recs []jkRescaled
	var indexed [2]bool
	marks := map[int][]int64{}
	emitted := map[int]int64{}
	var ivMark, ivSent [2]int64
	for s := range 2 {
		ivMark[s], ivSent[s] = math.MaxInt64, math.MaxInt64
	}
	first := true
	for p, part := range rs.Parts {
		if part == nil {
			continue
		}
		var meta []byte
		err := part.Range(func(k, v []byte) error {
			switch {
			case len(k) == 1 && k[0] == jkMeta:
				meta = append([]byte(nil), v...)
			case len(k) == 10 && k[0] == jkRow && k[1] < 2:
				s := k[1]
				_, w := binary.Uvarint(v)
				if w <= 0 {
					return fmt.Errorf("hash join: bad checkpointed row count")
				}
				_, w2 := binary.Varint(v[w:])
				if w2 <= 0 {
					return fmt.Errorf("hash join: bad checkpointed match count")
				}
				row, _, err := decodeIdentityRow(v[w+w2:], len(r.sides[s].cols))
				if err != nil {
					return fmt.Errorf("hash join: %w", err)
				}
				recs = append(recs, jkRescaled{part: p, side: s, seq: binary.BigEndian.Uint64(k[2:]), val: append([]byte(nil), v...), row: row})
			default:
				return fmt.Errorf("hash join: unknown checkpointed key %q", k)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if meta == nil {
			return fmt.Errorf("hash join: checkpoint without its marks")
		}
		// restoreMeta decodes into r: fold each part's values in
		if r.marks != nil {
			clear(r.marks.marks)
			clear(r.marks.emitted)
		}
		ix, _, err := r.restoreMeta(meta)
		if err != nil {
			return err
		}
		for s := range 2 {
			indexed[s] = indexed[s] || ix[s]
			if r.iv != nil {
				ivMark[s], ivSent[s] = min(ivMark[s], r.iv.mark[s]), min(ivSent[s], r.iv.sent[s])
			}
		}
		if r.marks == nil {
			first = false
			continue
		}
		if first {
			for c, ms := range r.marks.marks {
				marks[c] = slices.Clone(ms)
			}
			maps.Copy(emitted, r.marks.emitted)
		} else {
			for c, ms := range marks {
				o, ok := r.marks.marks[c]
				if !ok {
					delete(marks, c)
					continue
				}
				for i := range ms {
					ms[i] = min(ms[i], o[i])
				}
			}
			for c, e := range emitted {
				if o, ok := r.marks.emitted[c]; !ok {
					delete(emitted, c)
				} else {
					emitted[c] = min(e, o)
				}
			}
		}
		first = false
	}
	keep := make([]bool, len(recs))
	for s := range 2 {
		var rows [][]types.Value
		var at []int
		for i, rc := range recs {
			if int(rc.side) == s {
				rows, at = append(rows, rc.row), append(at, i)
			}
		}
		if rs.N <= 1 {
			for _, i := range at {
				keep[i] = true
			}
			continue
		}
		if len(rs.Keys) != 2 {
			return fmt.Errorf("hash join: %d routing key lists for two inputs", len(rs.Keys))
		}
		ts := make([]types.T, len(rs.Keys[s]))
		for i, c := range rs.Keys[s] {
			if c >= len(r.sides[s].cols) {
				return fmt.Errorf("hash join: routing column %d of %d", c, len(r.sides[s].cols))
			}
			ts[i] = r.sides[s].cols[c].Type
		}
		if len(rows) == 0 {
			continue
		}
		vn, err := rowVNodes(rows, rs.Keys[s], ts)
		if err != nil {
			return fmt.Errorf("hash join: %w", err)
		}
		for k, v := range vn {
			keep[at[k]] = rs.Own(v)
		}
	}
	var kept []jkRescaled
	for i, rc := range recs {
		if keep[i] {
			kept = append(kept, rc)
		}
	}
	slices.SortFunc(kept, func(a, b jkRescaled) int {
		return cmp.Or(cmp.Compare(a.side, b.side), cmp.Compare(a.part, b.part), cmp.Compare(a.seq, b.seq))
	})
	var out pairs
	var next [2]uint64
	key := make([]byte, 10)
	for _, rc := range kept {
		key[0], key[1] = jkRow, rc.side
		binary.BigEndian.PutUint64(key[2:], next[rc.side])
		next[rc.side]++
		out.add(key, rc.val)
	}
	// the merged meta record, as appendMeta writes it
	var b []byte
	for s := range 2 {
		b = binary.AppendUvarint(b, next[s])
		b = append(b, byte(btoiJ(indexed[s])))
	}
	if r.iv != nil {
		for s := range 2 {
			b = binary.AppendVarint(b, ivMark[s])
			b = binary.AppendVarint(b, ivSent[s])
		}
	} else {
		cols := slices.Sorted(maps.Keys(marks))
		b = binary.AppendUvarint(b, uint64(len(cols)))
		for _, c := range cols {
			b = binary.AppendVarint(b, int64(c))
			b = binary.AppendUvarint(b, uint64(len(marks[c])))
			for _, m := range marks[c] {
				b = binary.AppendVarint(b, m)
			}
			e, ok := emitted[c]
			b = append(b, byte(btoiJ(ok)))
			if ok {
				b = binary.AppendVarint(b, e)
			}
		}
	}
	out.add([]byte{jkMeta}, b)
	if r.marks != nil {
		clear(r.marks.marks)
		clear(r.marks.emitted)
	}
	return r.restore(&out)
}
