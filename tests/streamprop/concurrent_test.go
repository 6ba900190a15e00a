package streamprop

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/tests/harness"
)

// concurrentErrors are the SQLSTATEs concurrent writers may get besides
// errorsWithoutOracle: serialization failures and deadlocks.
var concurrentErrors = map[string]bool{"23505": true, "25P02": true, "40001": true, "40P01": true}

// TestConcurrentWriters: several connections write at once while epochs
// end every few milliseconds; after they stop, FLUSH makes every view equal
// its batch query. (PostgreSQL cannot be the oracle here: the order of the
// writes is not known.)
func TestConcurrentWriters(t *testing.T) {
	n := 2
	if testing.Short() {
		n = 1
	}
	for _, seed := range seeds(t, 5001, harness.EnvInt(t, "STREAMPROP_SEEDS", n)) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			runConcurrent(t, seed, 3, steps(t)/3)
		})
	}
}

// runConcurrent creates every corpus view, then runs phases in which the
// writers each run phaseSteps random writes on their own connection;
// between phases it checks every view against its batch query.
func runConcurrent(t *testing.T, seed uint64, writers, phaseSteps int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := configFor(seed, phaseSteps)
	cfg.interval = []time.Duration{time.Millisecond, 3 * time.Millisecond}[seed%2]
	r := &runner{t: t, ctx: ctx, cfg: cfg, logs: &logRing{}, refused: map[string]bool{}}
	fmt.Fprintf(&r.script, "-- streamprop concurrent seed %d, %d writers (their statements interleave; not recorded)\n", seed, writers)
	var err error
	if r.srv, err = startServer(t.TempDir(), cfg.interval, r.logs, cfg.parallelism); err != nil {
		t.Fatal(err)
	}
	defer func() {
		r.ss.close()
		if err := r.srv.close(); err != nil {
			t.Errorf("close streamsql: %v", err)
		}
	}()
	if r.ss, err = connect(ctx, "streamsql", r.srv.connString()); err != nil {
		t.Fatal(err)
	}
	if err := r.setup(); err != nil {
		r.fail(err)
		return
	}
	conns := make([]*db, writers)
	gens := make([]*gen, writers)
	for w := range conns {
		if conns[w], err = connect(ctx, "streamsql", r.srv.connString()); err != nil {
			t.Fatal(err)
		}
		defer conns[w].close()
		gens[w] = newGen(seed*100 + uint64(w))
		gens[w].grow = false // three writers grow the tables fast enough
		// Disjoint key ranges, so writers rarely collide on primary keys.
		for _, tb := range []*table{tableA, tableC} {
			gens[w].nextID[tb] = 1 + w*1_000_000
		}
	}
	half := len(corpus) / 2
	for phase := range 4 {
		if phase == 1 { // the other half backfills from what is there
			for _, v := range corpus[half:] {
				if err := r.create(v); err != nil {
					r.fail(err)
					return
				}
			}
		} else if phase == 0 {
			for _, v := range corpus[:half] {
				if err := r.create(v); err != nil {
					r.fail(err)
					return
				}
			}
		}
		errs := make(chan error, writers)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- write(ctx, conns[w], gens[w], phaseSteps)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				r.fail(fmt.Errorf("phase %d: %w", phase, err))
				return
			}
		}
		if err := r.check(); err != nil {
			r.fail(fmt.Errorf("phase %d: %w", phase, err))
			return
		}
	}
	res, err := r.ss.query(ctx, "SELECT (SELECT count(*) FROM a) || '/' || (SELECT count(*) FROM b) || '/' || (SELECT count(*) FROM c) || '/' || (SELECT count(*) FROM d)")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seed %d: %d writers, %d checks of %d views passed (rows in a/b/c/d at the end %s)", seed, writers, r.checks, len(r.live), res.rows[0][0])
}

// write runs n random writes (statements and transactions, no DDL) on d.
func write(ctx context.Context, d *db, g *gen, n int) error {
	run := func(q string) error {
		if _, err := d.exec(ctx, q); err != nil && !concurrentErrors[sqlState(err)] {
			return fmt.Errorf("%s: %w", q, err)
		}
		return nil
	}
	for range n {
		var err error
		switch x := g.r.IntN(100); {
		case x < 80:
			err = run(g.dml())
		case x < 90:
			for _, q := range append([]string{"BEGIN"}, g.churn()...) {
				if err = run(q); err != nil {
					break
				}
			}
		default:
			c := g.copyRows([]*table{tableA, tableB, tableC}[g.r.IntN(3)], false)
			if _, cerr := d.copyText(ctx, c); cerr != nil && !concurrentErrors[sqlState(cerr)] {
				err = fmt.Errorf("%s: %w", c.statement(), cerr)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}
