package storage

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"

	"github.com/streamsql/streamsql/pgerr"
)

// Write failures (a full disk, an I/O error). Writers pipeline: a write
// builds its state on the previous accepted one (t.w) and queues its frames
// before the previous write is durable. So when the committer fails a
// table's batch, every later request of the table was built on rows that
// never became durable and must fail too, and the writer side (t.w, the key
// indexes, the change feed's tail) must be rolled back to the durable state
// t.pub before anyone writes again.
//
// Generations do it without the committer taking the writer lock: each
// request carries t.gen as it was submitted; the committer records the
// failure with the highest generation of the failed batch, and fails
// without writing every later request of that generation or an older one
// (staleErr). The next writer, under t.mu, sees the failure and settles:
// t.w = t.pub, indexes rebuilt from it, t.gen moved past the failure, so
// its own request is written. The change feed needs nothing more: feeds
// read only up to the published position, and the next write overwrites
// that position's link to the failed step.
//
// A failed write is cut off the log (logFile.cutBack), so the log keeps
// only complete writes and the table goes on once there is space. A failed
// fsync is not retried (the kernel may have dropped the dirty pages, as in
// PostgreSQL's "fsyncgate"), nor is a log that could not be cut back: the
// table is failed for good and refuses writes until the server restarts;
// its reads, and every other table, go on. After that restart the rows of
// the write whose fsync failed may be there or not, as after a crash
// during a commit that never returned.

// writeFailure is a table's last write failure.
type writeFailure struct {
	err   error  // what the failed requests report
	gen   uint64 // requests of this generation or older fail
	fatal bool   // the table refuses writes until restart
}

// failure holds a table's last write failure. The committer stores it;
// writers read it under the table's lock.
type failure struct{ p atomic.Pointer[writeFailure] }

// staleErr returns the error of a request of generation gen submitted
// before the failure was settled, or nil.
func (f *failure) staleErr(gen uint64) error {
	w := f.p.Load()
	if w == nil || (!w.fatal && gen > w.gen) {
		return nil
	}
	return w.err
}

var errFsync = errors.New("fsync failed")

// failed records a failure of the table's batch b (what: "write to" or
// "fsync") and returns the error its requests report: 53100 for a full
// disk, 58030 otherwise. cut is the error of cutting the failed write back
// off the log (nil if that worked; errFsync after a failed fsync): with
// one the table is failed for good. A batch of mark slots only that could
// be cut back changed no rows: nothing is recorded. Only the committer
// calls it.
func (t *Table) failed(b *tableBatch, what string, err, cut error) error {
	name := t.def.TableName
	e := ioError(err, "could not %s the log of table %q: %s", what, name, errnoText(err)).
		WithDetail("File %s.", t.log.path)
	fatal := cut != nil
	if fatal {
		e = e.WithHint("Table %q refuses writes until the server restarts.", name)
		if cut != errFsync {
			e.Detail += fmt.Sprintf(" The failed write could not be cut off the log: %v.", cut)
		}
	} else if e.Code == pgerr.DiskFull {
		e = e.WithHint("Free disk space. Nothing of the statement was written; it can be retried.")
	}
	if fatal || b.writes > 0 {
		t.failure.p.Store(&writeFailure{err: e, gen: b.gen, fatal: fatal})
	}
	return e
}

// settle rolls the writer side back to the durable state after a write
// failure (see above), or returns the failure if the table refuses
// writes. Holds t.mu.
func (t *Table) settle() error {
	w := t.failure.p.Load()
	if w == nil {
		return nil
	}
	if w.fatal {
		return w.err
	}
	if w.gen < t.gen {
		return nil // settled already
	}
	t.gen = w.gen + 1
	t.w = t.pub.Load()
	t.indexState(t.w)
	return nil
}

// staleTx returns the error of a transaction's writes to t staged at
// generation gen if they can no longer commit: they were built on a write
// that failed. Holds t.mu.
func (t *Table) staleTx(gen uint64) error {
	if t.gen != gen {
		if w := t.failure.p.Load(); w != nil {
			return w.err
		}
		return fmt.Errorf("storage: table %q changed under the transaction", t.def.TableName)
	}
	return t.failure.staleErr(gen)
}

// ioError makes a user-facing error of a failed file operation: 53100
// (disk_full) when the disk or the quota is full, else 58030 (io_error).
func ioError(err error, format string, args ...any) *pgerr.Error {
	code := pgerr.IOError
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		code = pgerr.DiskFull
	}
	return pgerr.Wrap(err, code, format, args...)
}

// errnoText is err without the path an *os.PathError repeats.
func errnoText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
