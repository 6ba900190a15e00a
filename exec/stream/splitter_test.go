package stream

import (
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec"
)

// Split returns chunk c's rows per instance (nil: none), a chunk whose
// rows all go to one instance as it is: the tests' reference for what
// the exchange (Route, then Coalescer) sends each instance.
func (s *Splitter) Split(c *Chunk) []*Chunk {
	parts := make([]*Chunk, s.n)
	owner, only := s.Route(c)
	if owner == nil {
		return parts
	}
	if only >= 0 {
		parts[only] = c
		return parts
	}
	perInst := make([][]int32, s.n)
	for i, o := range owner {
		perInst[o] = append(perInst[o], int32(i))
	}
	for k, idx := range perInst {
		if len(idx) == 0 {
			continue
		}
		part := &Chunk{Rec: exec.TakeRows(memory.DefaultAllocator, c.Rec, idx)}
		if c.Ops != nil {
			part.Ops = splitOps(c.Ops, owner, idx)
		}
		parts[k] = part
	}
	return parts
}
