package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Log sequence numbers (LSNs) and retention, for exactly-once recovery of
// the streaming jobs that read a table (docs/contributing/checkpoints.md,
// "Tables").
//
// Every durable write of a table (one change-feed step: a write, or a
// transaction's writes to the table at its commit) gets the next LSN: the
// table's first write is 1. A Position's LSN is that of the last write
// before it. LSNs are implicit on disk: the header carries the LSN of the
// log's snapshot part and every complete write after it counts one, so
// the write path writes nothing more. They survive restarts and
// compaction. ALTER TABLE counts as a write and starts a new LSN space:
// positions before it report ErrPositionGone.
//
// Retention: the checkpoint coordinator calls Table.Retain(lsn) after it
// committed a checkpoint that cut the table at lsn. The table then keeps
// every write after the older of its last two marks (recovery may fall
// back to the previous checkpoint) replayable, as Deltas with old rows:
//
//   - in memory, as the change-feed chain from that position on (the
//     "retained root"), so that FeedFrom can start a feed there and
//     compaction can save it;
//   - on disk, in the log: compaction writes the snapshot of the current
//     state followed by the retained writes as history records carrying
//     their deltas' rows (retain.go), and Open rebuilds the chain from the
//     history and the writes after it.
//
// The marks are persisted in the mark block right after the header frame:
// two 32-byte slots, written alternately in place (u64 sequence, u64 older
// mark, u64 newer mark, u32 number of marks, u32 CRC-32C of the 28 bytes
// before); the valid slot with the higher sequence wins, so a torn slot
// write falls back to the previous marks, which retain more. The committer
// writes a slot in the group of the table's writes and fsyncs it with them.
//
// A table nobody retains keeps nothing (no marks, no root: compaction
// folds the log as before). The in-memory chain costs the deltas of the
// writes since the older mark (about two checkpoint intervals); if it
// grows past maxRetainBytes (checkpoints stalled) the root is dropped and
// compaction of the table waits until Retain has moved the marks past a
// new root; the log still holds every write, so a restart loses nothing.

// ErrPositionGone is wrapped by FeedFrom's error when the table no longer
// holds the writes after the position: it is older than what the table
// retains, from before an ALTER TABLE, or not a position of this table.
// The caller rebuilds its view from a backfill (Subscribe).
var ErrPositionGone = errors.New("storage: table position no longer retained")

// maxRetainBytes bounds the deltas a table keeps in memory for its retained
// root beyond what recovery replayed (a variable so tests can lower it).
var maxRetainBytes int64 = 256 << 20

// LSN returns the position's log sequence number: the LSN of the last
// write before it (0 before the first write). O(1), no locks.
func (p Position) LSN() uint64 {
	if p.p == nil {
		return 0
	}
	return p.p.seq
}

// LSN returns the LSN of the last write the feed delivered (for a new
// feed: of its snapshot, or FeedFrom's lsn). Safe from any goroutine.
func (f *Feed) LSN() uint64 { return f.at.Load().seq }

// LSN returns the LSN of the table's last durable write.
func (t *Table) LSN() uint64 { return t.pub.Load().pos.seq }

// retainMarks are a table's last two retained LSNs.
type retainMarks struct {
	n            int    // how many marks there are: 0, 1 or 2
	older, newer uint64 // older == newer when n == 1
	seq          uint64 // the slot sequence they were persisted with (0: never)
}

// push returns m with lsn as the newest mark.
func (m retainMarks) push(lsn uint64) retainMarks {
	if m.n == 0 {
		return retainMarks{n: 1, older: lsn, newer: lsn, seq: m.seq}
	}
	return retainMarks{n: 2, older: m.newer, newer: lsn, seq: m.seq}
}

const (
	markSlotLen  = 32
	markBlockLen = 2 * markSlotLen
)

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// encodeMarkSlot encodes m as a slot.
func encodeMarkSlot(m retainMarks) []byte {
	b := make([]byte, markSlotLen)
	binary.LittleEndian.PutUint64(b[0:], m.seq)
	binary.LittleEndian.PutUint64(b[8:], m.older)
	binary.LittleEndian.PutUint64(b[16:], m.newer)
	binary.LittleEndian.PutUint32(b[24:], uint32(m.n))
	binary.LittleEndian.PutUint32(b[28:], crc32c(b[:28]))
	return b
}

