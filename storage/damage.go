package storage

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// Torn tails and corruption (docs/contributing/storage.md).
//
// A write is acknowledged only once its frames are fsynced, so a crash can
// only tear the frames after the last fsync: the end of the log. Recovery
// therefore tells the two apart by what follows the first bad frame (cut
// short, a checksum failure, a length that runs past the end):
//
//   - nothing valid (scanning every later byte offset for a whole frame
//     with a plausible kind and a matching CRC finds none): a torn tail.
//     It is cut off, as a crash left it unacknowledged.
//   - a valid frame later on: the bad bytes are in the middle of the log,
//     where acknowledged writes were; that is corruption (a flipped bit, a
//     zeroed region a filesystem left). The log also counts as damaged when
//     it ends before the newest LSN its mark block records: a checkpoint
//     committed that position, so the writes up to it were durable.
//
// A damaged log refuses Open with a *DamagedError naming the table, the
// file and the byte offset, and nothing on disk changes. With
// Options.RecoverDamaged, the bytes from the damage to the end of the file
// are copied to Options.DamagedDir/<file>.<offset> (fsynced; never
// deleted) before the log is truncated to its valid prefix, and the marks
// past the new end are cleared so the streaming jobs that read the table
// rebuild from it instead of resuming from a position it no longer has.
//
// One case can be refused that lost nothing acknowledged: a crash in the
// middle of a group commit whose pages reached the disk out of order (a
// later frame written, an earlier one not). Nothing of that group was
// acknowledged, so --recover-damaged loses nothing then either.
//
// Compaction and ALTER TABLE write a new log to <oid>.log.tmp, fsync it and
// rename it over the old one: a crash leaves either whole log, and Open
// removes the .tmp without reading it, so a half-written compaction is never
// taken for damage (nor damage for a compaction).

// Options configure Open.
type Options struct {
	// RecoverDamaged starts despite damaged logs: the damaged part is moved
	// to DamagedDir and the valid prefix is kept (see above).
	RecoverDamaged bool
	// DamagedDir receives the damaged parts; empty means "damaged" beside
	// the store's directory (<datadir>/damaged).
	DamagedDir string
	// Logf reports what recovery cut or moved; nil discards.
	Logf func(format string, args ...any)
}

// DamagedError is Open's error for a table log damaged before its end (or
// ending before a position a checkpoint recorded).
type DamagedError struct {
	OID    uint32
	Table  string // the table's name, from the log's header
	Path   string
	Offset int64 // where the damage starts: the valid prefix ends here
	Size   int64 // the file's size
	Reason string
	// NoHeader: the log's header is damaged, so the table cannot be read
	// at all and RecoverDamaged does not help.
	NoHeader bool
}

func (e *DamagedError) Error() string {
	if e.NoHeader {
		return fmt.Sprintf("table with OID %d: the log %s is damaged at byte offset %d of %d: %s; "+
			"refusing to start, as the table's committed rows would be lost. Restore the data directory from a backup "+
			"(--recover-damaged cannot help: the table's definition is in the damaged header)",
			e.OID, e.Path, e.Offset, e.Size, e.Reason)
	}
	return fmt.Sprintf("table %q (OID %d): the log %s is damaged at byte offset %d of %d: %s; "+
		"refusing to start, as the committed rows after that offset would be lost. "+
		"Restore the data directory from a backup, or start streamsqld with --recover-damaged "+
		"to keep the rows before offset %d and move the rest of the file aside into the data directory's damaged/ directory",
		e.Table, e.OID, e.Path, e.Offset, e.Size, e.Reason, e.Offset)
}

// maxScanPayload bounds the payloads findFrame checks the CRC of, so
// that garbage with a plausible length costs at most this much per offset
// (writes bigger than this are rare; a frame after them is found anyway).
const maxScanPayload = 64 << 20

// findFrame returns the offset of the first whole valid frame that starts
// in (from, size) of f: a length that fits, a payload that starts with a
// known kind byte and zero padding, a matching CRC. -1 when there is none.
func findFrame(f *os.File, from, size int64) (int64, error) {
	const win = 1 << 20
	const look = frameHeaderLen + 8 // frame header and the padded kind
	buf := make([]byte, win+look)
	var bufAt int64 = -1
	var bufLen int
	var payload []byte
	for pos := from + 1; pos+look <= size; pos++ {
		if bufAt < 0 || pos+look > bufAt+int64(bufLen) {
			n, err := f.ReadAt(buf, pos)
			if err != nil && err != io.EOF {
				return -1, fmt.Errorf("read log: %w", err)
			}
			bufAt, bufLen = pos, n
			if n < look {
				return -1, nil
			}
		}
		h := buf[pos-bufAt : pos-bufAt+look]
		n := int64(binary.LittleEndian.Uint32(h[0:]))
		if n < 8 || n > size-pos-frameHeaderLen || n > maxScanPayload {
			continue
		}
		kind := recKind(h[frameHeaderLen]) &^ (recMore | recJoin)
		if kind < recInsert || kind > recMeta || binary.LittleEndian.Uint64(h[frameHeaderLen:])>>8 != 0 {
			continue
		}
		if int64(cap(payload)) < n {
			payload = make([]byte, n)
		}
		p := payload[:n]
		if _, err := f.ReadAt(p, pos+frameHeaderLen); err != nil {
			return -1, fmt.Errorf("read log: %w", err)
		}
		if frameCRC(h[0:4], p) == binary.LittleEndian.Uint32(h[4:]) {
			return pos, nil
		}
	}
	return -1, nil
}

// moveAside copies f's bytes from off to its end into dir/<base>.<off>,
// fsyncs the copy and dir, then truncates f at off. It returns the copy's
// path and how many bytes it holds.
func moveAside(f *os.File, path, dir string, off, size int64) (string, int64, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, fmt.Errorf("create %s: %w", dir, err)
	}
	dst := filepath.Join(dir, filepath.Base(path)+"."+strconv.FormatInt(off, 10))
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", 0, fmt.Errorf("move the damaged part aside: %w", err)
	}
	n, err := io.Copy(out, io.NewSectionReader(f, off, size-off))
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return "", 0, fmt.Errorf("move the damaged part aside to %s: %w", dst, err)
	}
	if err := cutTail(f, off); err != nil {
		return "", 0, err
	}
	return dst, n, nil
}

// clearMarks durably writes empty marks into the next slot of f's mark
// block at markAt and returns them.
func clearMarks(f *os.File, markAt int64, m retainMarks) (retainMarks, error) {
	m = retainMarks{seq: m.seq + 1}
	if _, err := f.WriteAt(encodeMarkSlot(m), markAt+slotOffset(m)); err != nil {
		return m, fmt.Errorf("clear retain marks: %w", err)
	}
	if err := f.Sync(); err != nil {
		return m, fmt.Errorf("fsync: %w", err)
	}
	return m, nil
}
