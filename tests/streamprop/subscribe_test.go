package streamprop

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/tests/harness"
)

// subscribed are the views TestSubscriptionsFollowViews subscribes to: an
// aggregate, a full join, a top-N, a row_number top-N, DISTINCT ON, a view
// on a view, a UNION and a view without a key (equal rows counted).
var subscribed = map[string]bool{
	"agg_group": true, "j_full": true, "topn": true, "rownum": true, "dist_on": true,
	"vv_agg_join": true, "uni": true, "f_nopk": true,
}

// TestSubscriptionsFollowViews: a subscription's snapshot plus its changes
// add up to the view at every check; ops are well formed (deletes remove
// rows the subscriber has, update_before is followed by update_after) and
// epoch times never go back.
func TestSubscriptionsFollowViews(t *testing.T) {
	n := 2
	if testing.Short() {
		n = 1
	}
	for _, seed := range seeds(t, 7001, harness.EnvInt(t, "STREAMPROP_SEEDS", n)) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cfg := configFor(seed, steps(t))
			cfg.subscribe = subscribed
			r, err := play(ctx, t, cfg, newGen(seed).sequence(cfg.steps, cfg.restart), nil)
			if err != nil {
				r.fail(err)
				return
			}
			t.Logf("seed %d: %d checks of %d subscriptions passed, %d resumed after restarts (barrier interval %v, restart %v; longest FLUSH %v)",
				seed, r.checks, len(subscribed), r.resumed, cfg.interval, cfg.restart, r.maxFlush.Round(time.Millisecond))
		})
	}
}

// subscriber reads SUBSCRIBE TO view on its own connection into a multiset
// of rows. Its goroutine writes; check reads (mu guards both).
type subscriber struct {
	view   string
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	cols  []string
	float []bool
	rows  map[string]int // the view's columns as a row key -> count
	epoch string         // the last epoch_time seen
	// Resuming after a restart: complete is the last epoch whose rows all
	// arrived (a row of a later epoch did), cur the changes applied in the
	// epoch after it, undone when the connection breaks in its middle.
	complete string
	cur      []applied
	since    string        // the epoch this reading resumed after ("": a snapshot)
	pending  string        // an update_before's row, until its update_after
	err      error         // how the stream broke its rules, or ended
	changed  chan struct{} // closed and replaced on every row
}

// applied is one change a subscriber applied: +1 or -1 of a row.
type applied struct {
	key string
	n   int
}

func subscribe(ctx context.Context, dsn, view string) (*subscriber, error) {
	s := &subscriber{view: view, rows: map[string]int{}, changed: make(chan struct{})}
	return s, s.start(ctx, dsn)
}

func (s *subscriber) start(ctx context.Context, dsn string) error {
	ctx, cancel := context.WithCancel(ctx)
	d, err := connect(ctx, "subscriber", dsn)
	if err != nil {
		cancel()
		return err
	}
	s.cancel, s.done = cancel, make(chan struct{})
	go s.read(ctx, d)
	return nil
}

// resume follows the view again after a restart, after the last epoch the
// closed subscriber had whole: the changes of the epoch it was in the
// middle of are undone and come again. It returns false when it had no
// whole epoch yet (subscribe again instead).
func (s *subscriber) resume(ctx context.Context, dsn string) (bool, error) {
	s.mu.Lock()
	if s.complete == "" || s.err != nil {
		s.mu.Unlock()
		return false, nil
	}
	for i := len(s.cur) - 1; i >= 0; i-- {
		a := s.cur[i]
		if s.rows[a.key] -= a.n; s.rows[a.key] == 0 {
			delete(s.rows, a.key)
		}
	}
	s.cur, s.pending, s.epoch, s.since = nil, "", s.complete, s.complete
	s.mu.Unlock()
	return true, s.start(ctx, dsn)
}

func (s *subscriber) close() {
	s.cancel()
	<-s.done
}

