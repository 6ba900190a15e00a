package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unsafe"
)

// Checkpoint is a committed checkpoint read back at recovery: its manifest
// and every operator's state. It is read-only and safe for concurrent use.
type Checkpoint struct {
	Manifest Manifest
	ops      map[string]*State
}

// State is one operator's state in a checkpoint: key/value pairs. A state
// read from a full checkpoint (a chain of one segment) is the records as
// written, in order, without a map: operators write each key at most once
// per checkpoint, so they are the state; a map is built only for a chain
// of deltas (pre-sized from the base) or on the first Get.
type State struct {
	recs  recList           // the base's records (when kv is nil), as encoded
	kv    map[string][]byte // the folded state (when built)
	once  sync.Once         // builds kv for Get from recs
	bytes int64
}

// recList is a base's put records as they are encoded in its frames:
// runs of consecutive records, which alias the frames (a record per
// struct, 48 bytes each, was most of a large recovery's load time and
// memory).
type recList struct {
	runs [][]byte
	n    int
}

// add appends rec, extending the last run when rec follows it in its frame.
func (l *recList) add(rec []byte) {
	if k := len(l.runs) - 1; k >= 0 {
		last := l.runs[k]
		if cap(last) >= len(last)+len(rec) && unsafe.SliceData(rec) == unsafe.SliceData(last[len(last):cap(last)]) {
			l.runs[k] = last[:len(last)+len(rec)]
			l.n++
			return
		}
	}
	l.runs = append(l.runs, rec)
	l.n++
}

// each calls fn for every record, in order, until fn returns an error.
func (l *recList) each(fn func(key, value []byte) error) error {
	var err error
	for _, run := range l.runs {
		werr := walkRecords(run, func(_ byte, key, value, _ []byte) {
			if err == nil {
				err = fn(key, value)
			}
		})
		if err != nil {
			return err
		}
		if werr != nil {
			return werr // cannot happen: load walked them
		}
	}
	return nil
}

// Op returns the state operator id wrote, or nil when it wrote none (or
// only deletes that left nothing).
func (c *Checkpoint) Op(id string) *State {
	if c == nil {
		return nil
	}
	s := c.ops[id]
	if s.Len() == 0 {
		return nil
	}
	return s
}

// Ops returns the ids of the operators with state, sorted.
func (c *Checkpoint) Ops() []string {
	if c == nil {
		return nil
	}
	ids := make([]string, 0, len(c.ops))
	for id, s := range c.ops {
		if s.Len() > 0 {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// Len is the number of keys.
func (s *State) Len() int {
	if s == nil {
		return 0
	}
	if s.kv != nil {
		return len(s.kv)
	}
	return s.recs.n
}

// Bytes is the size of the keys and values.
func (s *State) Bytes() int64 {
	if s == nil {
		return 0
	}
	return s.bytes
}

// Get returns the value stored under key.
func (s *State) Get(key []byte) ([]byte, bool) {
	if s == nil {
		return nil, false
	}
	s.once.Do(func() {
		if s.kv == nil {
			s.kv = s.fold()
		}
	})
	v, ok := s.kv[string(key)]
	return v, ok
}

// Range calls fn for every key/value pair, in no particular order, until fn
// returns an error, which Range returns. The slices must not be modified.
func (s *State) Range(fn func(key, value []byte) error) error {
	if s == nil {
		return nil
	}
	if s.kv == nil {
		return s.recs.each(fn)
	}
	for k, v := range s.kv {
		if err := fn(unsafe.Slice(unsafe.StringData(k), len(k)), v); err != nil {
			return err
		}
	}
	return nil
}

// aliasKey turns a key that aliases its frame (never modified or reused)
// into a map key without copying it.
func aliasKey(key []byte) string { return unsafe.String(unsafe.SliceData(key), len(key)) }

// fold turns the base's records into a map (later records win).
func (s *State) fold() map[string][]byte {
	kv := make(map[string][]byte, s.recs.n)
	_ = s.recs.each(func(key, value []byte) error {
		kv[aliasKey(key)] = value
		return nil
	})
	return kv
}

// load reads m's chain into a Checkpoint, verifying every segment: the
// base's records are kept as written, and the deltas after it are folded
// into a map built from them.
func load(dir string, m *Manifest) (*Checkpoint, error) {
	c := &Checkpoint{Manifest: *m, ops: make(map[string]*State)}
	base := true
	apply := func(op string, kind byte, key, value, rec []byte) {
		s := c.ops[op]
		if s == nil {
			s = &State{}
			c.ops[op] = s
		}
		if kind == recReset {
			s.recs, s.kv, s.bytes = recList{}, nil, 0
			if !base {
				s.kv = map[string][]byte{}
			}
			return
		}
		if s.kv == nil && (!base || kind == recDelete) {
			s.kv = s.fold()
			s.recs = recList{}
		}
		if s.kv == nil {
			s.recs.add(rec)
			s.bytes += int64(len(key) + len(value))
			return
		}
		k := aliasKey(key)
		if old, ok := s.kv[k]; ok {
			s.bytes -= int64(len(key) + len(old))
			delete(s.kv, k)
		}
		if kind == recPut {
			s.kv[k] = value
			s.bytes += int64(len(key) + len(value))
		}
	}
	for i, seg := range m.Segments {
		base = i == 0
		if err := loadSegment(filepath.Join(dir, seg.Name), seg.Size, apply); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func loadSegment(path string, size int64, apply applyFn) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: segment %s: %v", errCorrupt, filepath.Base(path), err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("checkpoint: segment %s: %w", filepath.Base(path), err)
	}
	if st.Size() != size {
		return fmt.Errorf("%w: segment %s has %d bytes, the manifest says %d", errCorrupt, filepath.Base(path), st.Size(), size)
	}
	if err := readSegment(f, size, apply); err != nil {
		return fmt.Errorf("segment %s: %w", filepath.Base(path), err)
	}
	return nil
}

// Subset returns a Checkpoint holding copies of the states of the
// operators whose id starts with prefix (one job's), with the same
// manifest: it keeps one job's state after the rest is released.
func (c *Checkpoint) Subset(prefix string) *Checkpoint {
	out := &Checkpoint{Manifest: c.Manifest, ops: map[string]*State{}}
	for id, s := range c.ops {
		if !strings.HasPrefix(id, prefix) || s.Len() == 0 {
			continue
		}
		kv := make(map[string][]byte, s.Len())
		var bytes int64
		_ = s.Range(func(key, value []byte) error {
			kv[string(key)] = append([]byte(nil), value...)
			bytes += int64(len(key) + len(value))
			return nil
		})
		out.ops[id] = &State{kv: kv, bytes: bytes}
	}
	return out
}
