package checkpoint

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Logf logs a line (the server's logger).
type Logf func(format string, args ...any)

// Store is the checkpoints of one directory. Safe for concurrent use.
type Store struct {
	dir  string
	logf Logf

	sem chan struct{} // one open Writer at a time

	mu   sync.Mutex
	last *Manifest // newest committed checkpoint (nil: none)
	prev *Manifest // the one before, kept as a fallback
	// found are the checkpoints OpenStore listed, newest first, until
	// Recover reads them.
	found []uint64
	// failed is set when a Writer was aborted or failed to commit: its
	// operators may have counted their changes as written, so the next
	// checkpoint must be full.
	failed bool
}

// Policy for full checkpoints: a checkpoint is full when there is none
// before it, when the chain's deltas outgrew its base (and are at least
// minDeltaBytes), or when the chain is maxChain segments long.
// (Variables so that tests can lower them.)
var (
	minDeltaBytes int64 = 4 << 20
	maxChain            = 64
)

// Open opens (creating if needed) the checkpoint directory dir and reads
// back the newest checkpoint that verifies, falling back to older ones
// with a log line for each that does not. It returns nil (and no error)
// when there is no checkpoint. Files of unfinished or unusable checkpoints
// are removed. It is OpenStore followed by Recover.
func Open(dir string, logf Logf) (*Store, *Checkpoint, error) {
	s, err := OpenStore(dir, logf)
	if err != nil {
		return nil, nil, err
	}
	return s, s.Recover(), nil
}

// OpenStore opens (creating if needed) the checkpoint directory dir and
// lists its checkpoints without reading them: Recover reads them back.
// Begin must not be called before Recover has returned.
func OpenStore(dir string, logf Logf) (*Store, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	s := &Store{dir: dir, logf: logf, sem: make(chan struct{}, 1)}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, tmpSuffix) {
			os.Remove(filepath.Join(dir, name))
			continue
		}
		if ep, ok := manifestEpoch(name); ok {
			s.found = append(s.found, ep)
		}
	}
	sort.Slice(s.found, func(i, j int) bool { return s.found[i] > s.found[j] })
	return s, nil
}

// Newest is the epoch of the newest checkpoint OpenStore found (0: none);
// Recover may fall back to an older one if it does not verify.
func (s *Store) Newest() uint64 {
	if len(s.found) == 0 {
		return 0
	}
	return s.found[0]
}

// Recover reads back the newest checkpoint OpenStore found that verifies
// (every segment is read and checked), falling back to older ones with a
// log line for each that does not, and removes the files no kept
// checkpoint needs. It returns nil when there is none. Call it once.
func (s *Store) Recover() *Checkpoint {
	var cp *Checkpoint
	for _, ep := range s.found {
		m, err := readManifest(s.dir, ep)
		if err == nil && cp == nil {
			var c *Checkpoint
			if c, err = load(s.dir, m); err == nil {
				cp = c
				s.mu.Lock()
				s.last = m
				s.mu.Unlock()
				continue
			}
		}
		if err != nil {
			s.logf("checkpoint: skipping checkpoint %d: %v", ep, err)
			os.Remove(filepath.Join(s.dir, manifestName(ep)))
			continue
		}
		s.mu.Lock()
		if s.prev == nil {
			s.prev = m // verified lazily: it is only a fallback
		} else {
			os.Remove(filepath.Join(s.dir, manifestName(ep)))
		}
		s.mu.Unlock()
	}
	s.found = nil
	s.removeUnreferenced(false)
	return cp
}

func readManifest(dir string, epoch uint64) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestName(epoch)))
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	m, err := decodeManifest(b)
	if err != nil {
		return nil, err
	}
	if m.Epoch != epoch {
		return nil, fmt.Errorf("%w: manifest %d says epoch %d", errCorrupt, epoch, m.Epoch)
	}
	return m, nil
}

