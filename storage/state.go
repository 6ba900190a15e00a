package storage

import (
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// maxMergeRows and maxMergeBytes cap the size of a chunk built by merging
// small ones.
const (
	maxMergeRows  = 1 << 16
	maxMergeBytes = 64 << 20
)

// state is one immutable version of a table's rows. Every write builds a
// new state from the previous one, sharing the chunks it does not touch;
// nothing reachable from a published state is ever modified.
type state struct {
	chunks []Chunk  // ascending, non-overlapping row id ranges
	dead   []int    // deleted rows per chunk
	live   int64    // rows not deleted
	next   int64    // the row id the next inserted row gets
	pos    *feedPos // its place in the changelog; set once submitted (feed.go)
	meta   []byte   // the metadata of the last write that carried one (meta.go); never modified
}

// clone copies the chunk list (not the chunks) with room for one more.
func (s *state) clone() *state {
	ns := &state{live: s.live, next: s.next, meta: s.meta}
	ns.chunks = make([]Chunk, len(s.chunks), len(s.chunks)+1)
	copy(ns.chunks, s.chunks)
	ns.dead = make([]int, len(s.dead), len(s.dead)+1)
	copy(ns.dead, s.dead)
	return ns
}

// withInsert returns s plus rec's rows at row ids first, first+1, ...
func (s *state) withInsert(first int64, rec arrow.RecordBatch) *state {
	ns := s.clone()
	ns.appendChunk(Chunk{Rec: rec, FirstRowID: first}, 0)
	ns.live += rec.NumRows()
	ns.next = max(ns.next, first+rec.NumRows())
	return ns
}

// withChunk returns s plus a chunk as written by compaction (deleted rows
// included), without merging.
func (s *state) withChunk(c Chunk) *state {
	ns := s.clone()
	n := int(c.Rec.NumRows())
	dead := 0
	if c.Deleted != nil {
		dead = bitutil.CountSetBits(c.Deleted, 0, n)
	}
	if dead == n {
		return ns
	}
	ns.chunks = append(ns.chunks, c)
	ns.dead = append(ns.dead, dead)
	ns.live += int64(n - dead)
	ns.next = max(ns.next, c.FirstRowID+int64(n))
	return ns
}

// appendChunk adds c and then merges trailing chunks like a binary counter:
// while the last two chunks are adjacent, the older is no bigger than the
// newer and together they fit maxMergeRows, they become one. Single-row
// inserts thus leave O(log n) small chunks at the tail, and every row is
// copied O(log maxMergeRows) times in all; big batches are kept as they are.
func (s *state) appendChunk(c Chunk, dead int) {
	s.chunks = append(s.chunks, c)
	s.dead = append(s.dead, dead)
	for k := len(s.chunks); k >= 2; k = len(s.chunks) {
		p, l := s.chunks[k-2], s.chunks[k-1]
		pn, ln := p.Rec.NumRows(), l.Rec.NumRows()
		if p.FirstRowID+pn != l.FirstRowID || pn > ln || pn+ln > maxMergeRows ||
			recordBytes(p.Rec)+recordBytes(l.Rec) > maxMergeBytes {
			return
		}
		m, ok := mergeChunks(p, l)
		if !ok {
			return
		}
		s.chunks[k-2] = m
		s.dead[k-2] += s.dead[k-1]
		s.chunks = s.chunks[:k-1]
		s.dead = s.dead[:k-1]
	}
}

// mergeChunks concatenates two adjacent chunks; false if Arrow refuses
// (offsets overflowing int32).
func mergeChunks(p, l Chunk) (Chunk, bool) {
	ncols := int(p.Rec.NumCols())
	cols := make([]arrow.Array, ncols)
	for i := range cols {
		c, err := array.Concatenate([]arrow.Array{p.Rec.Column(i), l.Rec.Column(i)}, memory.DefaultAllocator)
		if err != nil {
			return Chunk{}, false
		}
		cols[i] = c
	}
	pn, ln := int(p.Rec.NumRows()), int(l.Rec.NumRows())
	m := Chunk{Rec: array.NewRecordBatch(p.Rec.Schema(), cols, int64(pn+ln)), FirstRowID: p.FirstRowID}
	if p.Deleted != nil || l.Deleted != nil {
		m.Deleted = make([]byte, bitutil.BytesForBits(int64(pn+ln)))
		if p.Deleted != nil {
			bitutil.CopyBitmap(p.Deleted, 0, pn, m.Deleted, 0)
		}
		if l.Deleted != nil {
			bitutil.CopyBitmap(l.Deleted, 0, ln, m.Deleted, pn)
		}
	}
	return m, true
}

// locate finds the chunk and row of a row id (deleted or not).
func (s *state) locate(id int64) (ci, row int, ok bool) {
	ci = sort.Search(len(s.chunks), func(i int) bool { return s.chunks[i].FirstRowID > id }) - 1
	if ci < 0 {
		return 0, 0, false
	}
	c := &s.chunks[ci]
	if id >= c.FirstRowID+c.Rec.NumRows() {
		return 0, 0, false
	}
	return ci, int(id - c.FirstRowID), true
}

// isLive reports whether row id exists and is not deleted; it returns its
// batch and row.
func (s *state) isLive(id int64) (arrow.RecordBatch, int, bool) {
	ci, r, ok := s.locate(id)
	if !ok {
		return nil, 0, false
	}
	c := &s.chunks[ci]
	if c.Deleted != nil && bitutil.BitIsSet(c.Deleted, r) {
		return nil, 0, false
	}
	return c.Rec, r, true
}

// rowRef names one row of a chunk's batch.
type rowRef struct {
	rec arrow.RecordBatch
	row int
	id  int64
}

// withDelete returns s minus the live rows among ids, and those rows. Chunks
// whose every row is deleted are dropped.
func (s *state) withDelete(ids []int64) (*state, []rowRef) {
	ns := s.clone()
	var refs []rowRef
	var owned []bool // chunk's bitmap is private to ns
	for _, id := range ids {
		ci, r, ok := ns.locate(id)
		if !ok {
			continue
		}
		c := &ns.chunks[ci]
		if c.Deleted != nil && bitutil.BitIsSet(c.Deleted, r) {
			continue
		}
		if owned == nil {
			owned = make([]bool, len(ns.chunks))
		}
		if !owned[ci] {
			bm := make([]byte, bitutil.BytesForBits(c.Rec.NumRows()))
			copy(bm, c.Deleted)
			c.Deleted = bm
			owned[ci] = true
		}
		bitutil.SetBit(c.Deleted, r)
		ns.dead[ci]++
		ns.live--
		refs = append(refs, rowRef{rec: c.Rec, row: r, id: id})
	}
	if refs != nil {
		ns.dropEmpty()
	}
	return ns, refs
}

// dropEmpty removes chunks whose rows are all deleted.
func (s *state) dropEmpty() {
	j := 0
	for i := range s.chunks {
		if s.dead[i] == int(s.chunks[i].Rec.NumRows()) {
			continue
		}
		s.chunks[j], s.dead[j] = s.chunks[i], s.dead[i]
		j++
	}
	clear(s.chunks[j:])
	s.chunks, s.dead = s.chunks[:j], s.dead[:j]
}

// truncated returns an empty state that keeps the row id counter.
func (s *state) truncated() *state { return &state{next: s.next, meta: s.meta} }

// snapshotChunks returns the chunk list capped so that appending to it
// copies.
func (s *state) snapshotChunks() []Chunk {
	return slices.Clip(s.chunks)
}