// slotOffset is where m's slot lies in a mark block.
func slotOffset(m retainMarks) int64 { return int64(m.seq%2) * markSlotLen }

// encodeMarkBlock returns a mark block holding m (both slots empty when m
// was never persisted).
func encodeMarkBlock(m retainMarks) []byte {
	b := make([]byte, markBlockLen)
	if m.seq > 0 {
		copy(b[slotOffset(m):], encodeMarkSlot(m))
	}
	return b
}

// decodeMarkBlock returns the newest valid slot's marks (none if neither
// slot is valid).
func decodeMarkBlock(b []byte) retainMarks {
	var best retainMarks
	for i := 0; i < 2; i++ {
		s := b[i*markSlotLen : (i+1)*markSlotLen]
		if binary.LittleEndian.Uint32(s[28:]) != crc32c(s[:28]) {
			continue
		}
		m := retainMarks{
			seq:   binary.LittleEndian.Uint64(s[0:]),
			older: binary.LittleEndian.Uint64(s[8:]),
			newer: binary.LittleEndian.Uint64(s[16:]),
			n:     int(binary.LittleEndian.Uint32(s[24:])),
		}
		if m.seq == 0 || m.n > 2 || m.older > m.newer || m.seq <= best.seq {
			continue
		}
		best = m
	}
	if best.n == 0 {
		best.older, best.newer = 0, 0
	}
	return best
}

// retention is a table's retention state, guarded by Table.mu.
type retention struct {
	marks retainMarks
	// base is the first LSN of the table's LSN space.
	base uint64
	// root is the retained position: the feed chain from it on is kept for
	// FeedFrom and compaction. Nil when nothing is kept in memory.
	root *feedPos
	// limit is the chain's byte counter (feedPos.bytes) past which the
	// root is dropped.
	limit int64
}

// keep returns the LSN after which writes must stay replayable, and false
// when the table retains nothing.
func (r *retention) keep() (uint64, bool) {
	if r.marks.n == 0 {
		return 0, false
	}
	return max(r.marks.older, r.base), true
}

// setRoot makes p the retained root. Holds t.mu.
func (r *retention) setRoot(p *feedPos, limitFrom int64) {
	r.root = p
	if p != nil {
		r.limit = max(p.bytes, limitFrom) + maxRetainBytes
	}
}

// advanceRoot moves the root forward to the position at lsn, not past
// head (a published position). Holds t.mu.
func (r *retention) advanceRoot(lsn uint64, head *feedPos) {
	p := r.root
	if p == nil {
		return
	}
	for p.seq < lsn && p != head {
		s := p.next.Load()
		if s == nil || s.err != nil {
			break
		}
		p = s.to
	}
	if p != r.root {
		r.setRoot(p, r.limit-maxRetainBytes)
	}
}

// checkRetained drops the root when the chain after it grew past the limit.
// Called by advance for each new position. Holds t.mu.
func (r *retention) checkRetained(pos *feedPos) {
	if r.root != nil && pos.bytes > r.limit {
		r.root = nil
	}
}

// Retain records that a committed checkpoint cut the table at lsn (a
// position's LSN, at most the table's current LSN). From then on the table
// keeps the writes after the older of its last two marks replayable
// (FeedFrom), in memory and, across compaction and restarts, in its log.
// Marks only rise: an lsn at or below the newest mark changes nothing.
// Returns once the mark is durable (with the next group commit).
func (t *Table) Retain(lsn uint64) error {
	k, err := t.retain(lsn)
	if k == nil || err != nil {
		return err
	}
	return k.wait()
}

