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

// Rescaling an OverWindow (rescale.go). Its records are the live rows
// ('r', by arrival seq) and, under EOWC, each partition's progress ('p',
// by call group and partition key). The Parallel routes by plain columns
// every call partitions by, so a row's vnode is that of its values of
// those columns, and a partition's is that of the same values in its key
// (the encodeKey encoding of its PARTITION BY values, cut into its values:
// a partition may hold no row any more and still count the rows it freed).
// Everything of one partition lived in one old instance. Seqs are per
// instance: the kept rows are numbered again (1, 2, ...) in (old instance,
// seq) order, which keeps every partition's rows in arrival order, as the
// join's rows are. The meta records merge: the next seq is the count kept,
// the EOWC watermarks the minimum over the parts (every instance saw every
// watermark, so they agree).

func (w *OverWindow) rescales() {}

// owRescaled is a row record of an old instance.
type owRescaled struct {
	part int
	seq  uint64
	val  []byte
}

// restoreRescaled restores the rows and partitions of rs's parts this
// instance owns.
func (r *overRun) restoreRescaled(rs *RescaledState) error {
	var rows []owRescaled
	var vals [][]types.Value
	var parts pairs // EOWC partition records
	var partOf []int
	wm, outWM := int64(math.MaxInt64), int64(math.MaxInt64)
	metas := 0
	for p, part := range rs.Parts {
		if part == nil {
			continue
		}
		err := part.Range(func(key, value []byte) error {
			if len(key) == 0 {
				return errors.New("empty checkpoint key")
			}
			switch key[0] {
			case owKeyMeta:
				_, k := binary.Uvarint(value)
				if k <= 0 {
					return errors.New("bad checkpointed sequence")
				}
				metas++
				if r.eowc != nil {
					w, k2 := binary.Varint(value[k:])
					o, k3 := binary.Varint(value[max(k+k2, 0):])
					if k2 <= 0 || k3 <= 0 {
						return errors.New("bad checkpointed watermarks")
					}
					wm, outWM = min(wm, w), min(outWM, o)
				}
			case owKeyRow:
				if len(key) != 9 {
					return fmt.Errorf("bad checkpoint key %q", key)
				}
				row, _, err := decodeIdentityRow(value, len(r.in))
				if err != nil {
					return fmt.Errorf("checkpointed row: %w", err)
				}
				vals = append(vals, row)
				rows = append(rows, owRescaled{part: p, seq: binary.BigEndian.Uint64(key[1:]), val: slices.Clone(value)})
			case owKeyPart:
				parts.add(key, value)
				partOf = append(partOf, p)
			default:
				return fmt.Errorf("unknown checkpoint key %q", key)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("instance %d: %w", p, err)
		}
	}
	if metas == 0 {
		return errors.New("no instance's checkpoint holds a meta record")
	}
	keepRow := make([]bool, len(rows))
	keepPart := make([]bool, len(parts.k))
	if rs.N <= 1 {
		for i := range keepRow {
			keepRow[i] = true
		}
		for i := range keepPart {
			keepPart[i] = true
		}
	} else {
		if len(rs.Keys) != 1 {
			return fmt.Errorf("%d routing key lists for one input", len(rs.Keys))
		}
		ts := make([]types.T, len(rs.Keys[0]))
		for i, c := range rs.Keys[0] {
			if c < 0 || c >= len(r.in) {
				return fmt.Errorf("routing column %d of %d", c, len(r.in))
			}
			ts[i] = r.in[c].Type
		}
		if len(rows) > 0 {
			vn, err := rowVNodes(vals, rs.Keys[0], ts)
			if err != nil {
				return err
			}
			for i, v := range vn {
				keepRow[i] = rs.Own(v)
			}
		}
		for i, key := range parts.k {
			v, err := r.partitionVNode(key, rs.Keys[0], ts)
			if err != nil {
				return fmt.Errorf("instance %d: %w", partOf[i], err)
			}
			keepPart[i] = rs.Own(v)
		}
	}
	var kept []owRescaled
	for i, row := range rows {
		if keepRow[i] {
			kept = append(kept, row)
		}
	}
	slices.SortFunc(kept, func(a, b owRescaled) int {
		return cmp.Or(cmp.Compare(a.part, b.part), cmp.Compare(a.seq, b.seq))
	})
	var out pairs
	for i, row := range kept {
		out.add(owRowKey(nil, uint64(i+1)), row.val)
	}
	for i := range parts.k {
		if keepPart[i] {
			out.add(parts.k[i], parts.v[i])
		}
	}
	meta := binary.AppendUvarint(nil, uint64(len(kept)))
	if r.eowc != nil {
		meta = binary.AppendVarint(binary.AppendVarint(meta, wm), outWM)
	}
	out.add([]byte{owKeyMeta}, meta)
	return r.restore(&out)
}

// partitionVNode is the vnode of an EOWC partition record's key (group,
// partition key) by the routing columns cols (of types ts), which are
// plain columns of every group's PARTITION BY.
func (r *overRun) partitionVNode(key []byte, cols []int, ts []types.T) (uint16, error) {
	gi, k := binary.Uvarint(key[1:])
	if k <= 0 || gi >= uint64(len(r.groups)) {
		return 0, fmt.Errorf("bad checkpoint key %q", key)
	}
	g := r.groups[gi]
	vals, err := encodedKeyParts(key[1+k:], g.partT)
	if err != nil {
		return 0, fmt.Errorf("partition key: %w", err)
	}
	route := make([][]byte, len(cols))
	for i, c := range cols {
		for j, e := range g.part {
			if ref, ok := e.(*expr.ColRef); ok && ref.Idx == c {
				route[i] = vals[j]
				break
			}
		}
		if route[i] == nil {
			return 0, fmt.Errorf("routing column %d is not partitioned by in call group %d", c, gi)
		}
	}
	return encodedVNode(route, ts)
}
