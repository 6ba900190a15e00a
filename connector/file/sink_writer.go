package file

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/connector/sink/encode"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// fileWriter is one writer of a file sink. It is owned by the sink job's
// goroutine; Status reads only atomics.
type fileWriter struct {
	s      *FileSink
	base   string // "<sink>-w<writer>": every file name of the writer starts with it
	enc    encode.Encoder
	open   map[string]*outFile // by partition directory ("" without partition_by)
	closed []*outFile          // closed in-progress files, not staged yet
	staged []stagedFile        // pre-committed, not committed, in epoch order
	seq    int                 // in-progress files opened
	dirs   map[string]bool     // directories whose entries changed since the last sync

	rows      atomic.Int64
	committed atomic.Uint64
	openAt    atomic.Int64 // unix µs of the oldest uncommitted row (0: none)
	errs      atomic.Int64
	lastErr   atomic.Pointer[string]
}

// outFile is an in-progress file.
type outFile struct {
	dir   string // partition directory relative to the sink's ("" none)
	tmp   string // path relative to the sink's directory
	f     *os.File
	bw    *bufio.Writer
	pq    parquetFile // Parquet only
	bytes int64
	rows  int64
}

// stagedFile is a closed file waiting for its checkpoint's commit; the
// pending bytes of PreCommit are the JSON list of them.
type stagedFile struct {
	Staged string `json:"staged"` // relative to the sink's directory
	Final  string `json:"final"`
	Epoch  uint64 `json:"epoch"`
	Rows   int64  `json:"rows"`
}

func newFileWriter(s *FileSink, writer int) (*fileWriter, error) {
	w := &fileWriter{s: s, base: fmt.Sprintf("%s-w%d", s.spec.Name, writer), open: map[string]*outFile{}, dirs: map[string]bool{}}
	if s.format.Encoding != encode.Parquet {
		e, err := encode.New(s.format, s.spec.Cols, s.spec.Key)
		if err != nil {
			return nil, err
		}
		w.enc = e
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, w.fail(fmt.Errorf("file sink %s: %w", s.spec.Name, err))
	}
	return w, nil
}

// fail records err for Status and returns it.
func (w *fileWriter) fail(err error) error {
	w.errs.Add(1)
	msg := err.Error()
	w.lastErr.Store(&msg)
	return err
}

// recover makes the files of checkpoint epoch's pending visible and
// deletes the writer's other hidden files.
func (w *fileWriter) recover(epoch uint64, pending []byte) error {
	var files []stagedFile
	if len(pending) > 0 {
		if err := json.Unmarshal(pending, &files); err != nil {
			return w.fail(fmt.Errorf("file sink %s: checkpoint %d: bad pending record: %w", w.s.spec.Name, epoch, err))
		}
	}
	if err := w.commitFiles(files); err != nil {
		return err
	}
	err := filepath.WalkDir(w.s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		name := d.Name()
		if !d.IsDir() && strings.HasPrefix(name, "."+w.base+"-") &&
			(strings.HasSuffix(name, ".inprogress") || strings.HasSuffix(name, ".pending")) {
			if err := os.Remove(p); err != nil {
				return err
			}
			w.dirs[filepath.Dir(p)] = true
		}
		return nil
	})
	if err == nil {
		err = w.syncDirs()
	}
	if err != nil {
		return w.fail(fmt.Errorf("file sink %s: recovery: %w", w.s.spec.Name, err))
	}
	w.committed.Store(epoch)
	return nil
}

// Write implements sink.Writer.
func (w *fileWriter) Write(ctx context.Context, rec arrow.RecordBatch, ops []stream.Op) error {
	if rec.NumRows() == 0 {
		return nil
	}
	if w.openAt.Load() == 0 {
		w.openAt.Store(time.Now().UnixMicro())
	}
	var err error
	if len(w.s.partition) == 0 {
		err = w.writeTo("", rec, ops)
	} else {
		err = w.writePartitioned(rec, ops)
	}
	if err != nil {
		return w.fail(fmt.Errorf("file sink %s: %w", w.s.spec.Name, err))
	}
	return nil
}