// RetainTables is Table.Retain for several tables (OID -> LSN) at once:
// their marks share one group commit, so a checkpoint of many tables
// waits for one round of (parallel) fsyncs. Tables that no longer exist
// are skipped. The first error is returned after every mark was tried.
func (s *Store) RetainTables(lsns map[uint32]uint64) error {
	var tickets []*ticket
	var errs []error
	for oid, lsn := range lsns {
		t := s.Table(oid)
		if t == nil {
			continue
		}
		k, err := t.retain(lsn)
		if err != nil {
			errs = append(errs, err)
		}
		if k != nil {
			tickets = append(tickets, k)
		}
	}
	for _, k := range tickets {
		if err := k.wait(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// retain is Retain up to queuing the mark; the ticket to wait for is nil
// when nothing changed.
func (t *Table) retain(lsn uint64) (*ticket, error) {
	t.mu.Lock()
	if err := t.writable(); err != nil {
		t.mu.Unlock()
		return nil, err
	}
	head := t.pub.Load().pos
	if lsn > head.seq {
		t.mu.Unlock()
		return nil, fmt.Errorf("storage: retain of table %q at LSN %d, beyond its last write %d", t.def.TableName, lsn, head.seq)
	}
	r := &t.ret
	if r.marks.n > 0 && lsn <= r.marks.newer {
		t.mu.Unlock()
		return nil, nil
	}
	r.marks = r.marks.push(lsn)
	if r.root == nil {
		// Nothing kept yet: keep from now on; the writes between the older
		// mark and now are kept by the log (compaction waits).
		r.setRoot(head, 0)
	} else {
		k, _ := r.keep()
		r.advanceRoot(k, head)
	}
	return t.persistMarks()
}

// ReleaseRetained ends the table's retention: its marks are cleared
// (durably) and the retained writes are dropped from memory; compaction
// folds the log as for a table never retained, and FeedFrom accepts only
// the current position. For the coordinator when no checkpointed job reads
// the table any more.
func (t *Table) ReleaseRetained() error {
	t.mu.Lock()
	if err := t.writable(); err != nil {
		t.mu.Unlock()
		return err
	}
	r := &t.ret
	r.root = nil
	if r.marks.n == 0 {
		t.mu.Unlock()
		return nil
	}
	r.marks = retainMarks{seq: r.marks.seq}
	k, err := t.persistMarks()
	if err != nil {
		return err
	}
	return k.wait()
}

// persistMarks queues t.ret.marks for the next slot of the mark block
// through the committer and releases t.mu; the mark is durable once the
// returned ticket is. Holds t.mu on entry.
func (t *Table) persistMarks() (*ticket, error) {
	m := &t.ret.marks
	m.seq++
	req := commitReq{t: t, mark: encodeMarkSlot(*m), markAt: t.log.markAt + slotOffset(*m)}
	k, err := t.store.commit.submit(req)
	t.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return &k, nil
}

// FeedFrom returns a Feed of every durable write after lsn (a position's
// LSN), in order and continuing with live writes, as Subscribe's feed
// would have delivered them from there: the same Deltas, deletes and
// updates with their old rows. It succeeds for the table's current LSN,
// and for any LSN from the older of the last two Retain marks on (after a
// restart, the writes come from the log). Otherwise the error wraps
// ErrPositionGone. The caller must Close the feed (see Subscribe).
func (t *Table) FeedFrom(lsn uint64) (*Feed, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writable(); err != nil {
		return nil, err
	}
	head := t.pub.Load().pos
	r := &t.ret
	var at *feedPos
	switch {
	case lsn == head.seq:
		at = head
	case lsn > head.seq:
		return nil, fmt.Errorf("%w: LSN %d is beyond table %q's last write %d", ErrPositionGone, lsn, t.def.TableName, head.seq)
	case lsn < r.base:
		return nil, fmt.Errorf("%w: LSN %d is from before table %q was altered (at %d)", ErrPositionGone, lsn, t.def.TableName, r.base)
	case r.root == nil || lsn < r.root.seq:
		return nil, fmt.Errorf("%w: table %q does not retain its writes after LSN %d", ErrPositionGone, t.def.TableName, lsn)
	default:
		at = r.root
		for at.seq < lsn {
			s := at.next.Load()
			if s == nil || s.err != nil {
				return nil, fmt.Errorf("%w: table %q lost its changes after LSN %d", ErrPositionGone, t.def.TableName, at.seq)
			}
			at = s.to
		}
	}
	return t.openFeed(at), nil
}
