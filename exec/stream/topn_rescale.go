package stream

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/streamsql/streamsql/types"
)

// Rescaling a TopN with PARTITION BY (rescale.go). Its records are keyed
// by partition and row, so the records of the old instances never collide:
// an instance keeps those whose row's routing columns (its partition's
// plain columns) hash to a vnode it owns and restores them as usual. The
// watermark that closed partitions is the minimum over the old instances
// (they all saw the same watermarks).

func (t *TopN) rescales() {}

// restoreRescaled restores the records of rs's parts this instance owns.
func (r *topnRun) restoreRescaled(rs *RescaledState) error {
	var keep pairs
	var rows [][]types.Value
	var recs pairs
	wm, haveWM := int64(math.MaxInt64), false
	for _, part := range rs.Parts {
		if part == nil {
			continue
		}
		err := part.Range(func(key, value []byte) error {
			if len(key) == 1 && key[0] == tnKeyMeta {
				v, k := binary.Varint(value)
				if k <= 0 {
					return fmt.Errorf("top-n: bad checkpointed watermark")
				}
				wm, haveWM = min(wm, v), true
				return nil
			}
			if rs.N <= 1 {
				keep.add(key, value)
				return nil
			}
			if len(key) == 0 || key[0] != tnKeyRow {
				return fmt.Errorf("top-n: unknown checkpoint key %q", key)
			}
			l, k := binary.Uvarint(key[1:])
			if k <= 0 || l > uint64(len(key)-1-k) {
				return fmt.Errorf("top-n: bad checkpoint key %q", key)
			}
			row, _, err := decodeIdentityRow(key[1+k+int(l):], len(r.in))
			if err != nil {
				return fmt.Errorf("top-n: %w", err)
			}
			rows = append(rows, row)
			recs.add(key, value)
			return nil
		})
		if err != nil {
			return err
		}
	}
	if len(rows) > 0 {
		if len(rs.Keys) != 1 {
			return fmt.Errorf("top-n: %d routing key lists for one input", len(rs.Keys))
		}
		ts := make([]types.T, len(rs.Keys[0]))
		for i, c := range rs.Keys[0] {
			if c >= len(r.in) {
				return fmt.Errorf("top-n: routing column %d of %d", c, len(r.in))
			}
			ts[i] = r.in[c].Type
		}
		vn, err := rowVNodes(rows, rs.Keys[0], ts)
		if err != nil {
			return fmt.Errorf("top-n: %w", err)
		}
		for i, v := range vn {
			if rs.Own(v) {
				keep.add(recs.k[i], recs.v[i])
			}
		}
	}
	if haveWM {
		keep.add([]byte{tnKeyMeta}, binary.AppendVarint(nil, wm))
	}
	return r.restore(&keep)
}
