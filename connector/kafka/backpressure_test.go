package kafka

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestBackpressure: while emit blocks, the reader stops fetching (a few
// fetches ahead at most, bounded in bytes) although the topic holds far
// more; once emit goes on, everything is read.
func TestBackpressure(t *testing.T) {
	c, addr := cluster(t, 4)
	const n, size = 24000, 2048 // about 48 MiB
	pad := strings.Repeat("x", size)
	p := producer(t, addr, kgo.ProducerBatchMaxBytes(1<<20))
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, rec(int32(i%4), fmt.Sprintf(`{"id": %d, "pad": "%s"}`, i, pad)))
		if len(recs) == 1000 {
			produce(t, p, recs...)
			recs = recs[:0]
		}
	}
	var fetches, fetched atomic.Int64
	c.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fetches.Add(1)
		return nil, nil, false // observe only
	})
	s := mustOpen(t, cols(t, "id int, pad text"), map[string]string{"properties.bootstrap.server": addr, "topic": "t"}, "JSON")
	r := s.NewReader(ReaderOptions{})
	release := make(chan struct{})
	first := make(chan struct{})
	rows := 0
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		done <- r.Run(ctx, func(rec arrow.RecordBatch) error {
			if rows == 0 {
				close(first)
				<-release
			}
			rows += int(rec.NumRows())
			rec.Release()
			if rows == n {
				cancel()
			}
			return nil
		})
	}()
	<-first
	// An absence check: if the reader went on fetching, this wait lets it
	// fetch more (a correct reader can never fail here, a broken one may
	// pass only when the machine is very slow).
	time.Sleep(500 * time.Millisecond)
	fetched.Store(fetches.Load())
	if got := fetched.Load(); got > 2*maxFetches+2 {
		t.Errorf("%d fetches while emit was blocked; the topic holds %d MiB", got, n*size>>20)
	}
	close(release)
	select {
	case err := <-done:
		if err != context.Canceled || rows != n {
			t.Fatalf("Run: %v after %d rows, want %d", err, rows, n)
		}
	case <-time.After(testWait):
		t.Fatalf("%d rows of %d", rows, n)
	}
	t.Logf("%d fetches while blocked, %d in all", fetched.Load(), fetches.Load())
}
