package dataflow

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// mergeOrder runs a merge over inputs already holding their messages
// (then closed) and returns the first value of each chunk it sends, in
// order.
func mergeOrder(t *testing.T, inputs [][]stream.Message) []int64 {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	j := &Job{env: &stream.Env{Ctx: ctx}}
	var rd []<-chan stream.Message
	for _, msgs := range inputs {
		c := make(chan stream.Message, len(msgs))
		for _, m := range msgs {
			c <- m
		}
		close(c)
		rd = append(rd, c)
	}
	var got []int64
	for m := range j.merge(rd) {
		if m.Kind == stream.KindChunk {
			got = append(got, m.Chunk.Rec.Column(0).(interface{ Value(int) int64 }).Value(0))
		}
	}
	return got
}

func chunkOf(v int64, rows int) stream.Message {
	vals := make([]int64, rows)
	for i := range vals {
		vals[i] = v
	}
	return stream.ChunkMsg(&stream.Chunk{Rec: rec(vals...)})
}

// With rows ready on several inputs the merge takes the one furthest
// behind in event time: the input whose watermark is lower goes first.
func TestMergeTakesTheLaggingInputFirst(t *testing.T) {
	wm := func(v int64) stream.Message { return stream.WatermarkMsg(stream.Watermark{Col: 0, Value: v}) }
	ahead := []stream.Message{wm(100), chunkOf(1, 1), chunkOf(2, 1), chunkOf(3, 1)}
	behind := []stream.Message{wm(10), chunkOf(11, 1), chunkOf(12, 1), chunkOf(13, 1)}
	got := mergeOrder(t, [][]stream.Message{ahead, behind})
	if want := []int64{11, 12, 13, 1, 2, 3}; !slices.Equal(got, want) {
		t.Fatalf("chunks in order %v, want %v", got, want)
	}
}

// Without watermarks the merge balances the rows taken from each input.
func TestMergeBalancesRowsWithoutWatermarks(t *testing.T) {
	a := []stream.Message{chunkOf(1, 10), chunkOf(2, 10), chunkOf(3, 10)}
	b := []stream.Message{chunkOf(11, 10), chunkOf(12, 10), chunkOf(13, 10)}
	got := mergeOrder(t, [][]stream.Message{a, b})
	if want := []int64{1, 11, 2, 12, 3, 13}; !slices.Equal(got, want) {
		t.Fatalf("chunks in order %v, want %v", got, want)
	}
}

// An input that stays ahead is still served: never passed over more than
// mergeMaxSkip times in a row.
func TestMergeStarvesNoInput(t *testing.T) {
	wm := func(v int64) stream.Message { return stream.WatermarkMsg(stream.Watermark{Col: 0, Value: v}) }
	ahead := []stream.Message{wm(100)}
	behind := []stream.Message{wm(10)}
	for i := range 3 * mergeMaxSkip {
		ahead = append(ahead, chunkOf(int64(1000+i), 1))
		behind = append(behind, chunkOf(int64(i), 1))
	}
	got := mergeOrder(t, [][]stream.Message{ahead, behind})
	if got[mergeMaxSkip] < 1000 {
		t.Fatalf("input 0 waited past %d chunks of input 1: %v", mergeMaxSkip, got)
	}
}

