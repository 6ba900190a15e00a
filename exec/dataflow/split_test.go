package dataflow

import (
	"context"
	"slices"
	"testing"

	"github.com/streamsql/streamsql/exec/stream"
)

// startMerge starts a merge of n inputs the test feeds.
func startMerge(t *testing.T, n int) ([]chan stream.Message, <-chan stream.Message) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	j := &Job{env: &stream.Env{Ctx: ctx}}
	ins := make([]chan stream.Message, n)
	rd := make([]<-chan stream.Message, n)
	for i := range ins {
		ins[i] = make(chan stream.Message, 16)
		rd[i] = ins[i]
	}
	return ins, j.merge(rd)
}

// merge forwards the minimum watermark over the active readers:
// an idle reader does not hold it back, an ended one stops counting, and
// once every reader ended the maximum over all is the last watermark.
// Barriers pass once every reader delivered them; reader marks never
// leave the merge.
func TestMergeReadersWatermarks(t *testing.T) {
	ins, out := startMerge(t, 3)
	wm := func(v int64) stream.Message { return stream.WatermarkMsg(stream.Watermark{Col: 2, Value: v}) }
	var got []int64
	var barriers int
	// next reads the merge's output until a barrier.
	next := func() {
		t.Helper()
		for m := range out {
			switch m.Kind {
			case stream.KindWatermark:
				if m.Watermark.Col != 2 {
					t.Fatalf("a reader mark left the merge: %+v", m.Watermark)
				}
				got = append(got, m.Watermark.Value)
			case stream.KindBarrier:
				barriers++
				return
			}
		}
		t.Fatal("the merge closed")
	}
	barrier := func(e uint64) {
		for _, c := range ins {
			c <- stream.BarrierMsg(stream.Barrier{Epoch: e})
		}
	}
	ins[0] <- wm(10)
	ins[1] <- wm(20)
	barrier(1)
	next()
	if len(got) != 0 {
		t.Fatalf("reader 2 has no watermark yet, but %v passed", got)
	}
	ins[2] <- idleMsg(true) // no partitions: it does not count
	barrier(2)
	next()
	// One input's messages an epoch (what the merge sees from several
	// inputs within an epoch comes in any order).
	ins[0] <- wm(30)
	barrier(3)
	next()
	ins[1] <- wm(40)
	barrier(4)
	next()
	ins[0] <- doneMsg() // ended at 30: the minimum is reader 1's
	barrier(5)
	next()
	ins[2] <- idleMsg(false) // active again: its 35 cannot lower what passed (40)
	ins[2] <- wm(35)
	barrier(6)
	next()
	ins[1] <- wm(50)
	barrier(7)
	next()
	ins[1] <- doneMsg()
	barrier(8)
	next()
	ins[2] <- wm(45)
	barrier(9)
	next()
	ins[2] <- doneMsg() // all ended: the maximum, 50
	barrier(10)
	next()
	if want := []int64{10, 20, 30, 40, 45, 50}; !slices.Equal(got, want) {
		t.Fatalf("watermarks %v, want %v", got, want)
	}
	if barriers != 10 {
		t.Fatalf("%d barriers", barriers)
	}
	for _, c := range ins {
		close(c)
	}
	for range out {
	}
}

// Readers whose partitions all went idle (idle_timeout) do not hold back
// the active ones; with every reader idle the merge follows the highest
// (each idle reader's watermark moves with processing time, as a single
// reader's over all the partitions would), and a reader with rows again
// counts from then on.
func TestMergeIdleReaders(t *testing.T) {
	ins, out := startMerge(t, 2)
	wm := func(v int64) stream.Message { return stream.WatermarkMsg(stream.Watermark{Col: 0, Value: v}) }
	var got []int64
	step := func(e uint64) {
		t.Helper()
		for _, c := range ins {
			c <- stream.BarrierMsg(stream.Barrier{Epoch: e})
		}
		for m := range out {
			switch m.Kind {
			case stream.KindWatermark:
				got = append(got, m.Watermark.Value)
			case stream.KindBarrier:
				return
			}
		}
		t.Fatal("the merge closed")
	}
	ins[0] <- wm(176) // reader 0's partitions reached 00:02:56
	ins[1] <- wm(38)  // reader 1's stopped at 00:00:38
	step(1)
	ins[1] <- idleMsg(true) // reader 1's partitions went idle
	step(2)
	ins[0] <- idleMsg(true)
	ins[0] <- wm(180) // both idle, moving with processing time
	ins[1] <- wm(42)
	step(3)
	ins[1] <- idleMsg(false) // rows again on reader 1
	ins[1] <- wm(190)
	step(4)
	// (an epoch of its own: taken before reader 1's messages, both readers
	// still idle, it would pass as the highest)
	ins[0] <- wm(185)
	step(5)
	if want := []int64{38, 176, 180, 190}; !slices.Equal(got, want) {
		t.Fatalf("watermarks %v, want %v", got, want)
	}
	for _, c := range ins {
		close(c)
	}
	for range out {
	}
}
