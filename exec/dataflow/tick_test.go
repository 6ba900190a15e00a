package dataflow

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/stream"
)

// gatedInputs are fakeInputs whose feeds block in PollTo until gate is
// closed: a job that cannot keep up with the ticker.
type gatedInputs struct {
	*fakeInputs
	gate chan struct{}
}

type gatedFeed struct {
	Feed
	gate chan struct{}
}

func (g gatedFeed) PollTo(p Position) ([]Delta, error) {
	<-g.gate
	return g.Feed.PollTo(p)
}

func (in gatedInputs) SubscribeTable(oid uint32) ([]arrow.RecordBatch, Feed, error) {
	rows, f, err := in.fakeInputs.SubscribeTable(oid)
	return rows, gatedFeed{f, in.gate}, err
}

// While a job is behind, the ticker stops starting epochs (at most
// maxTicksInFlight wait in its readers), so a FLUSH after it catches up
// waits for those few epochs, not for one per tick.
func TestTickerWaitsForSlowJobs(t *testing.T) {
	in := gatedInputs{&fakeInputs{tables: map[uint32]*fakeTable{100: {}}}, make(chan struct{})}
	rt := New(Config{BarrierInterval: time.Millisecond}, in)
	defer rt.Close()
	opened := false
	open := func() {
		if !opened {
			opened = true
			close(in.gate)
		}
	}
	defer open() // before Close: the reader must get out of PollTo
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
	j, err := rt.StartJob(JobSpec{ID: 1, Name: "v", Plan: scan, Cols: cols})
	if err != nil {
		t.Fatal(err)
	}
	pending := func() int {
		r := j.roots[0]
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.reqs)
	}
	// 50 ticks pass while the reader is stuck in its first PollTo, which
	// holds one barrier it has taken; the others wait in reqs. (Sleeping
	// only lets ticks happen; the bound holds whatever their number.)
	time.Sleep(50 * time.Millisecond)
	if n := pending(); n > maxTicksInFlight {
		t.Fatalf("%d barriers wait in front of a stuck job (at most %d expected)", n, maxTicksInFlight)
	}
	open()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rt.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}