// writePartitioned writes each run of rows of one partition to its file.
func (w *fileWriter) writePartitioned(rec arrow.RecordBatch, ops []stream.Op) error {
	n := int(rec.NumRows())
	var b strings.Builder
	dirOf := func(i int) string {
		b.Reset()
		for k, c := range w.s.partition {
			if k > 0 {
				b.WriteByte(filepath.Separator)
			}
			col := w.s.spec.Cols[c]
			b.WriteString(partitionDir(col.Name, types.ValueAt(rec.Column(c), i, col.Type), col.Type))
		}
		return b.String()
	}
	start, cur := 0, dirOf(0)
	for i := 1; i <= n; i++ {
		var d string
		if i < n {
			if d = dirOf(i); d == cur {
				continue
			}
		}
		sub := rec.NewSlice(int64(start), int64(i))
		var subOps []stream.Op
		if ops != nil {
			subOps = ops[start:i]
		}
		err := w.writeTo(cur, sub, subOps)
		sub.Release()
		if err != nil {
			return err
		}
		start, cur = i, d
	}
	return nil
}

// writeTo writes rows to the open file of partition directory dir.
func (w *fileWriter) writeTo(dir string, rec arrow.RecordBatch, ops []stream.Op) error {
	f, err := w.file(dir)
	if err != nil {
		return err
	}
	if w.enc != nil {
		err = w.enc.Encode(rec, ops, func(_, v []byte) error {
			f.bw.Write(v)
			f.bw.WriteByte('\n')
			f.bytes += int64(len(v)) + 1
			f.rows++
			return nil
		})
	} else {
		err = f.pq.write(rec, ops, w.s.format.ForceAppendOnly, f)
	}
	if err != nil {
		return err
	}
	if f.bytes >= w.s.maxBytes { // roll: the next rows go to a new file
		delete(w.open, dir)
		if err := w.closeFile(f); err != nil {
			return err
		}
	}
	return nil
}

