package dataflow

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// colInputs is splitInputs whose readers build only the columns they are
// asked for (ColumnInputs); asked records each reader's columns.
type colInputs struct {
	splitInputs
	mu    sync.Mutex
	asked [][]int
}

func (in *colInputs) OpenSourceColumns(job, oid uint32, cols []int, pos []byte, split, splits int, onErr func(error)) (SourceReader, error) {
	in.mu.Lock()
	in.asked = append(in.asked, cols)
	in.mu.Unlock()
	sr, err := in.OpenSourceSplit(job, oid, pos, split, splits, onErr)
	run := sr.Run
	sr.Run = func(ctx context.Context, emit func(arrow.RecordBatch) error) error {
		return run(ctx, func(rec arrow.RecordBatch) error {
			var fields []arrow.Field
			var arrs []arrow.Array
			for _, c := range cols {
				fields = append(fields, rec.Schema().Field(c))
				arrs = append(arrs, rec.Column(c))
			}
			return emit(array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, rec.NumRows()))
		})
	}
	return sr, err
}

// sortedRows runs spec over in until FLUSH and returns its rows, sorted.
func sortedRows(t *testing.T, in Inputs, spec JobSpec) []string {
	t.Helper()
	rt := newRuntime(t, in)
	j, err := rt.StartJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	flush(t, rt)
	got := anyRows(t, j)
	rt.Close()
	slices.Sort(got)
	return got
}

// A source scan with Read emits only those columns, at 1 and 3 readers:
// through ColumnInputs its readers are asked for them, through other
// Inputs the runtime drops the others; the view's rows are the same.
func TestScanReadColumns(t *testing.T) {
	const rows = 25
	var want []string
	for v := range int64(rows) {
		want = append(want, fmt.Sprint(v))
	}
	slices.Sort(want)
	for _, n := range []int{1, 3} {
		for _, ci := range []bool{false, true} {
			var in Inputs = &splitInputs{rows: rows}
			cin := &colInputs{splitInputs: splitInputs{rows: rows}}
			if ci {
				in = cin
			}
			scan := &stream.Scan{Rel: 1, Name: "src", Kind: stream.ScanSource, Cols: tsCols, AppendOnly: true, Splittable: true, Read: []int{1}}
			if n > 1 {
				scan.Readers = n
			}
			got := sortedRows(t, in, JobSpec{ID: 2, Name: "pruned", Plan: scan, Cols: []types.Column{tsCols[1]}})
			if !slices.Equal(got, want) {
				t.Fatalf("%d readers, ColumnInputs %v: %v, want %v", n, ci, got, want)
			}
			if ci && (len(cin.asked) != n || !slices.Equal(cin.asked[0], []int{1})) {
				t.Fatalf("%d readers were asked for columns %v", n, cin.asked)
			}
		}
	}
}