func (s *subscriber) read(ctx context.Context, d *db) {
	defer close(s.done)
	defer d.close()
	q := "SUBSCRIBE TO " + s.view + " WITH (snapshot = true, progress = true)"
	if s.since != "" {
		q = "SUBSCRIBE TO " + s.view + " WITH (since = '" + s.since + "', progress = true)"
	}
	mrr := d.conn.PgConn().Exec(ctx, q)
	defer mrr.Close()
	if !mrr.NextResult() {
		s.broken(fmt.Errorf("no result: %v", mrr.Close()))
		return
	}
	rr := mrr.ResultReader()
	s.mu.Lock()
	s.cols, s.float = nil, nil
	for i, f := range rr.FieldDescriptions() {
		if i >= 2 {
			s.cols = append(s.cols, f.Name)
			s.float = append(s.float, f.DataTypeOID == 700 || f.DataTypeOID == 701)
		}
	}
	s.mu.Unlock()
	for rr.NextRow() {
		vals := rr.Values()
		cells := make([]string, len(vals)-2)
		for i, v := range vals[2:] {
			cells[i] = nullText
			if v != nil {
				cells[i] = string(v)
			}
		}
		if err := s.apply(string(vals[0]), string(vals[1]), rowKey(cells)); err != nil {
			s.broken(err)
			return
		}
	}
	_, err := rr.Close()
	if ctx.Err() == nil {
		s.broken(fmt.Errorf("subscription ended: %v", err))
	}
}

// apply adds one change to the multiset.
func (s *subscriber) apply(op, epoch, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		close(s.changed)
		s.changed = make(chan struct{})
	}()
	if epoch < s.epoch || s.since != "" && epoch <= s.since { // timestamptz text in one session's format: ordered
		return fmt.Errorf("epoch_time went back from %s to %s", s.epoch, epoch)
	}
	if epoch != s.epoch {
		s.complete, s.cur = s.epoch, s.cur[:0]
	}
	s.epoch = epoch
	if s.pending != "" && op != "update_after" {
		return fmt.Errorf("update_before not followed by update_after but by %s", op)
	}
	switch op {
	case "insert":
		s.rows[key]++
		s.cur = append(s.cur, applied{key, 1})
	case "update_after":
		if s.pending == "" {
			return fmt.Errorf("update_after without update_before")
		}
		s.pending = ""
		s.rows[key]++
		s.cur = append(s.cur, applied{key, 1})
	case "delete", "update_before":
		if s.rows[key] == 0 {
			return fmt.Errorf("%s of a row the subscriber does not have: %s", op, showRow(strings.Split(key, "\x1f")))
		}
		if s.rows[key]--; s.rows[key] == 0 {
			delete(s.rows, key)
		}
		s.cur = append(s.cur, applied{key, -1})
		if op == "update_before" {
			s.pending = key
		}
	case "progress":
	default:
		return fmt.Errorf("unknown op %q", op)
	}
	return nil
}

func (s *subscriber) broken(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// state is the subscriber's rows as a result, and a channel closed at the
// next change.
func (s *subscriber) state() (*result, <-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res := &result{cols: s.cols, float: s.float}
	for k, n := range s.rows {
		for range n {
			res.rows = append(res.rows, strings.Split(k, "\x1f"))
		}
	}
	return res, s.changed, s.err
}

// waitFor waits until the subscriber's rows equal want (the view right
// after FLUSH, which delivered every change to the subscriber's buffer:
// only its reading may lag) and returns the difference if they do not
// within timeout.
func (s *subscriber) waitFor(want *result, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		got, changed, err := s.state()
		if err != nil {
			return fmt.Errorf("subscription to %s: %w", s.view, err)
		}
		if len(got.cols) == len(want.cols) && diff(got, want) == "" {
			return nil
		}
		select {
		case <-changed:
		case <-deadline.C:
			return fmt.Errorf("subscription to %s does not add up to the view after %v: %s", s.view, timeout, diff(got, want))
		}
	}
}