// Last returns the newest committed checkpoint's manifest, or nil.
func (s *Store) Last() *Manifest {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		return nil
	}
	m := *s.last
	return &m
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// Begin starts checkpoint epoch (higher than every committed one), waiting
// while another Writer is open. The Writer must be committed or aborted.
func (s *Store) Begin(epoch uint64) (*Writer, error) {
	s.sem <- struct{}{}
	s.mu.Lock()
	last, failed := s.last, s.failed
	s.mu.Unlock()
	if last != nil && epoch <= last.Epoch {
		<-s.sem
		return nil, fmt.Errorf("checkpoint: epoch %d is not after the last checkpoint's %d", epoch, last.Epoch)
	}
	name := segmentName(epoch)
	f, err := os.OpenFile(filepath.Join(s.dir, name), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		<-s.sem
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	w := &Writer{s: s, epoch: epoch, name: name, f: f, start: time.Now()}
	w.full = last == nil
	if last != nil {
		base := last.Segments[0].Size
		deltas := last.ChainBytes() - base
		w.full = failed || len(last.Segments) >= maxChain || (deltas >= minDeltaBytes && deltas > base)
		if !w.full {
			w.chain = append([]Segment(nil), last.Segments...)
		}
	}
	return w, nil
}

// Writer writes one checkpoint. Op may be called from several goroutines;
// Commit and Abort once, after every OpWriter was closed.
type Writer struct {
	s     *Store
	epoch uint64
	name  string
	full  bool
	chain []Segment // the previous chain this one extends (nil when full)
	start time.Time

	mu   sync.Mutex
	f    *os.File
	size int64
	open int   // OpWriters not closed yet
	err  error // the first write error
}

// Full reports whether this checkpoint must hold every operator's whole
// state (operators then write everything; nothing earlier is read back).
func (w *Writer) Full() bool { return w.full }

// Epoch is the checkpoint's epoch.
func (w *Writer) Epoch() uint64 { return w.epoch }

// Op returns a writer for operator id's records. Ids are the runtime's
// stable names for operators (the same after a restart); one OpWriter per
// id and checkpoint.
func (w *Writer) Op(id string) *OpWriter {
	w.mu.Lock()
	w.open++
	w.mu.Unlock()
	o := &OpWriter{w: w, id: id}
	o.buf = startPayload(nil, id)
	o.empty = len(o.buf)
	return o
}

// appendFrame writes one sealed frame: the concatenation of parts.
func (w *Writer) appendFrame(parts ...[]byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range parts {
		if w.err != nil {
			return w.err
		}
		n, err := w.f.Write(p)
		w.size += int64(n)
		if err != nil {
			w.err = fmt.Errorf("writing %s: %w", w.name, err)
		}
	}
	return w.err
}

// Commit makes the checkpoint durable with meta as its runtime record and
// returns its manifest. On error nothing is committed (the previous
// checkpoint stays the last) and the segment is removed.
func (w *Writer) Commit(meta []byte) (Manifest, error) {
	defer func() { <-w.s.sem }()
	w.mu.Lock()
	err := w.err
	if err == nil && w.open > 0 {
		err = fmt.Errorf("checkpoint %d: %d operator writers not closed", w.epoch, w.open)
	}
	size := w.size
	w.mu.Unlock()
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	m := Manifest{Epoch: w.epoch, Meta: json.RawMessage(meta)}
	m.Segments = append(w.chain, Segment{Name: w.name, Size: size})
	var data []byte
	if err == nil {
		m.Time = time.Now().UTC()
		m.Duration = time.Since(w.start)
		data, err = encodeManifest(&m)
	}
	if err == nil {
		err = writeFileSync(w.s.dir, manifestName(w.epoch), data)
	}
	s := w.s
	if err != nil {
		os.Remove(filepath.Join(s.dir, w.name))
		s.mu.Lock()
		s.failed = true
		s.mu.Unlock()
		return Manifest{}, fmt.Errorf("checkpoint %d: %w", w.epoch, err)
	}
	s.mu.Lock()
	s.prev, s.last, s.failed = s.last, &m, false
	s.mu.Unlock()
	s.removeUnreferenced(true)
	return m, nil
}

// Abort discards the checkpoint.
func (w *Writer) Abort() {
	defer func() { <-w.s.sem }()
	w.f.Close()
	os.Remove(filepath.Join(w.s.dir, w.name))
	w.s.mu.Lock()
	w.s.failed = true
	w.s.mu.Unlock()
}

// removeUnreferenced deletes manifests other than the last two and segments
// neither of them names. With inFlight, segments newer than the last
// checkpoint are left alone (a Writer may be filling one).
func (s *Store) removeUnreferenced(inFlight bool) {
	s.mu.Lock()
	keep := map[string]bool{}
	for _, m := range []*Manifest{s.last, s.prev} {
		if m == nil {
			continue
		}
		keep[manifestName(m.Epoch)] = true
		for _, seg := range m.Segments {
			keep[seg.Name] = true
		}
	}
	s.mu.Unlock()
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		s.logf("checkpoint: cleaning %s: %v", s.dir, err)
		return
	}
	for _, e := range entries {
		name := e.Name()
		_, isManifest := manifestEpoch(name)
		isSegment := strings.HasPrefix(name, segmentPrefix) && strings.HasSuffix(name, segmentSuffix)
		if (isManifest || isSegment) && !keep[name] {
			// A segment being written now is newer than both manifests:
			// leave segments of epochs after the last alone.
			if inFlight && isSegment && s.segmentInFlight(name) {
				continue
			}
			if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !os.IsNotExist(err) {
				s.logf("checkpoint: removing %s: %v", name, err)
			}
		}
	}
}

