package dataflow

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/stream"
)

// skewedInputs is an unbounded source (oid 1) of rows ts = k = 0..rows-1
// read by two readers, reader i the rows k ≡ i mod 2, in batches of 10;
// reader 0 emits its rows at once, reader 1 pauses between batches, so
// reader 0, left alone, runs far ahead of reader 1 in event time. Each
// reader records the largest ts it has handed on (ahead: reader 0's
// largest lead over reader 1).
type skewedInputs struct {
	fakeInputs
	rows  int64
	mu    sync.Mutex
	sent  [2]int64
	ahead int64
}

func (in *skewedInputs) OpenSourceSplit(_, _ uint32, _ []byte, split, splits int, _ func(error)) (SourceReader, error) {
	run := func(ctx context.Context, emit func(arrow.RecordBatch) error) error {
		for b := int64(split); b < in.rows; b += int64(splits) * 10 {
			var ts []int64
			for v := b; v < min(b+int64(splits)*10, in.rows); v += int64(splits) {
				ts = append(ts, v)
			}
			if err := emit(tsRec(ts...)); err != nil {
				return err
			}
			in.mu.Lock()
			in.sent[split] = ts[len(ts)-1]
			if split == 0 {
				in.ahead = max(in.ahead, in.sent[0]-in.sent[1])
			}
			in.mu.Unlock()
			if split == 1 {
				time.Sleep(200 * time.Microsecond) // the skew; the rows and their order do not depend on it
			}
		}
		<-ctx.Done() // unbounded: FLUSH's barrier does not wait for an end
		return ctx.Err()
	}
	return SourceReader{Run: run}, nil
}

func (in *skewedInputs) OpenSource(oid uint32, onErr func(error)) (RunFunc, bool, error) {
	r, err := in.OpenSourceSplit(0, oid, nil, 0, 1, onErr)
	return r.Run, false, err
}

// TestSplitReadersCutTogether: the two readers of a split source cut each
// epoch at the same event time (up to a batch), however far one runs
// ahead of the other, so an epoch holds the same span of event time from
// each (splitalign.go). Without the alignment the first epoch holds all
// of reader 0's rows and few of reader 1's.
func TestSplitReadersCutTogether(t *testing.T) {
	const rows = 2000
	rt := newRuntime(t, &skewedInputs{rows: rows})
	scan := &stream.Scan{Rel: 1, Name: "src", Kind: stream.ScanSource, Cols: tsCols, AppendOnly: true,
		Watermark: &stream.ScanWatermark{Col: 0, Expr: minus(1)}, Splittable: true, Readers: 2}
	j, err := rt.StartJob(JobSpec{ID: 2, Name: "skewed", Plan: scan, Cols: tsCols})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for epoch := 1; ; epoch++ {
		flush(t, rt)
		last := [2]int64{-1, -1}
		n := 0
		for _, r := range anyRows(t, j) {
			f := strings.Fields(r)
			k, err := strconv.ParseInt(f[len(f)-1], 10, 64)
			if err != nil {
				t.Fatalf("row %q: %v", r, err)
			}
			last[k%2] = max(last[k%2], k)
			n++
		}
		if d := last[0] - last[1]; d > 2*10*2 || d < -2*10*2 {
			t.Fatalf("epoch %d: reader 0 cut at %d, reader 1 at %d (%d rows): not the same event time", epoch, last[0], last[1], n)
		}
		if n == rows {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d rows after %d epochs", n, rows, epoch)
		}
	}
}

