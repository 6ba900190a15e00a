package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
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
	recs  recList           // the base's records (when kv is nil)
	kv    map[string][]byte // the folded state (when built)
	once  sync.Once         // builds kv for Get from recs
	bytes int64
}

type record struct{ key, value []byte }

// recList is records in chunks that double up to recChunk: appending
// never copies the records already read (one slice grown by append copied
// a large state's records over and over, most of a recovery's load time),
// and a small state takes little room.
type recList struct {
	chunks [][]record
	n      int
}

const recChunk = 8192

func (l *recList) add(r record) {
	if k := len(l.chunks); k == 0 || len(l.chunks[k-1]) == recChunk {
		l.chunks = append(l.chunks, make([]record, 0, min(max(l.n, 16), recChunk)))
	}
	l.chunks[len(l.chunks)-1] = append(l.chunks[len(l.chunks)-1], r)
	l.n++
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
		for _, c := range s.recs.chunks {
			for _, r := range c {
				if err := fn(r.key, r.value); err != nil {
					return err
				}
			}
		}
		return nil
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
	for _, c := range s.recs.chunks {
		for _, r := range c {
			kv[aliasKey(r.key)] = r.value
		}
	}
	return kv
}

// load reads m's chain into a Checkpoint, verifying every segment: the
// base's records are kept as written, and the deltas after it are folded
// into a map built from them.
func load(dir string, m *Manifest) (*Checkpoint, error) {
	c := &Checkpoint{Manifest: *m, ops: make(map[string]*State)}
	base := true
	apply := func(op string, kind byte, key, value []byte) {
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
			s.recs.add(record{key, value})
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
