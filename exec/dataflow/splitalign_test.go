package dataflow

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/stream"
)

// skewedInputs is an unbounded source (oid 1) of rows ts = k = 0..rows-1
// read by two readers, reader i the rows k ≡ i mod 2, in batches of 10;
// reader 0 emits its rows at once, reader 1 pauses between batches, so
// reader 0 runs far ahead of reader 1 in event time.
type skewedInputs struct {
	fakeInputs
	rows int64
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
			if split == 1 {
				time.Sleep(200 * time.Microsecond) // the skew; the test's outcome does not depend on it
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
