package exec

import (
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/streamsql/streamsql/exec/membudget"
)

// Hybrid hash aggregation (PostgreSQL 13's): when a HashAgg with GROUP BY
// holds more than work_mem and the statement has a temporary directory
// (Context.TempDir), it stops creating groups. Rows of groups it already
// has keep updating them in memory; rows of other groups are written, whole
// input rows, to one of aggSpillParts partition files chosen by a hash of
// the group key (Arrow IPC files, unlinked at creation). When the input
// ends the groups in memory are complete: they are returned, their memory
// is released, and each partition is aggregated the same way, spilling
// again with other hash bits if it is still too large. Every group sees
// all its rows, in input order, in one pass, so no aggregate state is ever
// split or serialized: DISTINCT and ORDER BY aggregates give what the
// in-memory path gives. Past maxAggSpillDepth levels (keys whose own
// states pass work_mem) a partition is aggregated in memory against the
// statement's limit (53200 past it). Results come out in another order
// than the in-memory path's, which SQL leaves unspecified.

// aggSpillParts is how many partitions one spilling pass writes.
const aggSpillParts = 32

// maxAggSpillDepth bounds re-partitioning: a partition at this depth is
// aggregated in memory whatever its size.
const maxAggSpillDepth = 4

// hashAggIter is a HashAgg's execution: one pass over the input, then one
// per spilled partition, each pass's groups returned before the next pass
// starts. Used by one goroutine.
type hashAggIter struct {
	ctx      *Context
	h        *HashAgg
	in       Iterator
	acct     *membudget.Account // what the current pass keeps
	canSpill bool

	started bool
	out     []arrow.RecordBatch // the current pass's results not yet returned
	parts   []*aggPart          // partitions left to aggregate (a stack)
	spilled int                 // partitions written in all (tests)
}

// aggPart is one spilled partition: a closed Arrow IPC file of input rows.
type aggPart struct {
	f     *os.File
	depth int // the pass that aggregates it
	rows  int64
}

func (it *hashAggIter) Next() (_ arrow.RecordBatch, err error) {
	defer recoverErr(&err)
	for {
		for len(it.out) > 0 {
			b := it.out[0]
			it.out = it.out[1:]
			if b.NumRows() > 0 {
				return b, nil
			}
		}
		if !it.started {
			it.started = true
			if it.out, err = it.pass(it.in.Next, 0); err != nil {
				return nil, err
			}
			continue
		}
		if len(it.parts) == 0 {
			return nil, nil
		}
		p := it.parts[len(it.parts)-1]
		it.parts = it.parts[:len(it.parts)-1]
		// The previous pass's results are returned: its memory is free.
		it.acct.Release()
		it.out, err = it.passFile(p)
		p.f.Close()
		if err != nil {
			return nil, err
		}
	}
}

// passFile aggregates one partition.
func (it *hashAggIter) passFile(p *aggPart) ([]arrow.RecordBatch, error) {
	r, err := openPart(it.ctx, p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return it.pass(r.Next, p.depth)
}

func (it *hashAggIter) Close() error {
	it.acct.Release()
	for _, p := range it.parts {
		p.f.Close()
	}
	it.parts, it.out = nil, nil
	return it.in.Close()
}

// aggSpiller writes the rows of one pass's new groups to partitions.
type aggSpiller struct {
	ctx    *Context
	depth  int
	schema *arrow.Schema
	parts  [aggSpillParts]*aggPart
	ws     [aggSpillParts]*ipc.FileWriter
	idx    [aggSpillParts][]int32
}

// partOf picks a row's partition from its group key hash; each depth uses
// other bits, so a partition spreads again when it spills.
func partOf(hv uint64, depth int) int {
	return int(mix64(hv^uint64(depth+1)*0x9E3779B97F4A7C15) % aggSpillParts)
}

// spill writes the rows of b whose gid is -1 (no group in memory) to the
// partitions their hashes hv choose.
func (s *aggSpiller) spill(b arrow.RecordBatch, gids []int32, hv []uint64) error {
	for p := range s.idx {
		s.idx[p] = s.idx[p][:0]
	}
	any := false
	for i, g := range gids {
		if g < 0 {
			p := partOf(hv[i], s.depth)
			s.idx[p] = append(s.idx[p], int32(i))
			any = true
		}
	}
	if !any {
		return nil
	}
	if s.schema == nil {
		s.schema = b.Schema()
	}
	mem := alloc(s.ctx)
	cols := make([]arrow.Array, b.NumCols())
	for p, rows := range s.idx {
		if len(rows) == 0 {
			continue
		}
		w, err := s.writer(p)
		if err != nil {
			return err
		}
		for c := range cols {
			cols[c] = takeArray(mem, b.Column(c), rows)
		}
		rb := array.NewRecordBatch(s.schema, cols, int64(len(rows)))
		err = w.Write(rb)
		rb.Release()
		for _, c := range cols {
			c.Release()
		}
		if err != nil {
			return fmt.Errorf("exec: hash aggregate: write partition: %w", err)
		}
		s.parts[p].rows += int64(len(rows))
	}
	return nil
}

// writer returns partition p's writer, creating its file.
func (s *aggSpiller) writer(p int) (*ipc.FileWriter, error) {
	if s.ws[p] != nil {
		return s.ws[p], nil
	}
	f, err := os.CreateTemp(s.ctx.TempDir, "hashagg-*.arrow")
	if err != nil {
		return nil, fmt.Errorf("exec: hash aggregate: create temporary file: %w", err)
	}
	os.Remove(f.Name()) // open files outlive their name; a crash leaves nothing
	s.parts[p] = &aggPart{f: f, depth: s.depth + 1}
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(s.schema), ipc.WithAllocator(alloc(s.ctx)))
	if err != nil {
		return nil, fmt.Errorf("exec: hash aggregate: write partition: %w", err)
	}
	s.ws[p] = w
	return w, nil
}

// abort closes the files of a failed pass.
func (s *aggSpiller) abort() {
	for _, p := range s.parts {
		if p != nil {
			p.f.Close()
		}
	}
}

// finish closes the writers and returns the partitions written.
func (s *aggSpiller) finish() ([]*aggPart, error) {
	var out []*aggPart
	var first error
	for p, w := range s.ws {
		if w == nil {
			continue
		}
		if err := w.Close(); err != nil && first == nil {
			first = fmt.Errorf("exec: hash aggregate: write partition: %w", err)
		}
		out = append(out, s.parts[p])
	}
	if first != nil {
		for _, p := range out {
			p.f.Close()
		}
		return nil, first
	}
	return out, nil
}