// TestAlignerHoldsTheReaderAhead: a reader ahead of another that has not
// ended waits until that one's mark reaches it, or that one ends; the
// reader behind never waits.
func TestAlignerHoldsTheReaderAhead(t *testing.T) {
	sa := newSplitAlign(3)
	a, b, c := &aligner{a: sa, i: 0}, &aligner{a: sa, i: 1}, &aligner{a: sa, i: 2}
	defer a.stop()
	defer b.stop()
	waits := func(al *aligner, wm int64) bool {
		_, _, hold := al.hold(wm)
		return hold
	}
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	if waits(a, math.MinInt64) {
		t.Fatal("a reader with no watermark yet waits")
	}
	a.sent(100)
	moved, late, hold := a.hold(100)
	if !hold || moved == nil || late == nil {
		t.Fatal("reader 0 at 100 does not wait for readers 1 and 2, which sent nothing")
	}
	b.sent(150)
	if !closed(moved) {
		t.Fatal("reader 1's step does not wake the reader waiting")
	}
	if !waits(a, 100) || !waits(b, 150) {
		t.Fatal("readers 0 (at 100) and 1 (at 150) do not wait for reader 2, which sent nothing")
	}
	c.sent(100)
	if waits(a, 100) {
		t.Fatal("reader 0 waits although no reader is behind it")
	}
	moved, _, hold = b.hold(150)
	if !hold {
		t.Fatal("reader 1 at 150 does not wait for readers 0 and 2 at 100")
	}
	sa.end(0)
	if !closed(moved) {
		t.Fatal("reader 0's end does not wake the reader waiting")
	}
	if !waits(b, 150) {
		t.Fatal("reader 1 does not wait for reader 2, which has not ended")
	}
	sa.end(2)
	if waits(b, 150) {
		t.Fatal("reader 1 waits for readers that ended")
	}
}

// TestAlignerWaitIsBounded: a reader waits for the others at most
// driftMaxWait, then sends its step.
func TestAlignerWaitIsBounded(t *testing.T) {
	sa := newSplitAlign(2)
	a := &aligner{a: sa, i: 0}
	defer a.stop()
	a.sent(100)
	_, late, hold := a.hold(100)
	if !hold {
		t.Fatal("reader 0 does not wait for reader 1")
	}
	<-late
	if _, _, hold := a.hold(100); hold {
		t.Fatal("reader 0 still waits after driftMaxWait")
	}
	a.sent(200)
	if _, _, hold := a.hold(200); !hold {
		t.Fatal("after a step, reader 0 does not wait again")
	}
}

// TestAlignerAllowsDriftSteps: a reader may run up to driftSteps of its
// own steps of event time ahead of another before it waits, and waits
// past that.
func TestAlignerAllowsDriftSteps(t *testing.T) {
	sa := newSplitAlign(2)
	a, b := &aligner{a: sa, i: 0}, &aligner{a: sa, i: 1}
	defer a.stop()
	defer b.stop()
	b.sent(100)
	a.sent(100) // its first step: no span known yet
	const span = 10
	for wm := int64(100 + span); wm <= 100+driftSteps*span; wm += span {
		a.sent(wm)
		if _, _, hold := a.hold(wm); hold {
			t.Fatalf("reader 0 at %d waits, %d steps of %d ahead of reader 1 at 100", wm, (wm-100)/span, span)
		}
	}
	wm := int64(100 + (driftSteps+1)*span)
	a.sent(wm)
	moved, _, hold := a.hold(wm)
	if !hold {
		t.Fatalf("reader 0 at %d does not wait, %d steps ahead of reader 1 at 100", wm, driftSteps+1)
	}
	b.sent(wm - driftSteps*span)
	select {
	case <-moved:
	default:
		t.Fatal("reader 1's step does not wake reader 0")
	}
	if _, _, hold := a.hold(wm); hold {
		t.Fatal("reader 0 still waits once reader 1 is within the drift")
	}
}

// TestAlignerDriftWithoutWatermark: a step sent with no watermark yet
// gives no span (the next step's distance from MinInt64 would overflow
// the allowance), and the floor never passes MinInt64.
func TestAlignerDriftWithoutWatermark(t *testing.T) {
	sa := newSplitAlign(2)
	a, b := &aligner{a: sa, i: 0}, &aligner{a: sa, i: 1}
	defer a.stop()
	defer b.stop()
	b.sent(50)
	a.sent(math.MinInt64)
	a.sent(100)
	if _, _, hold := a.hold(100); !hold {
		t.Fatal("reader 0 at 100, after a step without a watermark, does not wait for reader 1 at 50")
	}
	if a.span != 0 {
		t.Fatalf("span %d after a step without a watermark", a.span)
	}
	a.span = math.MaxInt64 / 2
	if f := a.floor(100); f != math.MinInt64 {
		t.Fatalf("floor %d for a span past the range", f)
	}
	a.span = 10
	if f := a.floor(math.MinInt64 + 5); f != math.MinInt64 {
		t.Fatalf("floor %d below MinInt64's neighbourhood", f)
	}
	if f := a.floor(1000); f != 1000-driftSteps*10 {
		t.Fatalf("floor %d, want %d", f, 1000-driftSteps*10)
	}
}

