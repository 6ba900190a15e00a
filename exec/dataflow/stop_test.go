package dataflow

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/streamsql/streamsql/exec/stream"
)

// TestCloseLogsNoFailure: closing the runtime (a clean server stop) stops
// views over views without logging them as failed because the view they
// read stopped first.
func TestCloseLogsNoFailure(t *testing.T) {
	for i := 0; i < 20; i++ {
		var mu sync.Mutex
		var logs []string
		logf := func(format string, args ...any) {
			mu.Lock()
			logs = append(logs, fmt.Sprintf(format, args...))
			mu.Unlock()
		}
		tbl := &fakeTable{rows: []int64{1, 2, 3}}
		rt := New(Config{BarrierInterval: -1, Logf: logf}, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
		scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
		specs := []JobSpec{{ID: 1, Name: "v1", Plan: scan, Cols: cols}}
		for id := uint32(2); id <= 6; id++ {
			up := &stream.Scan{Rel: id - 1, Name: fmt.Sprint("v", id-1), Kind: stream.ScanView, Cols: cols}
			specs = append(specs, JobSpec{ID: id, Name: fmt.Sprint("v", id), Plan: up, Cols: cols})
		}
		for _, s := range specs {
			if _, err := rt.StartJob(s); err != nil {
				t.Fatal(err)
			}
		}
		flush(t, rt)
		rt.Close()
		mu.Lock()
		for _, l := range logs {
			if strings.Contains(l, "failed") {
				t.Fatalf("close logged: %s", l)
			}
		}
		mu.Unlock()
	}
}
