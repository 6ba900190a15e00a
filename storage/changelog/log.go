package changelog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// SegmentBytes is the size past which Commit starts a new segment.
var SegmentBytes int64 = 8 << 20

const (
	headerLen = 16 // magic (8) + from (8)
	frameHead = 16 // length (4) + CRC (4) + epoch (8)
	maxFrame  = 1 << 30
)

var (
	magic      = []byte("SSQLCL1\n")
	castagnoli = crc32.MakeTable(crc32.Castagnoli)

	// ErrTrimmed: the epochs a reader asked for are no longer kept.
	ErrTrimmed = errors.New("changelog: the requested epochs are no longer kept")
	// ErrBroken: a failed write left the log unusable until Reset.
	ErrBroken = errors.New("changelog: a write failed; the log must be reset")
)

// segment is one file: frames of the epochs after from.
type segment struct {
	from uint64
	path string
	size int64 // committed (visible) bytes
}

// Log is one view's changelog. See the package doc.
type Log struct {
	dir string

	mu      sync.Mutex
	segs    []*segment // by from, ascending; never empty while open
	f       *os.File   // the newest segment
	written int64      // bytes written to f (>= the newest segment's size)
	dirty   bool       // written since the last fsync
	lastW   uint64     // epoch of the last frame written
	lastC   uint64     // epoch of the last frame committed
	broken  error
	closed  bool
}

// Open opens (or creates, covering epochs after from) the log in dir. A
// torn or corrupt tail of the newest segment is truncated; a bad frame
// followed by a valid one fails Open with an error wrapping ErrDamaged
// (the owner then drops the log: subscribers cannot resume from before).
func Open(dir string, from uint64) (*Log, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("changelog: %w", err)
	}
	l := &Log{dir: dir}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("changelog: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".log") {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimSuffix(name, ".log"), 16, 64)
		if err != nil {
			continue
		}
		l.segs = append(l.segs, &segment{from: v, path: filepath.Join(dir, name)})
	}
	sort.Slice(l.segs, func(a, b int) bool { return l.segs[a].from < l.segs[b].from })
	if len(l.segs) == 0 {
		if err := l.newSegment(from, true); err != nil {
			return nil, err
		}
		return l, nil
	}
	for _, s := range l.segs[:len(l.segs)-1] {
		st, err := os.Stat(s.path)
		if err != nil {
			return nil, fmt.Errorf("changelog: %w", err)
		}
		s.size = st.Size()
	}
	last := l.segs[len(l.segs)-1]
	f, err := os.OpenFile(last.path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("changelog: %w", err)
	}
	size, lastEpoch, err := scan(f, last.from)
	if err != nil {
		f.Close()
		return nil, err
	}
	// A bad frame with a valid one after it is damage, not a torn tail:
	// the frames after it were committed (and sent to subscribers), so
	// the log is refused rather than cut there.
	if st, err := f.Stat(); err == nil && st.Size() > size {
		if next := findFrame(f, size, st.Size(), lastEpoch); next >= 0 {
			f.Close()
			return nil, fmt.Errorf("%w: %s: the frame at offset %d is cut short or fails its checksum, but a valid frame follows at offset %d",
				ErrDamaged, last.path, size, next)
		}
	}
	if st, err := f.Stat(); err == nil && st.Size() != size {
		if err := f.Truncate(size); err != nil {
			f.Close()
			return nil, fmt.Errorf("changelog: truncating a torn tail: %w", err)
		}
	}
	last.size, l.f, l.written = size, f, size
	l.lastW, l.lastC = lastEpoch, lastEpoch
	return l, nil
}