// A hash exchange gathers each instance's parts into chunks as large as
// its input's, sends them before a barrier, and loses no row.
func TestExchangeGathersParts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	j := &Job{env: &stream.Env{Ctx: ctx}}
	in := make(chan stream.Message, 16)
	const chunks, rows = 8, 100
	for c := range chunks {
		vals := make([]int64, rows)
		for i := range vals {
			vals[i] = int64(c*rows + i)
		}
		in <- stream.ChunkMsg(&stream.Chunk{Rec: rec(vals...)})
	}
	in <- stream.BarrierMsg(stream.Barrier{Epoch: 1})
	close(in)
	outs := j.exchange(in, []int{0}, []types.T{types.TInt8}, 2, nil, nil)
	total := 0
	for k, out := range outs {
		var sizes []int
		barrier := false
		for m := range out {
			switch m.Kind {
			case stream.KindChunk:
				if barrier {
					t.Fatalf("instance %d: rows after the barrier", k)
				}
				sizes = append(sizes, m.Chunk.Len())
				total += m.Chunk.Len()
			case stream.KindBarrier:
				barrier = true
			}
		}
		if !barrier {
			t.Fatalf("instance %d got no barrier", k)
		}
		// about half of each input chunk: gathered, all but the last
		// chunk before the barrier hold at least an input chunk's rows
		for i, n := range sizes[:len(sizes)-1] {
			if n < rows {
				t.Fatalf("instance %d: chunk %d of %d rows (sizes %v), want at least %d", k, i, n, sizes, rows)
			}
		}
		if len(sizes) > chunks/2+1 {
			t.Fatalf("instance %d: %d chunks %v for %d input chunks", k, len(sizes), sizes, chunks)
		}
	}
	if total != chunks*rows {
		t.Fatalf("%d rows out of %d", total, chunks*rows)
	}
}

// A hash exchange gathers parts across the watermark after every chunk (a
// source's stream): the watermark is held behind the gathered rows and
// passes only rows that are not late for it; a late chunk sends the
// gathered rows and the watermark first.
func TestExchangeGathersAcrossWatermarks(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	j := &Job{env: &stream.Env{Ctx: ctx}}
	in := make(chan stream.Message, 32)
	const chunks, rows, delay, base = 8, 100, 50, 1000
	for c := range chunks {
		var ts []int64
		for i := range rows {
			ts = append(ts, int64(base+c*rows+i))
		}
		in <- stream.ChunkMsg(&stream.Chunk{Rec: tsRec(ts...)})
		in <- stream.WatermarkMsg(stream.Watermark{Col: 0, Value: int64(base + c*rows + rows - 1 - delay)})
	}
	lastWM := int64(base + (chunks-1)*rows + rows - 1 - delay)
	in <- stream.ChunkMsg(&stream.Chunk{Rec: tsRec(10, 11, 12, 13)}) // late for the last watermark
	in <- stream.BarrierMsg(stream.Barrier{Epoch: 1})
	close(in)
	outs := j.exchange(in, []int{1}, []types.T{types.TInt8}, 2, nil, nil)
	got := drainAll(outs)
	total := 0
	for k := range outs {
		wm := int64(-1)
		msgs := 0
		for _, m := range got[k] {
			switch m.Kind {
			case stream.KindWatermark:
				if m.Watermark.Value <= wm {
					t.Fatalf("instance %d: watermark %d after %d", k, m.Watermark.Value, wm)
				}
				wm = m.Watermark.Value
			case stream.KindChunk:
				msgs++
				for _, v := range m.Chunk.Rec.Column(1).(*array.Int64).Int64Values() {
					total++
					if v < base { // the late rows came after every watermark
						if wm != lastWM {
							t.Fatalf("instance %d: late row %d passed watermark %d (at %d)", k, v, lastWM, wm)
						}
						continue
					}
					// row v came before the watermark of its chunk
					if before := base + (v-base)/rows*rows + rows - 1 - delay; wm >= before {
						t.Fatalf("instance %d: row %d after watermark %d, which it came before", k, v, wm)
					}
				}
			}
		}
		if wm != lastWM {
			t.Fatalf("instance %d: last watermark %d, want %d", k, wm, lastWM)
		}
		if msgs > chunks/2+2 {
			t.Fatalf("instance %d: %d chunks for %d input chunks: not gathered across the watermarks", k, msgs, chunks)
		}
	}
	if want := chunks*rows + 4; total != want {
		t.Fatalf("%d rows out of %d", total, want)
	}
}

// drainAll reads every output to its end, each on a goroutine of its own
// (an exchange blocks on a full output), and returns their messages.
func drainAll(outs []<-chan stream.Message) [][]stream.Message {
	got := make([][]stream.Message, len(outs))
	var wg sync.WaitGroup
	for k, out := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range out {
				got[k] = append(got[k], m)
			}
		}()
	}
	wg.Wait()
	return got
}
