package storage

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/streamsql/streamsql/types"
)

// Recovery: replay a table's log from the start, applying each record as the
// live write did (so row ids and chunk layout come out the same). The first
// frame that is cut short or fails its CRC is a torn write from a crash when
// no valid frame follows it: the file is truncated there and fsynced, and
// that frame is never replayed. When a valid frame follows, or the log ends
// before a position a checkpoint recorded, the log is damaged (damage.go). A log without a valid header is most likely a table
// whose CreateTable never returned; as it could also be a damaged header in
// front of real data, it is not deleted but renamed to <oid>.log.broken (an
// empty file is simply removed), and the table is not recovered.

// recoverTable opens and replays one log; nil, nil when it has no valid header.
func recoverTable(s *Store, oid uint32, path string) (*Table, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	t, err := replay(s, oid, f, path)
	if err != nil || t == nil {
		f.Close()
	}
	if err == nil && t == nil {
		if fi, err := os.Stat(path); err == nil && fi.Size() == 0 {
			err = os.Remove(path)
		} else {
			err = os.Rename(path, path+".broken")
		}
		if err != nil {
			return nil, fmt.Errorf("storage: %w", err)
		}
	}
	return t, err
}

// frameReader reads frames, tracking the offset of the next one.
type frameReader struct {
	r    *bufio.Reader
	off  int64 // start of the next frame
	size int64 // file size
}

// next returns the next frame's payload; ok is false at a clean end or a
// torn frame (torn reports which).
func (fr *frameReader) next() (payload []byte, ok, torn bool, err error) {
	var h [frameHeaderLen]byte
	if _, err := io.ReadFull(fr.r, h[:]); err != nil {
		if err == io.EOF {
			return nil, false, false, nil
		}
		if err == io.ErrUnexpectedEOF {
			return nil, false, true, nil
		}
		return nil, false, false, fmt.Errorf("storage: read log: %w", err)
	}
	n := int64(binary.LittleEndian.Uint32(h[0:]))
	if n > maxPayload || n > fr.size-fr.off-frameHeaderLen {
		return nil, false, true, nil
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(fr.r, payload); err != nil {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			return nil, false, true, nil
		}
		return nil, false, false, fmt.Errorf("storage: read log: %w", err)
	}
	if frameCRC(h[0:4], payload) != binary.LittleEndian.Uint32(h[4:]) {
		return nil, false, true, nil
	}
	fr.off += frameHeaderLen + n
	return payload, true, false, nil
}

