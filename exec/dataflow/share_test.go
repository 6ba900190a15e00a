package dataflow

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// countedInputs is splitInputs that counts the readers opened.
type countedInputs struct {
	splitInputs
	opened atomic.Int64
}

func (in *countedInputs) OpenSourceSplit(job, oid uint32, pos []byte, split, splits int, onErr func(error)) (SourceReader, error) {
	in.opened.Add(1)
	return in.splitInputs.OpenSourceSplit(job, oid, pos, split, splits, onErr)
}

func (in *countedInputs) OpenSource(oid uint32, onErr func(error)) (RunFunc, bool, error) {
	in.opened.Add(1)
	return in.splitInputs.OpenSource(oid, onErr)
}

// Two scans of one source with a share (one reading k, the other ts and
// k, projected to k) under a union: the source is opened once per reader,
// not once per scan, each scan gets its own columns, and the union holds
// every row twice, at 1 and 3 readers. Without the share every reader is
// opened twice.
func TestSharedReadOpensOnce(t *testing.T) {
	const rows = 40
	var want []string
	for v := range int64(rows) {
		want = append(want, fmt.Sprint(v), fmt.Sprint(v))
	}
	slices.Sort(want)
	for _, n := range []int{1, 3} {
		for _, shared := range []bool{true, false} {
			in := &countedInputs{splitInputs: splitInputs{rows: rows}}
			s0 := &stream.Scan{Rel: 1, Name: "src", Kind: stream.ScanSource, Cols: tsCols, AppendOnly: true, Splittable: true, Read: []int{1}}
			s1 := &stream.Scan{Rel: 1, Name: "src", Kind: stream.ScanSource, Cols: tsCols, AppendOnly: true, Splittable: true}
			if n > 1 {
				s0.Readers, s1.Readers = n, n
			}
			if shared {
				sh := &stream.ScanShare{Scans: 2, Reads: [][]int{{1}, nil}}
				s0.Share, s1.Share, s1.ShareIdx = sh, sh, 1
			}
			cols := []types.Column{tsCols[1]}
			plan := &stream.Union{Cols: cols, Ins: []stream.Node{
				s0,
				&stream.Project{Input: s1, Exprs: []expr.Expr{&expr.ColRef{Idx: 1, T: types.TInt8, Name: "k"}}, Cols: cols},
			}}
			got := sortedRows(t, in, JobSpec{ID: 2, Name: "shared", Plan: plan, Cols: cols})
			if !slices.Equal(got, want) {
				t.Fatalf("%d readers, shared %v: %v, want %v", n, shared, got, want)
			}
			opens := int64(n)
			if !shared {
				opens *= 2
			}
			if got := in.opened.Load(); got != opens {
				t.Fatalf("%d readers, shared %v: the source was opened %d times, want %d", n, shared, got, opens)
			}
		}
	}
}

// Two equal subtrees (a filter and two aggregations over a split source,
// parSplitChain) under a union, each in a Shared of one group: the first
// is computed (its readers opened once, its aggregations' instances
// started once) and its output goes to both; the union holds every row
// twice, as when both are computed, at 1 and 3 readers and instances.
func TestSharedSubplanRunsOnce(t *testing.T) {
	for _, n := range []int{1, 3} {
		var want []string
		for _, shared := range []bool{false, true} {
			a, b := parSplitChain(n), parSplitChain(n)
			var l, r stream.Node = a.Plan, b.Plan
			if shared {
				g := &stream.SharedGroup{N: 2, ID: 1}
				l, r = &stream.Shared{Input: l, Group: g}, &stream.Shared{Input: r, Group: g, Idx: 1}
			}
			plan := &stream.Union{Cols: a.Cols, Ins: []stream.Node{l, r}}
			in := &countedInputs{splitInputs: splitInputs{rows: 25}}
			rt := newRuntime(t, in)
			j, err := rt.StartJob(JobSpec{ID: 2, Name: "subplan", Plan: plan, Cols: a.Cols})
			if err != nil {
				t.Fatal(err)
			}
			flush(t, rt)
			got := anyRows(t, j)
			aggs := 0
			for _, op := range j.Operators() {
				if op.Name == "HashAgg" {
					aggs++
				}
			}
			rt.Close()
			slices.Sort(got)
			runs := int64(2)
			if shared {
				runs = 1
			}
			if opened := in.opened.Load(); opened != runs*int64(n) || aggs != int(runs)*2*n {
				t.Fatalf("%d instances, shared %v: %d readers opened and %d aggregation instances running, want %d and %d", n, shared, opened, aggs, runs*int64(n), runs*2*int64(n))
			}
			if !shared {
				want = got
				if len(want) == 0 {
					t.Fatal("no rows")
				}
				continue
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%d instances: shared %v, computed twice %v", n, got, want)
			}
		}
	}
}

// A share's tee sends every scan the same arrays, so a routed part's
// chunk reaches none of them with its Recycle (two scans giving the
// buffers back, or one giving them back while the other reads them,
// would let the reader overwrite rows still read); with one scan the
// chunk passes as it came.
func TestTeeStripsRecycle(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, scans := range []int{1, 2} {
		j := &Job{env: stream.NewEnv(ctx, expr.Context{})}
		in := make(chan stream.Message, 1)
		outs := make([]chan stream.Message, scans)
		for k := range outs {
			outs[k] = make(chan stream.Message, 1)
		}
		c := &stream.Chunk{Rec: rec(1, 2, 3), Recycle: func(arrow.RecordBatch) {}}
		in <- stream.ChunkMsg(c)
		close(in)
		j.wg.Add(1)
		j.tee(in, outs, make([]shareView, scans))
		for k, o := range outs {
			m := <-o
			if m.Chunk.Rec != c.Rec {
				t.Fatalf("%d scans: scan %d got another batch", scans, k)
			}
			if (m.Chunk.Recycle != nil) != (scans == 1) {
				t.Fatalf("%d scans: scan %d's chunk has Recycle %v", scans, k, m.Chunk.Recycle != nil)
			}
		}
		if c.Recycle == nil {
			t.Fatal("the tee changed the chunk it was sent")
		}
	}
}
