package kafka

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/connector/internal/position"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// testWait bounds how long a test waits for the reader to see something
// (a hang fails the test rather than the whole package).
const testWait = 20 * time.Second

// cols parses "name type, name type, ..." (types without commas).
func cols(t testing.TB, spec string) []types.Column {
	t.Helper()
	var out []types.Column
	for _, part := range strings.Split(spec, ",") {
		name, typ, _ := strings.Cut(strings.TrimSpace(part), " ")
		ty, err := types.ParseTypeString(typ)
		if err != nil {
			t.Fatalf("type %q: %v", typ, err)
		}
		out = append(out, types.Column{Name: name, Type: ty})
	}
	return out
}

// cluster starts an in-process broker with topic "t" of n partitions.
func cluster(t testing.TB, n int32, opts ...kfake.Opt) (*kfake.Cluster, string) {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(n, "t")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, c.ListenAddrs()[0]
}

// producer is a client writing to addr (manual partitioning: each
// record's Partition is where it goes).
func producer(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DefaultProduceTopic("t")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func produce(t testing.TB, cl *kgo.Client, recs ...*kgo.Record) {
	t.Helper()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// rec is a record of value v for partition p.
func rec(p int32, v string) *kgo.Record { return &kgo.Record{Partition: p, Value: []byte(v)} }

func mustOpen(t testing.TB, c []types.Column, opts map[string]string, format string) *Source {
	t.Helper()
	s, err := Open(c, opts, format)
	if err != nil {
		t.Fatalf("Open(%v, %q): %v", opts, format, err)
	}
	return s
}

// rowText renders row i of rec as "v1|v2|..." with NULL for nulls.
func rowText(rec arrow.RecordBatch, c []types.Column, i int) string {
	parts := make([]string, len(c))
	for j := range c {
		v := types.ValueAt(rec.Column(j), i, c[j].Type)
		if v == nil {
			parts[j] = "NULL"
		} else {
			parts[j] = types.FormatText(v, c[j].Type, nil)
		}
	}
	return strings.Join(parts, "|")
}

// run is a reader running on its own goroutine, its rows and positions
// collected.
type run struct {
	t      testing.TB
	r      *Reader
	cancel context.CancelFunc
	done   chan struct{} // closed when Run returned err
	err    error
	once   sync.Once

	mu    sync.Mutex
	rows  []string
	pos   [][]byte // Position after each batch
	nrows []int    // rows so far after each batch
	parts []int32  // Partition of each batch
	errs  []error
	more  chan struct{} // signaled after each batch or error
	block chan struct{} // if not nil, emit waits on it
}

// start runs a reader of s at pos (nil: the start).
func start(t testing.TB, s *Source, pos []byte) *run {
	t.Helper()
	return startWith(t, s, pos, ReaderOptions{})
}

// startWith is start with the reader's options o (its Errors collected).
func startWith(t testing.TB, s *Source, pos []byte, o ReaderOptions) *run {
	t.Helper()
	ru := &run{t: t, done: make(chan struct{}), more: make(chan struct{}, 1)}
	o.Errors = func(err error) {
		ru.mu.Lock()
		ru.errs = append(ru.errs, err)
		ru.mu.Unlock()
		ru.signal()
	}
	ru.r = s.NewReader(o)
	if err := ru.r.Seek(pos); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ru.cancel = cancel
	go func() {
		defer close(ru.done)
		ru.err = ru.r.Run(ctx, func(rec arrow.RecordBatch) error {
			defer rec.Release()
			if !rec.Schema().Equal(s.dec.Arrow()) {
				return fmt.Errorf("batch schema %v", rec.Schema())
			}
			if rec.NumRows() == 0 {
				return fmt.Errorf("empty batch")
			}
			ru.mu.Lock()
			for i := range int(rec.NumRows()) {
				ru.rows = append(ru.rows, rowText(rec, s.cols, i))
			}
			ru.pos = append(ru.pos, ru.r.Position())
			ru.nrows = append(ru.nrows, len(ru.rows))
			ru.parts = append(ru.parts, ru.r.Partition())
			ru.mu.Unlock()
			ru.signal()
			return nil
		})
	}()
	t.Cleanup(func() { ru.stop() })
	return ru
}

func (ru *run) signal() {
	select {
	case ru.more <- struct{}{}:
	default:
	}
}

// wait waits until cond holds over the rows and errors so far.
func (ru *run) wait(what string, cond func(rows []string, errs []error) bool) {
	ru.t.Helper()
	deadline := time.After(testWait)
	for {
		ru.mu.Lock()
		ok := cond(ru.rows, ru.errs)
		n, ne := len(ru.rows), len(ru.errs)
		ru.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ru.more:
		case <-ru.done:
			ru.t.Fatalf("waiting for %s: Run returned %v", what, ru.err)
		case <-deadline:
			ru.t.Fatalf("waiting for %s: %d rows, %d errors, status %+v", what, n, ne, ru.r.Status())
		}
	}
}

// waitStatus polls the reader's status until cond holds.
func (ru *run) waitStatus(what string, cond func(Status) bool) {
	ru.t.Helper()
	deadline := time.After(testWait)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond(ru.r.Status()) {
		select {
		case <-tick.C:
		case <-deadline:
			ru.t.Fatalf("waiting for %s: status %+v", what, ru.r.Status())
		}
	}
}

// waitRows waits for at least n rows.
func (ru *run) waitRows(n int) {
	ru.t.Helper()
	ru.wait(fmt.Sprintf("%d rows", n), func(rows []string, _ []error) bool { return len(rows) >= n })
}

// stop cancels the reader and waits for Run, which must return
// context.Canceled.
func (ru *run) stop() {
	ru.once.Do(func() {
		ru.cancel()
		<-ru.done
		if ru.err != context.Canceled {
			ru.t.Errorf("Run returned %v, want context.Canceled", ru.err)
		}
	})
}

func (ru *run) snapshot() (rows []string, pos [][]byte, nrows []int, errs []error) {
	ru.mu.Lock()
	defer ru.mu.Unlock()
	return append([]string(nil), ru.rows...), append([][]byte(nil), ru.pos...), append([]int(nil), ru.nrows...), append([]error(nil), ru.errs...)
}

func wantCode(t *testing.T, err error, code pgerr.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", code)
	}
	if got := pgerr.CodeOf(err); got != code {
		t.Fatalf("error %q has code %s, want %s", err, got, code)
	}
}

func comparePositions(a, b []byte) (int, bool) { return position.Compare(a, b) }