// scan validates a segment and returns the size of its valid prefix and
// the epoch of its last valid frame (from if none).
func scan(f *os.File, from uint64) (int64, uint64, error) {
	var h [headerLen]byte
	if n, _ := f.ReadAt(h[:], 0); n < headerLen || string(h[:8]) != string(magic) || binary.LittleEndian.Uint64(h[8:]) != from {
		// A header torn at creation: the segment holds nothing.
		if _, err := f.WriteAt(header(from), 0); err != nil {
			return 0, 0, fmt.Errorf("changelog: %w", err)
		}
		return headerLen, from, nil
	}
	off, last := int64(headerLen), from
	for {
		epoch, payload, err := readFrame(f, off, -1)
		if err != nil || epoch < last || epoch <= from {
			return off, last, nil
		}
		last = epoch
		off += frameHead + int64(len(payload))
	}
}

func header(from uint64) []byte {
	b := append([]byte(nil), magic...)
	return binary.LittleEndian.AppendUint64(b, from)
}

// readFrame reads the frame at off (limit: the visible size, -1 for the
// file's). A short or corrupt frame is an error.
func readFrame(f *os.File, off, limit int64) (uint64, []byte, error) {
	var h [frameHead]byte
	if limit >= 0 && off+frameHead > limit {
		return 0, nil, errShort
	}
	if n, _ := f.ReadAt(h[:], off); n < frameHead {
		return 0, nil, errShort
	}
	n := int64(binary.LittleEndian.Uint32(h[0:]))
	if n > maxFrame || limit >= 0 && off+frameHead+n > limit {
		return 0, nil, errShort
	}
	payload := make([]byte, n)
	if k, _ := f.ReadAt(payload, off+frameHead); int64(k) < n {
		return 0, nil, errShort
	}
	crc := crc32.Update(crc32.Checksum(h[8:16], castagnoli), castagnoli, payload)
	if crc != binary.LittleEndian.Uint32(h[4:]) {
		return 0, nil, errCorrupt
	}
	return binary.LittleEndian.Uint64(h[8:]), payload, nil
}

// findFrame returns the offset of the first whole frame with a matching
// CRC and an epoch after last that starts in (from, size) of f, or -1.
func findFrame(f *os.File, from, size int64, last uint64) int64 {
	const win = 1 << 20
	buf := make([]byte, win+frameHead)
	var bufAt int64 = -1
	var bufLen int
	for pos := from + 1; pos+frameHead <= size; pos++ {
		if bufAt < 0 || pos+frameHead > bufAt+int64(bufLen) {
			n, _ := f.ReadAt(buf, pos)
			bufAt, bufLen = pos, n
			if n < frameHead {
				return -1
			}
		}
		h := buf[pos-bufAt : pos-bufAt+frameHead]
		n := int64(binary.LittleEndian.Uint32(h[0:]))
		if n > maxFrame || n > size-pos-frameHead || binary.LittleEndian.Uint64(h[8:]) <= last {
			continue
		}
		if epoch, _, err := readFrame(f, pos, size); err == nil && epoch > last {
			return pos
		}
	}
	return -1
}

// ErrDamaged is wrapped by Open's error when the newest segment is damaged
// before its end (a bad frame followed by valid ones).
var ErrDamaged = errors.New("changelog: damaged")

var (
	errShort   = errors.New("changelog: short frame")
	errCorrupt = errors.New("changelog: frame checksum mismatch")
)

// newSegment starts a segment of the epochs after from; l.mu is held (or
// l is not shared yet).
func (l *Log) newSegment(from uint64, sync bool) error {
	path := filepath.Join(l.dir, fmt.Sprintf("%016x.log", from))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("changelog: %w", err)
	}
	if _, err := f.Write(header(from)); err != nil {
		f.Close()
		return fmt.Errorf("changelog: %w", err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("changelog: %w", err)
		}
		if err := syncDir(l.dir); err != nil {
			f.Close()
			return err
		}
	}
	if l.f != nil {
		l.f.Close()
	}
	l.segs = append(l.segs, &segment{from: from, path: path, size: headerLen})
	l.f, l.written, l.dirty = f, headerLen, !sync
	l.lastW, l.lastC = from, from
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("changelog: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("changelog: %w", err)
	}
	return nil
}

