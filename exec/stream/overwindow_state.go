package stream

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/streamsql/streamsql/types"
)

// An OverWindow's checkpointed state (issue 5) is one pair per live row
// copy, one per EOWC partition and one for the run:
//
//	'r' seq (8 bytes, big-endian) -> appendKey(vals) appendKey(results) parts
//	'p' uvarint(group) enc        -> uvarint(done) uvarint(freed) varint(freedGroups)...
//	'm'                           -> uvarint(seq) [varint(wm) varint(outWM)]
//
// seq is the row's arrival number: a partition's rows are in arrival order
// (under EOWC in time order, then arrival), and byVals retracts the latest
// copy, so sorting restored rows by seq puts everything back in place.
// results are the results last emitted (ON UPDATE; at a barrier they are
// the current ones) or, under EOWC, those computed so far (NULL for the
// groups not done). parts is, per call group, 0 when the row was freed
// from that group's partition (EOWC) or 1, uvarint(len(enc)), enc. The
// EOWC pairs 'p' hold each partition's progress (owEOWCPart); what was
// emitted follows from it (a row done in every group was emitted).
//
// Snapshots after the first write the rows whose state changed since the
// previous one (inserted, retracted, new results emitted; under EOWC done
// or freed in a group) and the EOWC partitions that progressed or went.

func (w *OverWindow) checkpoints() {}

const (
	owKeyRow  = 'r'
	owKeyPart = 'p'
	owKeyMeta = 'm'
)

// owPartRef is an EOWC partition changed since the last snapshot.
type owPartRef struct {
	gi int
	p  *owPart
}

// ckRow records that row's checkpointed state changed.
func (r *overRun) ckRow(row *owRow) {
	if r.ck && !row.ck {
		row.ck = true
		r.ckRows = append(r.ckRows, row)
	}
}

// ckPart records that partition p of group gi changed (EOWC).
func (r *overRun) ckPart(gi int, p *owPart) {
	if r.ck && !p.ck {
		p.ck = true
		r.ckParts = append(r.ckParts, owPartRef{gi, p})
	}
}

func owRowKey(dst []byte, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, owKeyRow), seq)
}

func owPartKey(dst []byte, gi int, enc string) []byte {
	dst = binary.AppendUvarint(append(dst, owKeyPart), uint64(gi))
	return append(dst, enc...)
}

// live reports whether row is held (by a partition of some group).
func (r *overRun) live(row *owRow) bool {
	if row.dead {
		return false
	}
	for _, p := range row.parts {
		if p != nil {
			return true
		}
	}
	return false
}

// Snapshot implements Stateful; it runs on the operator's goroutine at a
// checkpoint barrier, after the epoch's output.
func (r *overRun) Snapshot(w StateWriter, full bool) error {
	var key, val []byte
	putRow := func(row *owRow) {
		val = appendKey(val[:0], row.vals, nil)
		res := row.res
		if r.eowc == nil {
			res = row.out
		}
		val = appendKey(val, res, nil)
		for _, p := range row.parts {
			if p == nil {
				val = append(val, 0)
				continue
			}
			val = binary.AppendUvarint(append(val, 1), uint64(len(p.enc)))
			val = append(val, p.enc...)
		}
		w.Put(owRowKey(key[:0], row.seq), val)
	}
	putPart := func(gi int, p *owPart) {
		val = binary.AppendUvarint(val[:0], uint64(p.eowc.done))
		val = binary.AppendUvarint(val, uint64(p.eowc.freed))
		for _, n := range p.eowc.freedGroups {
			val = binary.AppendVarint(val, n)
		}
		w.Put(owPartKey(key[:0], gi, p.enc), val)
	}
	if full || !r.ck {
		w.Reset()
		for gi, g := range r.groups {
			for _, p := range g.parts {
				if r.eowc != nil {
					putPart(gi, p)
				}
				for _, row := range p.rows {
					// A row is written with the first group that holds it.
					if first := slices.IndexFunc(row.parts, func(q *owPart) bool { return q != nil }); first == gi {
						putRow(row)
					}
				}
			}
		}
	} else {
		for _, row := range r.ckRows {
			if r.live(row) {
				putRow(row)
			} else if row.seq <= r.ckSeq {
				w.Delete(owRowKey(key[:0], row.seq))
			}
		}
		for _, x := range r.ckParts {
			if cur := r.groups[x.gi].parts[x.p.enc]; cur != nil {
				putPart(x.gi, cur)
			} else {
				w.Delete(owPartKey(key[:0], x.gi, x.p.enc))
			}
		}
	}
	for _, row := range r.ckRows {
		row.ck = false
	}
	for _, x := range r.ckParts {
		x.p.ck = false
	}
	clear(r.ckRows)
	clear(r.ckParts)
	r.ckRows, r.ckParts = r.ckRows[:0], r.ckParts[:0]
	val = binary.AppendUvarint(val[:0], r.seq)
	if x := r.eowc; x != nil {
		val = binary.AppendVarint(val, x.wm)
		val = binary.AppendVarint(val, x.outWM)
	}
	w.Put([]byte{owKeyMeta}, val)
	r.ck, r.ckSeq = true, r.seq
	return nil
}

// Restore implements Stateful: rows go back to their partitions in order,
// with their results; under EOWC the partitions' progress and the rows
// still pending come back too. After a change of parallelism it restores
// what it owns of every old instance's records (overwindow_rescale.go).
func (r *overRun) Restore(sr StateReader) error {
	if rs := rescaled(sr); rs != nil {
		if err := r.restoreRescaled(rs); err != nil {
			return fmt.Errorf("over window: rescaling: %w", err)
		}
		return nil
	}
	return r.restore(sr)
}

