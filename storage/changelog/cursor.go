package changelog

import (
	"fmt"
	"os"
)

// Cursor reads a log's committed frames of the epochs after a given one,
// in order, following appends and new segments. One goroutine at a time.
type Cursor struct {
	l     *Log
	after uint64   // frames of epochs <= after are skipped
	from  uint64   // the segment being read
	off   int64    // the next frame's offset in it
	f     *os.File // that segment, opened for reading
}

// NewCursor returns a cursor over the frames of the epochs after after,
// which must be >= From() (ErrTrimmed otherwise).
func (l *Log) NewCursor(after uint64) (*Cursor, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if after < l.segs[0].from {
		return nil, ErrTrimmed
	}
	i := len(l.segs) - 1
	for i > 0 && l.segs[i].from > after {
		i--
	}
	c := &Cursor{l: l, after: after, from: l.segs[i].from, off: headerLen}
	return c, nil
}

// locate returns the cursor's segment's visible size and the next
// segment's from (ok false: none yet); ErrTrimmed when the segment is gone.
func (c *Cursor) locate() (path string, size int64, next uint64, hasNext bool, err error) {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	if c.l.broken != nil && len(c.l.segs) > 0 && c.l.segs[0].path == "" {
		return "", 0, 0, false, c.l.broken
	}
	for i, s := range c.l.segs {
		if s.from == c.from {
			if i+1 < len(c.l.segs) {
				next, hasNext = c.l.segs[i+1].from, true
			}
			return s.path, s.size, next, hasNext, nil
		}
	}
	return "", 0, 0, false, ErrTrimmed
}

// Next returns the next committed frame; ok is false when the cursor has
// read every committed frame (call again after the next Commit).
func (c *Cursor) Next() (epoch uint64, payload []byte, ok bool, err error) {
	for {
		path, size, next, hasNext, err := c.locate()
		if err != nil {
			return 0, nil, false, err
		}
		if c.off < size {
			if c.f == nil {
				if c.f, err = os.Open(path); err != nil {
					if os.IsNotExist(err) {
						return 0, nil, false, ErrTrimmed
					}
					return 0, nil, false, fmt.Errorf("changelog: %w", err)
				}
			}
			epoch, payload, err := readFrame(c.f, c.off, size)
			if err != nil {
				return 0, nil, false, fmt.Errorf("changelog: %s at offset %d: %w", path, c.off, err)
			}
			c.off += frameHead + int64(len(payload))
			if epoch <= c.after {
				continue
			}
			return epoch, payload, true, nil
		}
		if !hasNext {
			return 0, nil, false, nil
		}
		if c.f != nil {
			c.f.Close()
			c.f = nil
		}
		c.from, c.off = next, headerLen
	}
}

// Close releases the cursor's file.
func (c *Cursor) Close() {
	if c.f != nil {
		c.f.Close()
		c.f = nil
	}
}