// From is the epoch the log covers after: every frame of a later epoch is
// in it.
func (l *Log) From() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.segs[0].from
}

// Last is the epoch of the last committed frame (From() if none).
func (l *Log) Last() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastC
}

// Append writes a frame of epoch (>= the last one's); it becomes visible
// at the next Commit. After an error the log is broken until Reset.
func (l *Log) Append(epoch uint64, payload []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.broken != nil {
		return l.broken
	}
	if epoch < l.lastW || epoch <= l.segs[len(l.segs)-1].from {
		return fmt.Errorf("changelog: epoch %d appended after epoch %d", epoch, l.lastW)
	}
	buf := make([]byte, frameHead, frameHead+len(payload))
	binary.LittleEndian.PutUint32(buf[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint64(buf[8:], epoch)
	binary.LittleEndian.PutUint32(buf[4:], crc32.Update(crc32.Checksum(buf[8:16], castagnoli), castagnoli, payload))
	buf = append(buf, payload...)
	if _, err := l.f.WriteAt(buf, l.written); err != nil {
		l.fail(err)
		return l.broken
	}
	l.written += int64(len(buf))
	l.dirty = true
	l.lastW = epoch
	return nil
}

// fail breaks the log after a failed write: the bytes after the last
// commit are cut off if possible. l.mu is held.
func (l *Log) fail(err error) {
	_ = l.f.Truncate(l.segs[len(l.segs)-1].size)
	l.written = l.segs[len(l.segs)-1].size
	l.lastW = l.lastC
	l.broken = fmt.Errorf("%w: %w", ErrBroken, err)
}

// Commit makes the frames appended so far visible to cursors, after an
// fsync when sync is set, and starts a new segment when the newest one
// has outgrown SegmentBytes.
func (l *Log) Commit(sync bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.broken != nil {
		return l.broken
	}
	if sync && l.dirty {
		if err := l.f.Sync(); err != nil {
			l.fail(err)
			return l.broken
		}
		l.dirty = false
	}
	cur := l.segs[len(l.segs)-1]
	cur.size = l.written
	l.lastC = l.lastW
	if cur.size > SegmentBytes && l.lastC > cur.from {
		if err := l.newSegment(l.lastC, sync); err != nil {
			l.broken = fmt.Errorf("%w: %w", ErrBroken, err)
			return l.broken
		}
	}
	return nil
}

// Reset drops every frame: the log covers the epochs after from. It also
// clears a broken log.
func (l *Log) Reset(from uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
	for _, s := range l.segs {
		if err := os.Remove(s.path); err != nil && !os.IsNotExist(err) {
			l.broken = fmt.Errorf("%w: %w", ErrBroken, err)
			return l.broken
		}
	}
	l.segs = nil
	if err := l.newSegment(from, true); err != nil {
		l.broken = fmt.Errorf("%w: %w", ErrBroken, err)
		// keep an empty segment list usable by From: a placeholder
		l.segs = []*segment{{from: from, size: headerLen}}
		return l.broken
	}
	l.broken = nil
	return nil
}

// Trim drops the segments whose frames are all of epochs <= keepAfter; the
// newest segment stays.
func (l *Log) Trim(keepAfter uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.segs) > 1 && l.segs[1].from <= keepAfter {
		if err := os.Remove(l.segs[0].path); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("changelog: %w", err)
		}
		l.segs = l.segs[1:]
	}
	return nil
}

// Bytes is the log's committed size on disk.
func (l *Log) Bytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	for _, s := range l.segs {
		n += s.size
	}
	return n
}

// Close closes the log (the files stay).
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.f != nil {
		return l.f.Close()
	}
	return nil
}

// Remove closes the log and deletes its directory (the view was dropped).
func (l *Log) Remove() error {
	l.Close()
	return os.RemoveAll(l.dir)
}
