package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/connector/internal/decode"
	"github.com/streamsql/streamsql/connector/internal/position"
	"github.com/streamsql/streamsql/pgerr"
)

// BatchRows is the most rows a Reader puts in one batch.
const BatchRows = 4096

// PollInterval is how often a follower looks for appended data at the end
// of its file (or for the file to appear).
const PollInterval = 50 * time.Millisecond

// readSize is the least free room a read asks for.
const readSize = 256 << 10

// ReaderOptions are a Reader's settings from the runtime.
type ReaderOptions struct {
	// Errors, if not nil, is called on the Run goroutine with each skipped
	// record's error (see the package documentation).
	Errors func(err error)
}

// Reader reads a Source's file from its start, or from the position given
// to Seek (connector.Reader). It is owned by the goroutine that calls Seek
// and then Run, once; Skipped may be called from any goroutine.
type Reader struct {
	src  *Source
	opts ReaderOptions
	f    *os.File

	start   int64  // the offset Run starts reading at (Seek)
	buf     []byte // file data read; buf[off:] is not consumed yet
	off     int
	pos     int64 // offset in the file after buf's last byte
	line    int64 // lines consumed
	header  bool  // csv: the header record is still to skip
	scan    int   // csv: buf[off:scan] is scanned, newlines in it quoted
	inQuote bool  // csv: buf[off:scan] ends inside a quoted field
	quoted  int64 // csv: newlines inside quotes in buf[off:scan]
	over    bool  // discarding a record longer than max_line_bytes
	overAt  int64 // the first line of that record

	row     *decode.Row
	batch   *decode.Batch
	skipped atomic.Int64
	rewinds atomic.Int64 // files truncated or replaced, read from the start
	idle    func()       // tests: called each time a follower waits at the end
	maxRows int          // tests: rows per batch when > 0 (else BatchRows)
	at      filePos      // the position after the last batch passed to emit
}

// filePos is a Reader's position: the offset after the last record
// consumed, the lines consumed and whether the csv header is still to skip.
type filePos struct {
	off, line int64
	header    bool
}

// NewReader returns a reader of s's file; the file is opened by Run.
func (s *Source) NewReader(o ReaderOptions) *Reader {
	h := s.format == CSV && s.header
	return &Reader{src: s, opts: o, header: h, at: filePos{header: h},
		row: s.dec.NewRow(), batch: s.dec.NewBatch()}
}

// Skipped is the number of records skipped as bad so far.
func (r *Reader) Skipped() int64 { return r.skipped.Load() }

// Rewinds is the number of times the file was found truncated or replaced
// and read again from its start.
func (r *Reader) Rewinds() int64 { return r.rewinds.Load() }

// Position flags.
const posHeaderPending = 1 // csv: the header record is still to skip

// Seek makes Run start at pos, a Position of a reader of the same source
// (nil: the start of the file), as if the records before it had been read:
// lines are numbered on from there and a header already skipped is not
// skipped again. Call it before Run; if the file is then shorter than the
// position, it was truncated or replaced and Run reads it from its start
// (reported like a skipped record). A malformed position is an XX001 error.
func (r *Reader) Seek(pos []byte) error {
	if pos == nil {
		r.start, r.pos, r.line = 0, 0, 0
		r.header = r.src.format == CSV && r.src.header
		r.at = filePos{header: r.header}
		return nil
	}
	v, err := position.Decode(pos, position.FileV1, 3, "file")
	if err != nil {
		return err
	}
	if v[0] > math.MaxInt64 || v[1] > math.MaxInt64 || v[2]&^posHeaderPending != 0 {
		return pgerr.New(pgerr.DataCorrupted, "invalid file reader position %x: out of range", pos)
	}
	r.start, r.pos, r.line = int64(v[0]), int64(v[0]), int64(v[1])
	r.header = r.src.format == CSV && r.src.header && v[2]&posHeaderPending != 0
	r.at = filePos{r.start, r.line, r.header}
	return nil
}

// Position is the reader's position after the last batch it passed to emit
// (connector.Positioner), or after the whole file once Run returned nil:
// the byte offset after the last record consumed (records skipped as bad
// or blank after the batch's last row, and already reported, included),
// the lines consumed, and whether a csv header is still to skip. Call it
// on the Run goroutine, from emit or after Run returned.
func (r *Reader) Position() []byte {
	var flags uint64
	if r.at.header {
		flags |= posHeaderPending
	}
	return position.Encode(position.FileV1, uint64(r.at.off), uint64(r.at.line), flags)
}

// mark makes the records consumed so far the reader's position.
func (r *Reader) mark() {
	r.at = filePos{r.pos - int64(len(r.buf)-r.off), r.line, r.header}
}

