package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/pgerr"
)

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

// Reader reads a Source's file from its start (connector.Reader). It is
// owned by the goroutine that calls Run, once; Skipped may be called from
// any goroutine.
type Reader struct {
	src  *Source
	opts ReaderOptions
	f    *os.File

	buf     []byte // file data read; buf[off:] is not consumed yet
	off     int
	pos     int64 // bytes read from the file
	line    int64 // lines consumed
	header  bool  // csv: the header record is still to skip
	scan    int   // csv: buf[off:scan] is scanned, newlines in it quoted
	inQuote bool  // csv: buf[off:scan] ends inside a quoted field
	quoted  int64 // csv: newlines inside quotes in buf[off:scan]

	row     []slot
	scratch []byte // unescaped fields of the current row
	batch   *batch
	skipped atomic.Int64
	idle    func() // tests: called each time a follower waits at the end
}

// NewReader returns a reader of s's file; the file is opened by Run.
func (s *Source) NewReader(o ReaderOptions) *Reader {
	return &Reader{src: s, opts: o, header: s.format == CSV && s.header,
		row: make([]slot, len(s.cols)), batch: newBatch(s)}
}

// Skipped is the number of records skipped as bad so far.
func (r *Reader) Skipped() int64 { return r.skipped.Load() }

// Run reads the file and sends its rows to emit, in batches of up to
// BatchRows rows; a smaller batch goes out whenever the file has no more
// data for now. Without follow it returns nil at the end of the file; with
// follow it polls for appended lines every PollInterval until ctx is
// canceled (it returns ctx.Err()). It returns emit's error, or a pgerr error
// when the file cannot be read (or, followed, shrinks).
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
		f, err := os.Open(r.src.path)
		if err == nil {
			r.f = f
			break
		}
		if !r.src.follow || !errors.Is(err, fs.ErrNotExist) {
			return fileError(r.src.path, err)
		}
		if err := wait(); err != nil {
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
			return r.flush(ctx, emit)
		}
		if err := r.flush(ctx, emit); err != nil {
			return err
		}
		if fi, err := r.f.Stat(); err != nil {
			return fileError(r.src.path, err)
		} else if fi.Size() < r.pos {
			return pgerr.New(pgerr.ObjectNotInPrerequisiteState, "file %q shrank from %d to %d bytes while followed", r.src.path, r.pos, fi.Size()).
				WithHint("A followed file may only grow; recreate the source to read it again.")
		}
		if r.idle != nil {
			r.idle()
		}
		if err := wait(); err != nil {
			return err
		}
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
	if r.batch.rows == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return emit(r.batch.take())
}

// records reads every complete record in the buffer (and, when final, the
// unterminated rest), emitting full batches.
func (r *Reader) records(ctx context.Context, emit func(arrow.RecordBatch) error, final bool) error {
	for {
		rec, lines, ok := r.next(final)
		if !ok {
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
		var col int
		var err error
		if r.src.format == JSON {
			if len(bytes.TrimSpace(rec)) == 0 {
				continue
			}
			col, err = r.parseJSON(rec)
		} else {
			if len(rec) == 0 {
				continue
			}
			col, err = r.parseCSV(rec)
		}
		if err != nil {
			r.bad(first, col, err)
			continue
		}
		if err := r.batch.add(r.row); err != nil {
			return fmt.Errorf("file connector: %w", err)
		}
		if r.batch.rows >= BatchRows {
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