// restore restores one instance's records.
func (r *overRun) restore(sr StateReader) error {
	var rows []*owRow
	type progress struct {
		gi  int
		enc string
		e   owEOWCPart
	}
	var parts []progress
	err := sr.Range(func(key, value []byte) error {
		if len(key) == 0 {
			return fmt.Errorf("over window: empty checkpoint key")
		}
		switch key[0] {
		case owKeyMeta:
			seq, k := binary.Uvarint(value)
			if k <= 0 {
				return fmt.Errorf("over window: bad checkpointed sequence")
			}
			r.seq = seq
			if x := r.eowc; x != nil {
				wm, k2 := binary.Varint(value[k:])
				out, k3 := binary.Varint(value[max(k+k2, 0):])
				if k2 <= 0 || k3 <= 0 {
					return fmt.Errorf("over window: bad checkpointed watermarks")
				}
				x.wm, x.outWM = wm, out
			}
		case owKeyRow:
			if len(key) != 9 {
				return fmt.Errorf("over window: bad checkpoint key %q", key)
			}
			row, err := r.decodeRow(binary.BigEndian.Uint64(key[1:]), value)
			if err != nil {
				return err
			}
			rows = append(rows, row)
		case owKeyPart:
			gi, k := binary.Uvarint(key[1:])
			if k <= 0 || gi >= uint64(len(r.groups)) || r.eowc == nil {
				return fmt.Errorf("over window: bad checkpoint key %q", key)
			}
			var e owEOWCPart
			done, k1 := binary.Uvarint(value)
			freed, k2 := binary.Uvarint(value[max(k1, 0):])
			if k1 <= 0 || k2 <= 0 {
				return fmt.Errorf("over window: bad checkpointed partition")
			}
			e.done, e.freed = int(done), int64(freed)
			rest := value[k1+k2:]
			e.freedGroups = make([]int64, len(r.groups[gi].calls))
			for i := range e.freedGroups {
				n, k := binary.Varint(rest)
				if k <= 0 {
					return fmt.Errorf("over window: bad checkpointed partition")
				}
				e.freedGroups[i], rest = n, rest[k:]
			}
			parts = append(parts, progress{int(gi), string(key[1+k:]), e})
		default:
			return fmt.Errorf("over window: unknown checkpoint key %q", key)
		}
		return nil
	})
	if err != nil {
		return err
	}
	part := func(gi int, enc string) *owPart {
		g := r.groups[gi]
		p := g.parts[enc]
		if p == nil {
			p = &owPart{enc: enc}
			g.parts[enc] = p
		}
		return p
	}
	for _, pr := range parts {
		part(pr.gi, pr.enc).eowc = pr.e
	}
	x := r.eowc
	slices.SortFunc(rows, func(a, b *owRow) int {
		if x != nil {
			if c := cmp.Compare(x.timeOf(a), x.timeOf(b)); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.seq, b.seq)
	})
	for _, row := range rows {
		for gi, p := range row.parts {
			if p != nil {
				q := part(gi, p.enc)
				row.parts[gi] = q
				q.rows = append(q.rows, row)
			}
		}
		if x == nil {
			r.enc = appendKey(r.enc[:0], row.vals, nil)
			r.byVals[string(r.enc)] = append(r.byVals[string(r.enc)], row)
		}
	}
	if x != nil {
		// A row is pending until done in every group (then it was emitted).
		done := map[*owRow]int{}
		for gi, g := range r.groups {
			for _, p := range g.parts {
				if p.eowc.done > len(p.rows) {
					return fmt.Errorf("over window: checkpointed partition done at %d of %d rows", p.eowc.done, len(p.rows))
				}
				if p.eowc.freedGroups == nil {
					p.eowc.freedGroups = make([]int64, len(g.calls))
				}
				for _, row := range p.rows[:p.eowc.done] {
					done[row]++
				}
			}
			for _, row := range rows {
				if row.parts[gi] == nil {
					done[row]++
				}
			}
		}
		for _, row := range rows {
			if n := done[row]; n < len(r.groups) {
				x.pending[row] = n
			}
		}
	}
	r.ck, r.ckSeq = true, r.seq
	return nil
}

// decodeRow decodes a checkpointed row; its parts are placeholders with
// the partitions' encodings (nil: freed from that group).
func (r *overRun) decodeRow(seq uint64, b []byte) (*owRow, error) {
	vals, rest, err := decodeIdentityRow(b, len(r.in))
	if err != nil {
		return nil, fmt.Errorf("over window: checkpointed row: %w", err)
	}
	res, rest, err := decodeIdentityRow(rest, len(r.w.Calls))
	if err != nil {
		return nil, fmt.Errorf("over window: checkpointed results: %w", err)
	}
	row := &owRow{vals: vals, res: res, parts: make([]*owPart, len(r.groups)), seq: seq}
	if r.eowc == nil {
		row.out = slices.Clone(res)
	} else if _, ok := vals[r.eowc.e.TimeCol].(types.TimestampValue); !ok {
		return nil, fmt.Errorf("over window: checkpointed row without a time")
	}
	for gi := range row.parts {
		if len(rest) == 0 {
			return nil, fmt.Errorf("over window: checkpointed row truncated")
		}
		if rest[0] == 0 {
			rest = rest[1:]
			continue
		}
		l, k := binary.Uvarint(rest[1:])
		if k <= 0 || l > uint64(len(rest)-1-k) {
			return nil, fmt.Errorf("over window: checkpointed row truncated")
		}
		row.parts[gi] = &owPart{enc: string(rest[1+k : 1+k+int(l)])}
		rest = rest[1+k+int(l):]
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("over window: %d bytes after a checkpointed row", len(rest))
	}
	return row, nil
}