// TestSplitReadersStepTogether: between barriers too, the reader of a
// split source that is more than driftSteps steps ahead waits for the
// one behind, so neither gets more than a few steps past that
// (splitalign.go); left alone, reader 0 runs hundreds of rows ahead
// (skewedInputs).
func TestSplitReadersStepTogether(t *testing.T) {
	const rows = 2000
	in := &skewedInputs{rows: rows}
	rt := newRuntime(t, in)
	scan := &stream.Scan{Rel: 1, Name: "src", Kind: stream.ScanSource, Cols: tsCols, AppendOnly: true,
		Watermark: &stream.ScanWatermark{Col: 0, Expr: minus(1)}, Splittable: true, Readers: 2}
	j, err := rt.StartJob(JobSpec{ID: 2, Name: "skewed", Plan: scan, Cols: tsCols})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		flush(t, rt)
		if n := len(anyRows(t, j)); n == rows {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the rows did not all arrive")
		}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	// A reader may send driftSteps steps past the other's mark, its
	// producer is up to two steps past what it sent (one in the hand-over
	// channel, one being emitted), and a wait longer than driftMaxWait (a
	// very slow machine) lets one more step pass: driftSteps+6 steps of
	// 20 rows is ample (measured: 199 rows, 219 under -race), and far
	// below the lead without.
	if in.ahead > (driftSteps+6)*20 {
		t.Fatalf("reader 0 ran %d rows of event time ahead of reader 1", in.ahead)
	}
	t.Logf("reader 0's largest lead: %d", in.ahead)
}

// A reader of a scan kept behind another (stream.Scan.Behind) waits while
// it is ahead of a reader of the lead scan that has not ended, and not
// while it holds a barrier; the lead's readers never wait for it.
func TestAlignerFollowsTheLead(t *testing.T) {
	lead, own := newSplitAlign(2), newSplitAlign(2)
	f := &aligner{a: own, i: 0, lead: lead}
	own.mark(1, 1000) // its sibling, far ahead: never the reason it waits
	l0, l1 := &aligner{a: lead, i: 0}, &aligner{a: lead, i: 1}
	defer f.stop()
	defer l0.stop()
	defer l1.stop()
	f.sent(100)
	moved, _, hold := f.hold(100)
	if !hold || moved == nil {
		t.Fatal("the reader kept behind, at 100, does not wait for the lead's readers, which sent nothing")
	}
	l0.sent(200)
	if _, _, hold := f.hold(100); !hold {
		t.Fatal("the reader kept behind, at 100, does not wait for lead reader 1, which sent nothing")
	}
	l1.sent(90)
	if _, _, hold := f.hold(100); !hold {
		t.Fatal("the reader kept behind, at 100, does not wait for lead reader 1 at 90")
	}
	if _, _, hold := l1.hold(90); hold {
		t.Fatal("lead reader 1, furthest behind, waits")
	}
	l1.sent(100)
	if _, _, hold := f.hold(100); hold {
		t.Fatal("the reader kept behind waits although it is not ahead of the lead's readers")
	}
	f.sent(300)
	if _, _, hold := f.hold(300); !hold {
		t.Fatal("the reader kept behind, at 300, does not wait for the lead's readers at 200 and 100")
	}
	if sent := f.take([]barrierReq{{epoch: 1}}, 300); len(sent) != 0 || !f.blocked() {
		t.Fatal("the barrier is not held for the sibling's registration")
	}
	if _, _, hold := f.hold(300); hold {
		t.Fatal("the reader kept behind waits for the lead while it holds a barrier")
	}
	f.all()
	lead.end(1)
	if _, _, hold := f.hold(300); !hold {
		t.Fatal("the reader kept behind, at 300, does not wait for lead reader 0 at 200")
	}
	lead.end(0)
	if _, _, hold := f.hold(300); hold {
		t.Fatal("the reader kept behind waits for lead readers that ended")
	}
	if _, _, hold := l0.hold(200); hold {
		t.Fatal("a lead reader waits for the reader kept behind")
	}
}