func replay(s *Store, oid uint32, f *os.File, path string) (*Table, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	fr := &frameReader{r: bufio.NewReaderSize(f, 1<<20), size: fi.Size()}
	wrap := func(err error) error {
		return fmt.Errorf("storage: table %d: log %s at offset %d: %w", oid, path, fr.off, err)
	}
	p, ok, _, err := fr.next()
	if err != nil {
		return nil, wrap(err)
	}
	if !ok {
		// Creation never finished (nothing valid follows), or a damaged
		// header in front of the table's writes.
		next, err := findFrame(f, 0, fr.size)
		if err != nil {
			return nil, wrap(err)
		}
		if next >= 0 {
			return nil, &DamagedError{OID: oid, Path: path, Offset: 0, Size: fr.size, NoHeader: true,
				Reason: fmt.Sprintf("its header (the table's definition) is cut short or fails its checksum, but a valid frame follows at offset %d", next)}
		}
		return nil, nil
	}
	hdr, err := decodeRecord(p, nil)
	if err != nil || hdr.kind != recHeader {
		return nil, wrap(errors.Join(errCorrupt, err))
	}
	if hdr.def.OID != oid {
		return nil, wrap(fmt.Errorf("header names table %d", hdr.def.OID))
	}
	var marks retainMarks
	markAt := int64(-1)
	if hdr.hdr.Format >= 1 {
		var b [markBlockLen]byte
		if _, err := io.ReadFull(fr.r, b[:]); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, nil // creation never finished
			}
			return nil, wrap(err)
		}
		markAt = fr.off
		fr.off += markBlockLen
		marks = decodeMarkBlock(b[:])
	}
	def := cloneDef(hdr.def)
	schema := types.ArrowSchema(def.Columns)
	rp := newReplayer(hdr.hdr, marks)
	rp.st.next = hdr.next
	// pending holds the frames of a write split over several (recMore),
	// applied once its last frame is read; pendingAt is where it starts.
	var pending []record
	var pendingAt int64
	// tornTail: the log ends in a torn write from fr.off on, cut below
	// unless the marks show it held acknowledged writes.
	tornTail := false
	for {
		start := fr.off
		p, ok, torn, err := fr.next()
		if err != nil {
			return nil, wrap(err)
		}
		if !ok {
			bad := fr.off
			if len(pending) > 0 { // the write's last frame never made it
				fr.off, torn = pendingAt, true
			}
			if torn {
				torn, err = checkBadFrame(s, f, path, def, bad, fr.off, fr.size)
				var d *DamagedError
				if errors.As(err, &d) {
					return nil, err
				}
				if err != nil {
					return nil, wrap(err)
				}
				tornTail = torn
			}
			break
		}
		r, err := decodeRecord(p, schema)
		if err != nil {
			return nil, wrap(err)
		}
		if r.more {
			if len(pending) == 0 {
				pendingAt = start
			}
			pending = append(pending, r)
			continue
		}
		if err := rp.write(append(pending, r)); err != nil {
			return nil, wrap(err)
		}
		pending = nil
	}
	st, root := rp.finish()
	if marks.n > 0 && marks.newer > st.pos.seq {
		// A checkpoint recorded a position the log no longer reaches.
		d := &DamagedError{OID: oid, Table: def.TableName, Path: path, Offset: fr.off, Size: fr.size,
			Reason: fmt.Sprintf("it ends after write %d but a checkpoint recorded write %d as durable", st.pos.seq, marks.newer)}
		if !s.opts.RecoverDamaged {
			return nil, d
		}
		if tornTail && fr.off < fr.size { // what is left of acknowledged writes: keep it
			dst, n, err := moveAside(f, path, s.opts.DamagedDir, fr.off, fr.size)
			if err != nil {
				return nil, wrap(err)
			}
			tornTail = false
			s.opts.Logf("recover-damaged: table %q (OID %d): moved the last %d bytes of %s (offset %d to %d) to %s",
				def.TableName, oid, n, path, fr.off, fr.size, dst)
		}
		newer := marks.newer
		if marks, err = clearMarks(f, markAt, marks); err != nil {
			return nil, wrap(err)
		}
		root = nil
		s.opts.Logf("recover-damaged: table %q (OID %d): %s ends after write %d, before write %d that a checkpoint recorded as durable: writes %d to %d are lost; the views reading the table rebuild from it",
			def.TableName, oid, path, st.pos.seq, newer, st.pos.seq+1, newer)
	}
	if tornTail {
		if fr.off < fr.size {
			s.opts.Logf("storage: table %q (OID %d): cut a torn write of %d bytes at the end of %s (offset %d; a crash during a write that was never acknowledged)",
				def.TableName, oid, fr.size-fr.off, path, fr.off)
		}
		if err := cutTail(f, fr.off); err != nil {
			return nil, wrap(err)
		}
	}
	lf := &logFile{f: f, path: path, markAt: markAt}
	lf.size.Store(fr.off)
	ret := retention{marks: marks, base: hdr.hdr.Base}
	if hdr.hdr.Format == 0 {
		// A log from before LSNs: its LSN space starts at its end, and it
		// is rewritten in the current format (with a mark block).
		ret.base = st.pos.seq
		if err := upgradeLog(lf, def, st); err != nil {
			return nil, wrap(err)
		}
	} else if _, err := f.Seek(fr.off, io.SeekStart); err != nil {
		return nil, wrap(err)
	}
	ret.setRoot(root, st.pos.bytes)
	t := newTable(s, def, st, lf)
	t.ret = ret
	t.resetCompactionCheck()
	return t, nil
}

// upgradeLog rewrites a format-0 log as a snapshot in the current format
// (atomically, by rename; Open fsyncs the directory). The old file stays
// open in lf until the new one replaces it.
func upgradeLog(lf *logFile, def TableDef, st *state) error {
	tmp := lf.path + ".tmp"
	lsn := st.pos.seq
	h := headerDef{Def: def, Format: logFormat, LSN: lsn, Base: lsn, Hist: lsn}
	f, size, markAt, err := writeSnapshot(tmp, h, st, retainMarks{}, nil)
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, lf.path); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("upgrade: %w", err)
	}
	lf.f.Close()
	lf.f, lf.markAt = f, markAt
	lf.size.Store(size)
	return nil
}

// cutTail truncates a log at off and makes that durable.
func cutTail(f *os.File, off int64) error {
	if err := f.Truncate(off); err != nil {
		return fmt.Errorf("truncate torn tail: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync: %w", err)
	}
	return nil
}

// checkBadFrame classifies the first bad frame of a log, at bad (the write
// it belongs to starts at cut): torn when no valid frame follows (the
// caller cuts it, see replay); otherwise the log is damaged: a
// *DamagedError, or with RecoverDamaged everything from cut on is moved
// aside (and torn is false: nothing is left to cut).
func checkBadFrame(s *Store, f *os.File, path string, def TableDef, bad, cut, size int64) (torn bool, err error) {
	next, err := findFrame(f, bad, size)
	if err != nil {
		return false, err
	}
	if next < 0 {
		return true, nil
	}
	d := &DamagedError{OID: def.OID, Table: def.TableName, Path: path, Offset: cut, Size: size,
		Reason: fmt.Sprintf("the frame at offset %d is cut short or fails its checksum, but a valid frame follows at offset %d", bad, next)}
	if !s.opts.RecoverDamaged {
		return false, d
	}
	dst, n, err := moveAside(f, path, s.opts.DamagedDir, cut, size)
	if err != nil {
		return false, err
	}
	s.opts.Logf("recover-damaged: table %q (OID %d): %s is damaged at offset %d (%s); moved its last %d bytes (offset %d to %d) to %s and kept the %d bytes before",
		def.TableName, def.OID, path, cut, d.Reason, n, cut, size, dst, cut)
	return false, nil
}
