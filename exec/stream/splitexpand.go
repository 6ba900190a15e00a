package stream

import (
	"fmt"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// SplitExpand is the first step of a split-distinct aggregation
// (planner/stream_splitdistinct.go, docs/contributing/parallel.md,
// "Split-distinct aggregation"): each input row goes out once per tag t
// of Args (the column of the t-th DISTINCT argument), with two columns
// appended: split_tag = t and split_bucket, a label whose vnode is the
// bucket of the row's value in Args[t]: its vnode mod SplitBuckets,
// labelled by a value whose own vnode spreads the buckets evenly over the
// instances (BucketLabel). The aggregation
// above groups by its keys plus (split_tag, split_bucket) and is routed
// by split_bucket alone, so the rows of a group spread over every
// instance in proportion to the hash of their distinct values, while all
// rows of one distinct value (of one tag) meet in one instance.
//
// Tag t's rows go out as one chunk per tag, sharing the input's columns
// (no copy); each keeps the input chunk's ops, so a retraction retracts
// the same rows and an update pair stays a pair. Watermarks pass
// through unchanged (the input's columns keep their positions). It keeps
// no state; one instance runs per goroutine (Start), fused with its
// input.
type SplitExpand struct {
	Input Node
	Args  []int // per tag, the input column of its DISTINCT argument
	// Nulls are, per tag, columns its rows carry as NULL: other tags'
	// DISTINCT arguments that no aggregate of this tag and no group key
	// reads (the partial's DISTINCT aggregates then skip them without
	// probing their pairs).
	Nulls [][]int
	Cols  []types.Column
}

// SplitBuckets is how many buckets a group's rows of one tag spread
// over: bucket b stands for vnode b*VNodes/SplitBuckets, so at a
// parallelism dividing SplitBuckets each instance owns the same number
// of buckets. Fixed (a bucket is part of the partial's group key, kept
// in checkpoints): more buckets spread a hot group finer but multiply
// the partial groups of every group, and with them the state and the
// partial rows each epoch.
const SplitBuckets = 16

// SplitTagCol and SplitBucketCol name the two appended columns.
const (
	SplitTagCol    = "split_tag"
	SplitBucketCol = "split_bucket"
)

// SplitExpandCols returns the output columns of a SplitExpand over in.
func SplitExpandCols(in []types.Column) []types.Column {
	out := append([]types.Column(nil), in...)
	return append(out, types.Column{Name: SplitTagCol, Type: types.TInt8}, types.Column{Name: SplitBucketCol, Type: types.TInt8})
}

// Columns implements Node.
func (s *SplitExpand) Columns() []types.Column { return s.Cols }

// Inputs implements Node.
func (s *SplitExpand) Inputs() []Node { return []Node{s.Input} }

// Explain implements Node.
func (s *SplitExpand) Explain() string {
	in := s.Input.Columns()
	tags := make([]string, len(s.Args))
	for t, c := range s.Args {
		tags[t] = fmt.Sprintf("%d: %s", t, in[c].Name)
	}
	return fmt.Sprintf("StreamSplitExpand: a row per DISTINCT argument (split_tag %s), split_bucket = hash of the argument (%d buckets)%s",
		strings.Join(tags, ", "), SplitBuckets, s.nullsExplain(in))
}

// checkpoints marks SplitExpand as resumable: it keeps no state.
func (s *SplitExpand) checkpoints() {}

// Start implements Node.
func (s *SplitExpand) Start(env *Env, inputs []<-chan Message) <-chan Message {
	schema := types.ArrowSchema(s.Cols)
	inCols := s.Input.Columns()
	labels := bucketLabels()
	var hasher VNodeHasher
	var vn []uint16
	return runMapEach(env, inputs[0], func(c *Chunk, emit func(*Chunk) bool) (bool, error) {
		n := c.Len()
		if n == 0 {
			return true, nil
		}
		base := c.Rec.Columns()
		for t, arg := range s.Args {
			vn = hasher.VNodes([]arrow.Array{base[arg]}, []types.T{inCols[arg].Type}, n, vn)
			tagB := array.NewInt64Builder(memory.DefaultAllocator)
			bucketB := array.NewInt64Builder(memory.DefaultAllocator)
			tagB.Reserve(n)
			bucketB.Reserve(n)
			for i := range n {
				tagB.UnsafeAppend(int64(t))
				bucketB.UnsafeAppend(labels[vn[i]%SplitBuckets*(VNodes/SplitBuckets)])
			}
			cols := make([]arrow.Array, 0, len(base)+2)
			cols = append(cols, base...)
			if t < len(s.Nulls) {
				for _, col := range s.Nulls[t] {
					cols[col] = array.MakeArrayOfNull(memory.DefaultAllocator, base[col].DataType(), n)
				}
			}
			cols = append(cols, tagB.NewArray(), bucketB.NewArray())
			tagB.Release()
			bucketB.Release()
			if !emit(&Chunk{Rec: array.NewRecordBatch(schema, cols, int64(n)), Ops: c.Ops}) {
				return false, nil
			}
		}
		return true, nil
	}, nil)
}

// bucketLabels returns, per vnode v, the smallest non-negative bigint
// whose vnode (as a one-column bigint key) is v: routed by a column of
// these labels, a row reaches exactly the vnode its label stands for.
var bucketLabels = sync.OnceValue(func() []int64 {
	labels := make([]int64, VNodes)
	found := make([]bool, VNodes)
	left := VNodes
	var h VNodeHasher
	var vn []uint16
	const batch = 1024
	for start := int64(0); left > 0; start += batch {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		for x := start; x < start+batch; x++ {
			b.Append(x)
		}
		a := b.NewArray()
		b.Release()
		vn = h.VNodes([]arrow.Array{a}, []types.T{types.TInt8}, batch, vn)
		for i, v := range vn {
			if !found[v] {
				found[v], labels[v] = true, start+int64(i)
				left--
			}
		}
		a.Release()
	}
	return labels
})

// BucketLabel is the split_bucket label of vnode v (tests).
func BucketLabel(v uint16) int64 { return bucketLabels()[v] }

// nullsExplain names the columns each tag's rows carry as NULL.
func (s *SplitExpand) nullsExplain(in []types.Column) string {
	var parts []string
	for t, cs := range s.Nulls {
		for _, c := range cs {
			parts = append(parts, fmt.Sprintf("%s NULL in tag %d", in[c].Name, t))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, ", ")
}
