package stream

import (
	"container/heap"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec"
)

// JoinClean frees an inner HashJoin's state with the watermark (window
// joins: the key pair Key is window_end, or window_start): once the join's
// combined watermark on key pair Key (the minimum of both sides', see
// HashJoin.Start) reaches W, every group whose Key value is below W - Keep
// is dropped from both sides without output (no later row can match it; a
// late row starts a new group, which the next watermark frees). Key must
// be a pair of plain timestamp columns.
type JoinClean struct {
	Key  int
	Keep int64 // µs, not negative
}

// joinCleaner is the running JoinClean, owned by the join's goroutine: a
// min-heap of (value, group) for the groups with a known Key value. Heap
// entries go stale when a group is freed or renumbered (keyTable.compact);
// stale entries are skipped, and the heap is rebuilt after a compaction.
type joinCleaner struct {
	key     int
	keep    int64
	heap    cleanHeap
	lastLen int32
}

func newJoinCleaner(j *HashJoin) (*joinCleaner, error) {
	c := j.Clean
	if j.Kind != exec.InnerJoin {
		return nil, fmt.Errorf("stream: hash join state cleaning needs an inner join, not %s", joinKindNames[j.Kind])
	}
	if c.Key < 0 || c.Key >= len(j.LeftKeys) || c.Keep < 0 {
		return nil, fmt.Errorf("stream: hash join cleans on key %d (keep %d) of %d", c.Key, c.Keep, len(j.LeftKeys))
	}
	if _, _, ok := j.keyColumns(c.Key); !ok {
		return nil, fmt.Errorf("stream: hash join cleans on key %d, which is not a column on both sides", c.Key)
	}
	return &joinCleaner{key: c.Key, keep: c.Keep}, nil
}

// note records the Key value of the groups the chunk's rows created.
func (c *joinCleaner) note(k *keyTable, keys []arrow.Array, gids []int32) {
	ts, ok := keys[c.key].(*array.Timestamp)
	if !ok {
		return
	}
	for i, g := range gids {
		if g < 0 || ts.IsNull(i) {
			continue
		}
		if grp := k.groups.at(g); !grp.cleanSet {
			grp.clean, grp.cleanSet = int64(ts.Value(i)), true
			heap.Push(&c.heap, cleanItem{v: grp.clean, g: g})
		}
	}
	c.lastLen = k.groups.len()
}

// afterCompact rebuilds the heap when the key table renumbered its groups.
func (c *joinCleaner) afterCompact(k *keyTable) {
	if n := k.groups.len(); n >= c.lastLen {
		c.lastLen = n
		return
	}
	c.heap = c.heap[:0]
	for g := int32(0); g < k.groups.len(); g++ {
		if grp := k.groups.at(g); grp.used && grp.cleanSet {
			c.heap = append(c.heap, cleanItem{v: grp.clean, g: g})
		}
	}
	heap.Init(&c.heap)
	c.lastLen = k.groups.len()
}

// advance drops the groups whose Key value is below wm - Keep.
func (c *joinCleaner) advance(r *joinRun, wm int64) {
	limit := addSat(wm, -c.keep)
	for len(c.heap) > 0 && c.heap[0].v < limit {
		it := heap.Pop(&c.heap).(cleanItem)
		if it.g >= r.keys.groups.len() {
			continue
		}
		grp := r.keys.groups.at(it.g)
		if !grp.used || !grp.cleanSet || grp.clean != it.v {
			continue // stale
		}
		for s, sd := range r.sides {
			sd.dropGroup(&r.keys.groups, s, it.g)
		}
		r.keys.freeIfEmpty(it.g)
	}
}

// dropGroup forgets every row of group g held by the side (outside a chunk).
func (sd *joinSide) dropGroup(groups *paged[joinGroup], side int, g int32) {
	grp := groups.at(g)
	for e := grp.head[side]; e >= 0; {
		next := sd.entries.at(e).next
		sd.free(e)
		e = next
	}
	grp.head[side], grp.rows[side] = -1, 0
}

type cleanItem struct {
	v int64
	g int32
}

type cleanHeap []cleanItem

func (h cleanHeap) Len() int           { return len(h) }
func (h cleanHeap) Less(i, j int) bool { return h[i].v < h[j].v }
func (h cleanHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *cleanHeap) Push(x any)        { *h = append(*h, x.(cleanItem)) }
func (h *cleanHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