// file returns the open file of partition directory dir, opening one.
func (w *fileWriter) file(dir string) (*outFile, error) {
	if f := w.open[dir]; f != nil {
		return f, nil
	}
	if dir != "" {
		if err := os.MkdirAll(filepath.Join(w.s.dir, dir), 0o755); err != nil {
			return nil, err
		}
		for d := filepath.Dir(dir); ; d = filepath.Dir(d) { // the new entries' parents
			w.dirs[filepath.Join(w.s.dir, d)] = true
			if d == "." {
				break
			}
		}
	}
	w.seq++
	tmp := filepath.Join(dir, fmt.Sprintf(".%s-%d.inprogress", w.base, w.seq))
	fh, err := os.OpenFile(filepath.Join(w.s.dir, tmp), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	f := &outFile{dir: dir, tmp: tmp, f: fh, bw: bufio.NewWriterSize(fh, 256<<10)}
	switch {
	case w.s.format.Encoding == encode.Parquet:
		if err := f.pq.open(f.bw, w.s.spec.Cols); err != nil {
			fh.Close()
			return nil, err
		}
	case w.s.header:
		h := encode.CSVHeader(w.s.spec.Cols)
		f.bw.Write(h)
		f.bw.WriteByte('\n')
		f.bytes += int64(len(h)) + 1
	}
	w.open[dir] = f
	return f, nil
}

// closeFile flushes, syncs and closes f, which joins the closed files.
func (w *fileWriter) closeFile(f *outFile) error {
	var err error
	if f.pq.w != nil {
		err = f.pq.close()
	}
	if e := f.bw.Flush(); err == nil {
		err = e
	}
	if e := f.f.Sync(); err == nil {
		err = e
	}
	if e := f.f.Close(); err == nil {
		err = e
	}
	if err != nil {
		return err
	}
	w.closed = append(w.closed, f)
	return nil
}

// Barrier implements sink.Writer: files stay open across epochs until a
// checkpoint.
func (w *fileWriter) Barrier(ctx context.Context, epoch uint64) error { return nil }

// PreCommit implements sink.Writer: every file is closed and renamed to
// its staged name; the pending bytes list every staged file not yet
// committed (earlier epochs whose checkpoint failed included).
func (w *fileWriter) PreCommit(ctx context.Context, epoch uint64) ([]byte, error) {
	dirs := make([]string, 0, len(w.open))
	for dir := range w.open {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs) // file numbers must not depend on map order: an epoch written again gets the same names
	for _, dir := range dirs {
		f := w.open[dir]
		delete(w.open, dir)
		if err := w.closeFile(f); err != nil {
			return nil, w.fail(fmt.Errorf("file sink %s: %w", w.s.spec.Name, err))
		}
	}
	for n, f := range w.closed {
		final := filepath.Join(f.dir, fmt.Sprintf("%s-%020d-%04d.%s", w.base, epoch, n, w.s.ext))
		sf := stagedFile{Staged: filepath.Join(f.dir, "."+filepath.Base(final)+".pending"), Final: final, Epoch: epoch, Rows: f.rows}
		if err := os.Rename(filepath.Join(w.s.dir, f.tmp), filepath.Join(w.s.dir, sf.Staged)); err != nil {
			return nil, w.fail(fmt.Errorf("file sink %s: %w", w.s.spec.Name, err))
		}
		w.dirs[filepath.Join(w.s.dir, f.dir)] = true
		w.staged = append(w.staged, sf)
	}
	w.closed = w.closed[:0]
	if err := w.syncDirs(); err != nil {
		return nil, w.fail(fmt.Errorf("file sink %s: %w", w.s.spec.Name, err))
	}
	if len(w.staged) == 0 {
		return nil, nil
	}
	return json.Marshal(w.staged)
}

// Commit implements sink.Writer: the staged files of epochs up to epoch
// get their final names.
func (w *fileWriter) Commit(ctx context.Context, epoch uint64, pending []byte) error {
	n := 0
	for n < len(w.staged) && w.staged[n].Epoch <= epoch {
		n++
	}
	if err := w.commitFiles(w.staged[:n]); err != nil {
		return err
	}
	w.staged = w.staged[n:]
	w.committed.Store(epoch)
	if len(w.staged) == 0 && len(w.open) == 0 && len(w.closed) == 0 {
		w.openAt.Store(0)
	}
	return nil
}

// commitFiles renames staged files to their final names; a file already
// renamed (a commit before a crash) is skipped.
func (w *fileWriter) commitFiles(files []stagedFile) error {
	for _, sf := range files {
		from, to := filepath.Join(w.s.dir, sf.Staged), filepath.Join(w.s.dir, sf.Final)
		if err := os.Rename(from, to); err != nil {
			if _, serr := os.Stat(to); errors.Is(err, fs.ErrNotExist) && serr == nil {
				continue // committed before
			}
			return w.fail(fmt.Errorf("file sink %s: commit of %s: %w", w.s.spec.Name, sf.Final, err))
		}
		w.dirs[filepath.Dir(to)] = true
		w.rows.Add(sf.Rows)
	}
	if err := w.syncDirs(); err != nil {
		return w.fail(fmt.Errorf("file sink %s: %w", w.s.spec.Name, err))
	}
	return nil
}

// syncDirs fsyncs the directories whose entries changed.
func (w *fileWriter) syncDirs() error {
	for d := range w.dirs {
		f, err := os.Open(d)
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return err
		}
		delete(w.dirs, d)
	}
	return nil
}

// Status implements sink.Writer.
func (w *fileWriter) Status() sink.Status {
	st := sink.Status{Rows: w.rows.Load(), CommittedEpoch: w.committed.Load(), Errors: w.errs.Load(), Status: "running"}
	if p := w.lastErr.Load(); p != nil {
		st.LastError = *p
	}
	if at := w.openAt.Load(); at != 0 {
		st.OpenTxnAgeMs = (time.Now().UnixMicro() - at) / 1000
	}
	return st
}

// Close implements sink.Writer: open files are abandoned (a later Recover
// or NewWriter deletes them).
func (w *fileWriter) Close() error {
	for dir, f := range w.open {
		f.f.Close()
		delete(w.open, dir)
	}
	return nil
}