// Run reads the file and sends its rows to emit, in batches of up to
// BatchRows rows; a smaller batch goes out whenever the file has no more
// data for now. Without follow it returns nil at the end of the file; with
// follow it polls for appended lines every PollInterval until ctx is
// canceled (it returns ctx.Err()); a followed file that is truncated or
// replaced is read again from its start (see checkRotated). It returns
// emit's error, or a pgerr error when the file cannot be read.
func (r *Reader) Run(ctx context.Context, emit func(arrow.RecordBatch) error) error {
	var tick *time.Ticker
	wait := func() error {
		if tick == nil {
			tick = time.NewTicker(PollInterval)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			return nil
		}
	}
	defer func() {
		if tick != nil {
			tick.Stop()
		}
		if r.f != nil {
			r.f.Close()
		}
	}()
	for {
		f, err := r.src.access.openChecked(r.src.path)
		if err == nil {
			r.f = f
			break
		}
		if !r.src.follow || !errors.Is(err, fs.ErrNotExist) {
			if pgerr.As(err) != nil {
				return err
			}
			return fileError(r.src.path, err)
		}
		if err := wait(); err != nil {
			return err
		}
	}
	if r.start > 0 {
		if err := r.seekStart(); err != nil {
			return err
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.records(ctx, emit, false); err != nil {
			return err
		}
		n, err := r.fill()
		if err != nil {
			return fileError(r.src.path, err)
		}
		if n > 0 {
			continue
		}
		if !r.src.follow {
			if err := r.records(ctx, emit, true); err != nil {
				return err
			}
			if err := r.flush(ctx, emit); err != nil {
				return err
			}
			r.mark()
			return nil
		}
		if err := r.flush(ctx, emit); err != nil {
			return err
		}
		if err := r.checkRotated(); err != nil {
			return err
		}
		if r.idle != nil {
			r.idle()
		}
		if err := wait(); err != nil {
			return err
		}
	}
}

// seekStart moves the open file to r.start. A file shorter than that was
// truncated or replaced since the position was taken: it is read again
// from its start, and the event reported (see rewind).
func (r *Reader) seekStart() error {
	fi, err := r.f.Stat()
	if err != nil {
		return fileError(r.src.path, err)
	}
	if fi.Size() < r.start {
		r.rewind(fmt.Sprintf("has %d bytes, fewer than the %d already read before the restart", fi.Size(), r.start))
		return nil
	}
	if _, err := r.f.Seek(r.start, io.SeekStart); err != nil {
		return fileError(r.src.path, err)
	}
	return nil
}

// checkRotated runs when a follower is at the end of its file: a file that
// shrank (truncated in place, as logrotate's copytruncate does) is read
// again from its start; a path that now names another file (rotated by
// rename and create) is opened anew, with the access checks of the first
// open, and read from its start. A path that names no file for now (renamed
// away, its successor not created yet) keeps the old file followed.
func (r *Reader) checkRotated() error {
	fi, err := r.f.Stat()
	if err != nil {
		return fileError(r.src.path, err)
	}
	if fi.Size() < r.pos {
		if _, err := r.f.Seek(0, io.SeekStart); err != nil {
			return fileError(r.src.path, err)
		}
		r.rewind(fmt.Sprintf("was truncated from %d to %d bytes while followed", r.pos, fi.Size()))
		return nil
	}
	now, err := os.Stat(r.src.path)
	if err != nil || os.SameFile(fi, now) {
		return nil // gone for now, or the same file
	}
	f, err := r.src.access.openChecked(r.src.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		if pgerr.As(err) != nil {
			return err
		}
		return fileError(r.src.path, err)
	}
	r.f.Close()
	r.f = f
	r.rewind("was replaced by another file while followed")
	return nil
}

// rewind makes the reader read its (open, at offset 0) file from the start,
// as a new file: the unconsumed rest of the old one is dropped, lines are
// numbered from 1 again and a csv header is skipped again. The event is
// reported through ReaderOptions.Errors (the runtime counts and logs it)
// and counted in Rewinds.
func (r *Reader) rewind(why string) {
	r.rewinds.Add(1)
	r.start, r.pos, r.line = 0, 0, 0
	r.buf, r.off, r.scan, r.inQuote, r.quoted, r.over = r.buf[:0], 0, 0, false, 0, false
	r.header = r.src.format == CSV && r.src.header
	r.mark()
	if r.opts.Errors != nil {
		r.opts.Errors(pgerr.New(pgerr.Warning, "file %q %s: reading it again from its start", r.src.path, why))
	}
}

// fill reads more of the file after the unconsumed data; n is 0 at the
// end of the file (for now).
func (r *Reader) fill() (n int, err error) {
	if r.off > 0 {
		k := copy(r.buf, r.buf[r.off:])
		r.buf = r.buf[:k]
		r.scan -= r.off
		r.off = 0
	}
	if cap(r.buf)-len(r.buf) < readSize/2 {
		nb := make([]byte, len(r.buf), max(2*cap(r.buf), len(r.buf)+readSize))
		copy(nb, r.buf)
		r.buf = nb
	}
	n, err = r.f.Read(r.buf[len(r.buf):cap(r.buf)])
	r.buf = r.buf[:len(r.buf)+n]
	r.pos += int64(n)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}

// flush emits the rows gathered so far, if any.
func (r *Reader) flush(ctx context.Context, emit func(arrow.RecordBatch) error) error {
	if r.batch.Len() == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mark()
	return emit(r.batch.Take())
}

// records reads every complete record in the buffer (and, when final, the
// unterminated rest), emitting full batches.
func (r *Reader) records(ctx context.Context, emit func(arrow.RecordBatch) error, final bool) error {
	for {
		if r.over {
			if !r.skipOver(final) {
				return nil
			}
			if r.header {
				r.header = false
			} else {
				r.bad(r.overAt, -1, r.tooLong())
			}
			continue
		}
		rec, lines, ok := r.next(final)
		if !ok {
			if len(r.buf)-r.off > r.src.maxLine {
				// No end in sight within the limit: drop what is
				// buffered and the rest of the record as it comes.
				r.over, r.overAt = true, r.line+1
				r.line += r.quoted
				r.off, r.scan, r.inQuote, r.quoted = len(r.buf), len(r.buf), false, 0
				continue
			}
			return nil
		}
		first := r.line + 1
		r.line += lines
		if len(rec) > 0 && rec[len(rec)-1] == '\r' {
			rec = rec[:len(rec)-1]
		}
		if r.header {
			r.header = false
			continue
		}
		if len(rec) > r.src.maxLine {
			r.bad(first, -1, r.tooLong())
			continue
		}
		var col int
		var err error
		if r.src.format == JSON {
			if len(bytes.TrimSpace(rec)) == 0 {
				continue
			}
			col, err = r.row.JSON(rec)
		} else {
			if len(rec) == 0 {
				continue
			}
			col, err = r.row.CSV(rec, r.src.delimiter)
		}
		if err != nil {
			r.bad(first, col, err)
			continue
		}
		if err := r.batch.Add(r.row); err != nil {
			return fmt.Errorf("file connector: %w", err)
		}
		if r.batch.Len() >= BatchRows || r.maxRows > 0 && r.batch.Len() >= r.maxRows {
			if err := r.flush(ctx, emit); err != nil {
				return err
			}
		}
	}
}

// next cuts the next record off the buffer, with the number of lines it
// spans; ok is false when no complete record is buffered (when final, the
// unterminated rest is a record).
func (r *Reader) next(final bool) (rec []byte, lines int64, ok bool) {
	if r.src.format == JSON {
		if i := bytes.IndexByte(r.buf[r.off:], '\n'); i >= 0 {
			rec = r.buf[r.off : r.off+i]
			r.off += i + 1
			return rec, 1, true
		}
	} else {
		r.scan = max(r.scan, r.off)
		for {
			i := bytes.IndexByte(r.buf[r.scan:], '\n')
			if i < 0 {
				break
			}
			if bytes.Count(r.buf[r.scan:r.scan+i], quote)%2 == 1 {
				r.inQuote = !r.inQuote
			}
			end := r.scan + i
			r.scan = end + 1
			if r.inQuote { // a newline inside a quoted field
				r.quoted++
				continue
			}
			rec, lines = r.buf[r.off:end], r.quoted+1
			r.off, r.quoted = r.scan, 0
			return rec, lines, true
		}
	}
	if final && r.off < len(r.buf) {
		rec, lines = r.buf[r.off:], r.quoted+1
		r.off, r.scan, r.inQuote, r.quoted = len(r.buf), len(r.buf), false, 0
		return rec, lines, true
	}
	return nil, 0, false
}

var quote = []byte{'"'}

// skipOver discards the rest of an over-long record up to and including
// its newline (as a raw line: quotes no longer count); it reports whether
// the record ended (at a newline, or at the end of the file when final).
func (r *Reader) skipOver(final bool) bool {
	i := bytes.IndexByte(r.buf[r.off:], '\n')
	if i < 0 {
		r.off, r.scan = len(r.buf), len(r.buf)
		if !final {
			return false
		}
	} else {
		r.off += i + 1
		r.scan = r.off
	}
	r.line++
	r.over = false
	return true
}

// tooLong is the error of a record longer than max_line_bytes.
func (r *Reader) tooLong() error {
	return pgerr.New(pgerr.ProgramLimitExceeded, "record is longer than max_line_bytes (%d bytes)", r.src.maxLine).
		WithHint("Raise the source's max_line_bytes option to read longer records.")
}

// bad counts and reports a skipped record; col is -1 for the whole record.
func (r *Reader) bad(line int64, col int, err error) {
	r.skipped.Add(1)
	if r.opts.Errors == nil {
		return
	}
	where := fmt.Sprintf("file %q, line %d", r.src.path, line)
	if col >= 0 {
		where += ", column " + r.src.cols[col].Name
	}
	e := &pgerr.Error{Code: pgerr.CodeOf(err), Message: where + ": " + err.Error(), Cause: err}
	if pe := pgerr.As(err); pe != nil {
		e.Detail, e.Hint = pe.Detail, pe.Hint
	}
	r.opts.Errors(e)
}
