package storage

import (
	"bufio"
	"fmt"
	"os"
)

// Log compaction. A log grows with every write; after many deletes, updates
// or tiny inserts it holds much more than the rows it describes. Compaction
// rewrites it as a snapshot: a header (with the row id counter) and one
// recChunk record per chunk (its deleted bitmap included, so row ids stay the
// same), written to <oid>.log.tmp, fsynced, renamed over the log, and the
// directory fsynced. A crash at any point leaves either the old or the new
// log, both complete; Open removes a leftover .tmp.
//
// It runs under the table's writer lock after a barrier (no record of the
// table is in flight), so the table's writers wait for it; other tables do
// not. After a successful write, if the log passed a threshold, a background
// goroutine compares the log with the size of the current chunks and compacts
// when the log is more than twice as big (plus minCompactBytes).

// minCompactBytes is the least log growth that can trigger a compaction
// (a variable so tests can lower it).
var minCompactBytes int64 = 4 << 20

func (t *Table) resetCompactionCheck() {
	t.compactAt.Store(2*t.log.size.Load() + minCompactBytes)
}

// maybeCompact starts a background compaction check if the log has grown
// past the threshold.
func (t *Table) maybeCompact() {
	size := t.log.size.Load()
	if size < t.compactAt.Load() || !t.compacting.CompareAndSwap(false, true) {
		return
	}
	s := t.store
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		t.compacting.Store(false)
		return
	}
	s.bg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.bg.Done()
		defer t.compacting.Store(false)
		var live int64
		for _, c := range t.pub.Load().chunks {
			live += recordBytes(c.Rec)
		}
		if size > 2*live+minCompactBytes {
			// A failure or a skip leaves the old log in place; the next
			// threshold retries.
			if done, err := t.compact(); done && err == nil {
				return
			}
		}
		t.compactAt.Store(size + size/2 + minCompactBytes)
	}()
}

// Compact rewrites the table's log as a snapshot of its rows (see above).
// Safe to call at any time; writers of the table wait while it runs. It
// does nothing while a transaction holds the table.
func (t *Table) Compact() error {
	_, err := t.compact()
	return err
}

// compact is Compact, reporting whether it rewrote the log.
func (t *Table) compact() (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writable(); err != nil {
		return false, err
	}
	if t.owner != nil { // a transaction's writes are not in the log yet: later
		return false, nil
	}
	if err := t.barrier(); err != nil {
		return false, err
	}
	st := t.w // everything is durable now, so this is also t.pub
	h := headerDef{Def: t.def, Format: logFormat, LSN: st.pos.seq, Base: t.ret.base, Hist: st.pos.seq, Meta: st.meta}
	var from *feedPos // the retained writes to keep as history
	if k, ok := t.ret.keep(); ok && k < st.pos.seq {
		if r := t.ret.root; r == nil || r.seq > k {
			// The writes after k are only in the log: keep it until the
			// marks have moved past the root (lsn.go).
			return false, nil
		}
		t.ret.advanceRoot(k, st.pos)
		from = t.ret.root
		h.Hist = from.seq
	}
	path := t.log.path
	tmp := path + ".tmp"
	f, size, markAt, err := writeSnapshot(tmp, h, st, t.ret.marks, func(write func([]byte) error) error {
		return writeHistory(from, st.pos, write)
	})
	if err != nil {
		os.Remove(tmp)
		return false, err
	}
	if err := os.Rename(tmp, path); err != nil {
		f.Close()
		os.Remove(tmp)
		return false, fmt.Errorf("storage: %w", err)
	}
	old := t.log.f
	t.log.f, t.log.markAt = f, markAt
	t.log.size.Store(size)
	t.resetCompactionCheck()
	old.Close()
	return true, syncDir(t.store.dir)
}

// writeSnapshot writes and fsyncs a log holding st: the header h, the mark
// block with marks, st's chunks, then what hist writes (the retained
// writes' history; hist may be nil). It returns the open file positioned
// at its end, its size and the mark block's offset.
func writeSnapshot(path string, h headerDef, st *state, marks retainMarks, hist func(write func([]byte) error) error) (*os.File, int64, int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("storage: %w", err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	var size int64
	write := func(b []byte) error {
		n, err := bw.Write(b)
		size += int64(n)
		return err
	}
	err = write(encodeHeader(h, st.next))
	markAt := size
	if err == nil {
		err = write(encodeMarkBlock(marks))
	}
	for _, c := range st.chunks {
		if err != nil {
			break
		}
		var fr []byte
		if fr, err = encodeChunk(c); err == nil {
			err = write(fr)
		}
	}
	if err == nil && hist != nil {
		err = hist(write)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		return nil, 0, 0, ioError(err, "could not write %s: %s", path, errnoText(err))
	}
	return f, size, markAt, nil
}
