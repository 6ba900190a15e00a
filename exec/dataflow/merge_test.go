package dataflow

import (
	"context"
	"slices"
	"testing"

	"github.com/streamsql/streamsql/exec/stream"
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