// segmentInFlight reports whether a segment file is newer than the last
// committed checkpoint (a Writer may be filling it).
func (s *Store) segmentInFlight(name string) bool {
	var epoch uint64
	if _, err := fmt.Sscanf(name, segmentPrefix+"%d"+segmentSuffix, &epoch); err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last != nil && epoch > s.last.Epoch
}

// OpWriter writes one operator's records into a checkpoint. It is used by
// one goroutine. Errors are sticky and reported by Close.
type OpWriter struct {
	w     *Writer
	id    string
	buf   []byte // the frame being built
	empty int    // len(buf) of a frame with no records
	err   error
}

// Put records key's value.
func (o *OpWriter) Put(key, value []byte) { o.add(recPut, key, value) }

// Delete records that key has no value.
func (o *OpWriter) Delete(key []byte) { o.add(recDelete, key, nil) }

// Reset records that every earlier key of this operator is gone (the
// records after it are the whole state).
func (o *OpWriter) Reset() { o.add(recReset, nil, nil) }

func (o *OpWriter) add(kind byte, key, value []byte) {
	if o.err != nil {
		return
	}
	if len(key)+len(value) > maxFrame/2 {
		o.err = fmt.Errorf("checkpoint: operator %s: a record of %d bytes is too large", o.id, len(key)+len(value))
		return
	}
	if kind == recPut && len(value) >= frameTarget {
		o.putLarge(key, value)
		return
	}
	o.buf = appendRecord(o.buf, kind, key, value)
	if len(o.buf) >= frameTarget {
		o.flush()
	}
}

// putLarge writes a record whose value is at least a frame's size as a
// frame of its own, straight from value (a sink's pending can be an
// epoch's rows: copying it into the frame buffer cost as much as writing
// it). The frame is the one flush would write.
func (o *OpWriter) putLarge(key, value []byte) {
	o.flush()
	if o.err != nil {
		return
	}
	// The record as appendRecord writes it, without the value's bytes.
	head := append(startPayload(nil, o.id), recPut)
	head = binary.AppendUvarint(head, uint64(len(key)))
	head = append(head, key...)
	head = binary.AppendUvarint(head, uint64(len(value)))
	binary.LittleEndian.PutUint32(head[0:], uint32(len(head)-frameHeaderLen+len(value)))
	crc := crc32.Update(crc32.Checksum(head[frameHeaderLen:], castagnoli), castagnoli, value)
	binary.LittleEndian.PutUint32(head[4:], crc)
	o.err = o.w.appendFrame(head, value)
}

func (o *OpWriter) flush() {
	if len(o.buf) == o.empty || o.err != nil {
		return
	}
	sealFrame(o.buf)
	o.err = o.w.appendFrame(o.buf)
	o.buf = startPayload(o.buf, o.id)
}

// Close writes what is buffered and returns the first error.
func (o *OpWriter) Close() error {
	if o.w == nil {
		return o.err
	}
	o.flush()
	w := o.w
	o.w = nil
	w.mu.Lock()
	w.open--
	w.mu.Unlock()
	return o.err
}
