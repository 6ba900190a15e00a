package dataflow

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
)

// A subscriber without a usable changelog (SUBSCRIBE TO a table, or of a
// query) that falls past its memory bound spills: every later update is
// appended to a file of its own in Config.SubscribeSpill, in order, and
// read back from it once the updates in memory are read. When the reader
// has caught up with the file, the file is removed and updates queue in
// memory again. The file is removed when the subscription closes, and the
// whole directory when a Runtime starts (files of a crashed run).
//
// Ownership: the view's goroutine appends (push, with s.mu held); the
// subscriber's goroutine reads (trySpill) without s.mu, only below the
// write offset it read under s.mu, and moves the read offset under s.mu.
// Removal happens under s.mu (caught up) or in Close.
//
// A record is: epoch (8 bytes), kind (1: changes, 2: progress), payload
// length (4 bytes), payload (encodeFrame of the changes, without cuts).

const spillHeader = 13

type spillFile struct {
	f    *os.File
	path string
	w    int64 // the end of the written records (s.mu)
	r    int64 // the start of the next record to read (s.mu)
}

// clearSpills removes the spill files of an earlier run.
func clearSpills(dir string, logf func(string, ...any)) {
	if err := os.RemoveAll(dir); err != nil {
		logf("subscription spill directory %s: %v", dir, err)
	}
}

// startSpill opens the subscription's spill file (s.mu held).
func (s *Subscription) startSpill() error {
	dir := s.rt.cfg.SubscribeSpill
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("spill directory: %w", err)
	}
	f, err := os.CreateTemp(dir, "subscribe-*.spill")
	if err != nil {
		return fmt.Errorf("spill file: %w", err)
	}
	s.spill = &spillFile{f: f, path: f.Name()}
	s.rt.cfg.Logf("materialized view %s: slow subscriber %d has %s of changes unread; later changes wait in %s", s.job.spec.Name, s.id, sizeText(s.bytes), f.Name())
	return nil
}

// spillPush appends u to the spill file (s.mu held); false ends the
// subscription (past the spill's bound, or a failed write).
func (s *Subscription) spillPush(u Update) bool {
	sp := s.spill
	kind, payload := byte(2), []byte(nil)
	if len(u.Rows) > 0 {
		kind = 1
		rec := u.Rows[0]
		if len(u.Rows) > 1 { // only a snapshot has several; it is never spilled
			return s.end(pgerr.Internal("subscription: spilling an update of %d batches", len(u.Rows)))
		}
		payload = encodeFrame(nil, &stream.Chunk{Rec: rec, Ops: u.Ops}, 0, int(rec.NumRows()), s.cols)
	}
	if sp.w-sp.r+int64(spillHeader+len(payload)) > s.rt.cfg.SubscribeSpillBytes {
		return s.end(pgerr.New(pgerr.ConfigurationLimitExceeded, "subscription ended: more than %s of changes were waiting to be read on disk (--subscribe-spill-limit)", sizeText(s.rt.cfg.SubscribeSpillBytes)).
			WithHint("Read the subscription faster, or subscribe to a materialized view, whose subscribers read on from the view's changelog."))
	}
	rec := make([]byte, spillHeader, spillHeader+len(payload))
	binary.LittleEndian.PutUint64(rec, u.Epoch)
	rec[8] = kind
	binary.LittleEndian.PutUint32(rec[9:], uint32(len(payload)))
	rec = append(rec, payload...)
	if _, err := sp.f.WriteAt(rec, sp.w); err != nil {
		s.rt.cfg.Logf("subscription spill %s: %v", sp.path, err)
		return s.end(pgerr.New(pgerr.DiskFull, "subscription ended: its unread changes could not be spilled to disk: %v", err).
			WithHint("Read the subscription faster, or free space in the data directory."))
	}
	sp.w += int64(len(rec))
	s.wake()
	return true
}

// trySpill returns the next spilled update; when none is left it removes
// the file (later updates queue in memory) and reports the error that
// ended the subscription, if any.
func (s *Subscription) trySpill(sp *spillFile) (Update, bool, error) {
	s.mu.Lock()
	if s.closed || s.spill != sp {
		err := s.err
		s.mu.Unlock()
		return Update{}, false, err
	}
	r, w := sp.r, sp.w
	if r == w {
		s.spill = nil
		err := s.err
		s.mu.Unlock()
		sp.remove()
		if err == nil {
			return s.TryNext() // pushed to memory meanwhile? (none: we held mu)
		}
		return Update{}, false, err
	}
	s.mu.Unlock()
	var h [spillHeader]byte
	if _, err := sp.f.ReadAt(h[:], r); err != nil {
		return Update{}, false, s.spillFailed(sp, err)
	}
	u := Update{Epoch: binary.LittleEndian.Uint64(h[:]), Time: EpochTime(binary.LittleEndian.Uint64(h[:]))}
	n := int64(binary.LittleEndian.Uint32(h[9:]))
	if h[8] == 1 {
		payload := make([]byte, n)
		if _, err := sp.f.ReadAt(payload, r+spillHeader); err != nil && err != io.EOF {
			return Update{}, false, s.spillFailed(sp, err)
		}
		_, c, err := decodeFrame(payload, s.cols)
		if err != nil {
			return Update{}, false, s.spillFailed(sp, err)
		}
		u.Rows, u.Ops = []arrow.RecordBatch{c.Rec}, c.Ops
	}
	s.mu.Lock()
	sp.r = r + spillHeader + n
	s.popped = u.Epoch
	s.mu.Unlock()
	return u, true, nil
}

// spillFailed ends the subscription after a failed read of its spill.
func (s *Subscription) spillFailed(sp *spillFile, err error) error {
	s.rt.cfg.Logf("subscription spill %s: %v", sp.path, err)
	e := pgerr.New(pgerr.IOError, "subscription ended: reading its spilled changes failed: %v", err)
	s.mu.Lock()
	if s.err == nil {
		s.err = e
	}
	s.mu.Unlock()
	return e
}

// remove closes and deletes the file.
func (sp *spillFile) remove() {
	sp.f.Close()
	os.Remove(sp.path)
}

// SpillDir is where an engine with data directory dataDir keeps its
// subscribers' spill files (Config.SubscribeSpill).
func SpillDir(dataDir string) string { return filepath.Join(dataDir, "tmp", "subscribe") }

// SubscribeMemory is the size of all subscribers' unread changes held in
// memory now (Config.SubscribeMemoryLimit bounds it).
func (rt *Runtime) SubscribeMemory() int64 { return rt.subMem.Load() }
