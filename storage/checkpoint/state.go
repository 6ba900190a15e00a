package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Checkpoint is a committed checkpoint read back at recovery: its manifest
// and every operator's state. It is read-only and safe for concurrent use.
type Checkpoint struct {
	Manifest Manifest
	ops      map[string]*State
}

// State is one operator's state in a checkpoint: key/value pairs.
type State struct {
	kv    map[string][]byte
	bytes int64
}

// Op returns the state operator id wrote, or nil when it wrote none (or
// only deletes that left nothing).
func (c *Checkpoint) Op(id string) *State {
	if c == nil {
		return nil
	}
	s := c.ops[id]
	if s == nil || len(s.kv) == 0 {
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
		if len(s.kv) > 0 {
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
	return len(s.kv)
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
	v, ok := s.kv[string(key)]
	return v, ok
}

// Range calls fn for every key/value pair, in no particular order, until fn
// returns an error, which Range returns. The slices must not be modified.
func (s *State) Range(fn func(key, value []byte) error) error {
	if s == nil {
		return nil
	}
	for k, v := range s.kv {
		if err := fn([]byte(k), v); err != nil {
			return err
		}
	}
	return nil
}

// load reads m's chain into a Checkpoint, verifying every segment.
func load(dir string, m *Manifest) (*Checkpoint, error) {
	c := &Checkpoint{Manifest: *m, ops: make(map[string]*State)}
	apply := func(op string, kind byte, key, value []byte) {
		s := c.ops[op]
		if s == nil {
			s = &State{kv: make(map[string][]byte)}
			c.ops[op] = s
		}
		switch kind {
		case recReset:
			s.kv = make(map[string][]byte)
			s.bytes = 0
		case recPut:
			if old, ok := s.kv[string(key)]; ok {
				s.bytes -= int64(len(key) + len(old))
			}
			s.kv[string(key)] = value
			s.bytes += int64(len(key) + len(value))
		case recDelete:
			if old, ok := s.kv[string(key)]; ok {
				s.bytes -= int64(len(key) + len(old))
				delete(s.kv, string(key))
			}
		}
	}
	for _, seg := range m.Segments {
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
