package streamprop

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/streamsql/streamsql/tests/harness"
)

// runConfig is one seed's run.
type runConfig struct {
	seed     uint64
	steps    int
	restart  bool
	interval time.Duration // the barrier interval; negative: epochs end only at FLUSH
	pgDSN    string        // "": no PostgreSQL comparison
	// subscribe names views to follow with SUBSCRIBE; each check also
	// compares what the subscription added up to with the view.
	subscribe map[string]bool
	// parallelism is the instances of every keyed operator (1, 3 or 8
	// by seed): results must not depend on it.
	parallelism int
	// split is the session's streaming_split_distinct ("": the
	// default): every other seed plans its count(DISTINCT) views split,
	// at every parallelism (1 included).
	split string
}

// configFor derives a seed's run: the barrier interval varies with the seed
// and every third seed restarts the engine in the middle.
func configFor(seed uint64, steps int) runConfig {
	intervals := []time.Duration{5 * time.Millisecond, 2 * time.Millisecond, 20 * time.Millisecond, -1, time.Millisecond}
	return runConfig{seed: seed, steps: steps, restart: seed%3 == 0, interval: intervals[seed%uint64(len(intervals))],
		parallelism: []int{1, 3, 8}[(seed+seed/3)%3], split: []string{"", "on"}[seed%2]}
}

// runner drives one seed against streamsql and, optionally, PostgreSQL.
// It is used by one goroutine.
type runner struct {
	t   *testing.T
	ctx context.Context
	cfg runConfig

	srv  *server
	logs *logRing
	ss   *db // streamsql
	pg   *db // PostgreSQL, nil without it

	live    []viewDef       // views created in streamsql
	refused map[string]bool // views streamsql refused (and their dependents)
	script  strings.Builder // what ran so far, for the reproduction file
	checks  int
	only    map[string]bool // check these views alone (nil: all)
	sizes   string          // rows in a/b/c at the end
	logText string          // the engine's log when the run failed
	logKept bool            // logText is set

	snapshotMisses int // snapshot steps whose views disagreed (a known issue)

	subs       map[string]*subscriber // by view name (cfg.subscribe)
	resumed    int                    // subscriptions resumed with since after a restart
	alterNoted bool                   // the ALTER known issue was logged
	maxFlush   time.Duration          // the longest FLUSH
}

// mismatchError is a check's failure: views that differ from their batch
// query, or batch queries that differ from PostgreSQL.
type mismatchError struct {
	views []string
	msg   string
}

func (e *mismatchError) Error() string { return e.msg }

// errorsWithoutOracle are the SQLSTATEs a sequence may cause on its own:
// reused primary keys, and statements after one of those in a transaction.
var errorsWithoutOracle = map[string]bool{"23505": true, "25P02": true}

func runSeed(t *testing.T, cfg runConfig) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	steps := newGen(cfg.seed).sequence(cfg.steps, cfg.restart)
	r, err := play(ctx, t, cfg, steps, nil)
	if err != nil {
		r.fail(err)
		var m *mismatchError
		if errors.As(err, &m) && os.Getenv("STREAMPROP_SHRINK") != "" {
			shrink(ctx, t, cfg, steps, m.views)
		}
		return
	}
	t.Logf("seed %d: %d checks of %d views passed (barrier interval %v, restart %v, postgres %v; rows in a/b/c/d at the end %s; reads of two views at different epochs %d; longest FLUSH %v)",
		cfg.seed, r.checks, len(r.live), cfg.interval, cfg.restart, r.pg != nil, r.sizes, r.snapshotMisses, r.maxFlush.Round(time.Millisecond))
}

// play runs steps on a fresh server (and a fresh PostgreSQL database when
// cfg.pgDSN is set) and returns the first failure. With only set, checks
// compare that view alone. The runner is returned for its script and log.
func play(ctx context.Context, t *testing.T, cfg runConfig, steps []step, only map[string]bool) (r *runner, err error) {
	r = &runner{t: t, ctx: ctx, cfg: cfg, logs: &logRing{}, refused: map[string]bool{}, only: only}
	fmt.Fprintf(&r.script, "-- streamprop seed %d, %d steps, barrier interval %v, restart %v, parallelism %d, split distinct %q\n", cfg.seed, cfg.steps, cfg.interval, cfg.restart, cfg.parallelism, cfg.split)
	dir, err := os.MkdirTemp("", "streamprop-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	if r.srv, err = startServer(dir, cfg.interval, r.logs, cfg.parallelism); err != nil {
		return r, err
	}
	defer func() {
		r.ss.close()
		if cerr := r.srv.close(); cerr != nil && err == nil {
			err = fmt.Errorf("close streamsql: %w", cerr)
		}
	}()
	defer r.unsubscribe()
	defer func() { // before the close: its log lines are noise
		if err != nil {
			r.logText = r.logs.String()
			r.logKept = true
		}
	}()
	if r.ss, err = connect(ctx, "streamsql", r.srv.connString()); err != nil {
		return r, err
	}
	if err := r.setSplit(); err != nil {
		return r, err
	}
	if cfg.pgDSN != "" {
		pg, drop, err := freshPostgres(ctx, cfg.pgDSN, fmt.Sprintf("streamprop_%d_%d", os.Getpid(), cfg.seed))
		if err != nil {
			return r, err
		}
		defer drop()
		r.pg = pg
	}
	if err := r.setup(); err != nil {
		return r, err
	}
	for i, s := range steps {
		r.logs.setStep(i)
		if err := r.do(s); err != nil {
			return r, fmt.Errorf("step %d: %w", i, err)
		}
	}
	r.sizes = "?"
	if res, err := r.ss.query(ctx, "SELECT (SELECT count(*) FROM a) || '/' || (SELECT count(*) FROM b) || '/' || (SELECT count(*) FROM c) || '/' || (SELECT count(*) FROM d)"); err == nil && len(res.rows) == 1 {
		r.sizes = res.rows[0][0]
	}
	return r, nil
}

// setup creates the tables on both sides, and on PostgreSQL every corpus
// view as a plain view.
func (r *runner) setup() error {
	for _, tb := range tables {
		q := tb.ddl(true)
		r.script.WriteString(q + ";\n")
		if _, err := r.ss.exec(r.ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
		if r.pg != nil {
			if _, err := r.pg.exec(r.ctx, tb.ddl(false)); err != nil {
				return fmt.Errorf("postgres: %s: %w", tb.ddl(false), err)
			}
		}
	}
	if r.pg == nil {
		return nil
	}
	for _, v := range corpus {
		if v.ownSyntax {
			continue
		}
		if _, err := r.pg.exec(r.ctx, v.create(false)); err != nil {
			return fmt.Errorf("postgres: %s: %w", v.name, err)
		}
	}
	return nil
}

func (r *runner) do(s step) error {
	switch s.kind {
	case stepSQL:
		return r.stmt(s.sqls[0])
	case stepTx:
		for _, q := range append([]string{"BEGIN"}, s.sqls...) {
			if err := r.stmt(q); err != nil {
				return err
			}
		}
		return nil
	case stepCopy:
		return r.copy(s.copy)
	case stepCreate:
		return r.create(corpusView(s.view))
	case stepCheck:
		return r.check()
	case stepDrop:
		return r.drop(s.view)
	case stepSnapshot:
		return r.snapshot()
	case stepRestart:
		// The server comes back with another --streaming-parallelism: the
		// views (created with the default) are rescaled by restart (or
		// rebuilt where a split source's readers changed).
		next := map[int]int{1: 3, 3: 8, 8: 1}[r.srv.parallelism]
		if len(r.subs) > 0 {
			// A subscription resumes (since) only on a view that resumed:
			// one created after the last checkpoint is rebuilt, and its
			// changes before the restart are gone (55000, as documented).
			// With subscribers the restart follows a checkpoint; without,
			// views created since the last one are rebuilt (TestViewsMatchBatch).
			fmt.Fprintf(&r.script, "CHECKPOINT;\n")
			if _, err := r.ss.exec(r.ctx, "CHECKPOINT"); err != nil {
				return err
			}
		}
		fmt.Fprintf(&r.script, "-- restart the server here, with parallelism %d\n", next)
		r.ss.close()
		old := maps.Clone(r.subs)
		r.unsubscribe()
		r.srv.parallelism = next
		if err := r.srv.restart(); err != nil {
			return err
		}
		var err error
		if r.ss, err = connect(r.ctx, "streamsql", r.srv.connString()); err != nil {
			return err
		}
		if err := r.setSplit(); err != nil {
			return err
		}
		for _, v := range r.live {
			// A subscriber resumes after the last epoch it has whole
			// (SUBSCRIBE ... WITH (since = ...)): its rows must go on
			// adding up to the view.
			if s := old[v.name]; s != nil {
				ok, err := s.resume(r.ctx, r.srv.connString())
				if err != nil {
					return err
				}
				if ok {
					r.subs[v.name] = s
					r.resumed++
					continue
				}
			}
			if err := r.follow(v.name); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown step kind %d", s.kind)
}

// stmt runs a statement on both sides; they must agree on its outcome.
func (r *runner) stmt(q string) error {
	r.script.WriteString(q + ";\n")
	if err := r.outcome(q, func(d *db) (string, error) { return d.exec(r.ctx, q) }); err != nil {
		return err
	}
	if strings.HasPrefix(q, "ALTER TABLE") && len(r.subs) > 0 && !knownIssues() {
		// Known issue: ALTER TABLE restarts the views over the table and
		// ends their subscriptions (55000 "the view stopped"). Subscribe
		// again, from a snapshot.
		if !r.alterNoted {
			r.alterNoted = true
			r.t.Logf("known issue: ALTER TABLE ends the subscriptions to the views over the table; subscribing again")
		}
		r.unsubscribe()
		for _, v := range r.live {
			if err := r.follow(v.name); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *runner) copy(c *copyStep) error {
	r.script.WriteString(c.script())
	return r.outcome(c.statement(), func(d *db) (string, error) {
		if c.binary {
			return d.copyBinary(r.ctx, c)
		}
		return d.copyText(r.ctx, c)
	})
}

// outcome runs f on streamsql and PostgreSQL and compares the command tags
// or SQLSTATEs. Without PostgreSQL only errorsWithoutOracle may happen.
func (r *runner) outcome(what string, f func(*db) (string, error)) error {
	tag, err := f(r.ss)
	if state := sqlState(err); state == "?" {
		return fmt.Errorf("streamsql: %s: %w", what, err)
	}
	if r.pg == nil {
		if err != nil && !errorsWithoutOracle[sqlState(err)] {
			return fmt.Errorf("streamsql: %s: %w", what, err)
		}
		return nil
	}
	pgTag, pgErr := f(r.pg)
	if sqlState(err) != sqlState(pgErr) || (err == nil && tag != pgTag) {
		return fmt.Errorf("%s: streamsql gives %q, error %v; postgres %q, error %v", what, tag, err, pgTag, pgErr)
	}
	return nil
}

// create creates a corpus view in streamsql. A refusal (0A000) must be the
// corpus's expected one; the views over a refused view are skipped.
func (r *runner) create(v viewDef) error {
	for _, d := range v.deps() {
		if r.refused[d] {
			r.refused[v.name] = true
			return nil
		}
	}
	q := v.create(true)
	r.script.WriteString(q + ";\n")
	_, err := r.ss.exec(r.ctx, q)
	switch state := sqlState(err); {
	case state == "0A000" && v.refused != "":
		r.refused[v.name] = true
		return nil
	case state == "0A000":
		r.refused[v.name] = true
		r.t.Errorf("the streaming planner refuses view %s (mark it refused in the corpus or fix the planner): %v", v, err)
		return nil
	case err != nil:
		return fmt.Errorf("create view %s: %w", v.name, err)
	case v.refused != "":
		r.t.Errorf("view %s is supported now: drop its refused mark (%s)", v.name, v.refused)
	}
	r.live = append(r.live, v)
	return r.follow(v.name)
}

// follow subscribes to a view if the run follows it.
func (r *runner) follow(name string) error {
	if !r.cfg.subscribe[name] {
		return nil
	}
	s, err := subscribe(r.ctx, r.srv.connString(), name)
	if err != nil {
		return err
	}
	if r.subs == nil {
		r.subs = map[string]*subscriber{}
	}
	r.subs[name] = s
	return nil
}

// unsubscribe ends every subscription.
func (r *runner) unsubscribe() {
	for name, s := range r.subs {
		s.close()
		delete(r.subs, name)
	}
}

// drop drops a live view (one that was refused stays so).
func (r *runner) drop(name string) error {
	i := slices.IndexFunc(r.live, func(v viewDef) bool { return v.name == name })
	if i < 0 {
		return nil
	}
	r.live = slices.Delete(r.live, i, i+1)
	if s := r.subs[name]; s != nil {
		s.close()
		delete(r.subs, name)
	}
	q := "DROP MATERIALIZED VIEW " + name
	r.script.WriteString(q + ";\n")
	if _, err := r.ss.exec(r.ctx, q); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	return nil
}

// snapshotPairs are queries over two views, one computed from the other,
// that agree whenever both are read at the same epoch: a query over several
// views reads them all as of the last completed epoch, FLUSH or not.
var snapshotPairs = []struct {
	views       [2]string
	left, right string // scalar queries that agree (right at most left with atMost)
	atMost      bool
}{
	{[2]string{"j_inner", "vv_agg_join"}, "SELECT count(*) FROM j_inner", "SELECT coalesce(sum(c), 0) FROM vv_agg_join", false},
	{[2]string{"vv_agg_join", "vv_vv"}, "SELECT count(*) FROM vv_agg_join", "SELECT c FROM vv_vv", false},
	{[2]string{"agg_group", "vv_filter"}, "SELECT count(*) FROM agg_group WHERE c > 1", "SELECT count(*) FROM vv_filter", false},
	{[2]string{"j_agg_keys", "vv_rownum"}, "SELECT count(DISTINCT k) FROM j_agg_keys", "SELECT count(*) FROM vv_rownum", false},
	{[2]string{"uni", "vv_uni"}, "SELECT count(*) FROM uni", "SELECT count(*) FROM vv_uni", true},
}

// snapshot checks, without FLUSH, that views read in one query agree.
func (r *runner) snapshot() error {
	for _, p := range snapshotPairs {
		if !r.isLive(p.views[0]) || !r.isLive(p.views[1]) || (r.only != nil && !(r.only[p.views[0]] && r.only[p.views[1]])) {
			continue
		}
		q := fmt.Sprintf("SELECT (%s) AS l, (%s) AS r", p.left, p.right)
		r.script.WriteString(q + "; -- must agree, FLUSH or not\n")
		res, err := r.ss.query(r.ctx, q)
		if err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
		if len(res.rows) != 1 {
			return fmt.Errorf("%s: %d rows", q, len(res.rows))
		}
		l, errL := strconv.ParseInt(res.rows[0][0], 10, 64)
		rt, errR := strconv.ParseInt(res.rows[0][1], 10, 64)
		if errL != nil || errR != nil || (!p.atMost && l != rt) || (p.atMost && rt > l) {
			err := &mismatchError{views: p.views[:], msg: fmt.Sprintf(
				"views read in one query disagree (not one epoch?): %s gives %s and %s", q, showRow(res.rows[0][:1]), showRow(res.rows[0][1:]))}
			return err
		}
	}
	return nil
}

func (r *runner) isLive(name string) bool {
	return slices.ContainsFunc(r.live, func(v viewDef) bool { return v.name == name })
}

// check runs FLUSH and compares every view with its batch query, and the
// batch query with PostgreSQL.
func (r *runner) check() error {
	r.checks++
	r.script.WriteString("FLUSH;\n-- check " + strconv.Itoa(r.checks) + "\n")
	flushStart := time.Now()
	if _, err := r.ss.exec(r.ctx, "FLUSH"); err != nil {
		return fmt.Errorf("FLUSH: %w", err)
	}
	if d := time.Since(flushStart); d > r.maxFlush {
		r.maxFlush = d
	}
	var bad, views []string
	for _, v := range r.live {
		if r.only != nil && !r.only[v.name] {
			continue
		}
		n := len(bad)
		view, err := r.ss.query(r.ctx, "SELECT * FROM "+v.name)
		if err != nil {
			return fmt.Errorf("read view %s: %w", v.name, err)
		}
		batch, err := r.ss.query(r.ctx, v.batchSQL())
		if err != nil {
			return fmt.Errorf("batch query of %s: %s: %w", v.name, v.batchSQL(), err)
		}
		if d := diff(view, batch); d != "" {
			bad = append(bad, fmt.Sprintf("view %s differs from its batch query: %s\n  view:  %s\n  batch: %s",
				v.name, d, v.viewSQL(), v.batchSQL()))
		}
		if s := r.subs[v.name]; s != nil {
			if err := s.waitFor(view, 10*time.Second); err != nil {
				bad = append(bad, err.Error())
			}
		}
		if r.pg != nil && !v.ownSyntax {
			pg, err := r.pg.query(r.ctx, "SELECT * FROM "+v.name)
			if err != nil {
				return fmt.Errorf("postgres: view %s: %w", v.name, err)
			}
			if d := diff(batch, pg); d != "" {
				bad = append(bad, fmt.Sprintf("batch query of %s differs from postgres: %s\n  query: %s", v.name, d, v.batchSQL()))
			}
		}
		if len(bad) > n {
			views = append(views, v.name)
		}
	}
	if len(bad) > 0 {
		return &mismatchError{views: views, msg: fmt.Sprintf("check %d:\n%s", r.checks, strings.Join(bad, "\n"))}
	}
	return nil
}

// fail reports a seed's failure with its seed, and writes the statements
// that ran to $TMPDIR/streamprop-<seed>.sql.
func (r *runner) fail(err error) {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("streamprop-%d.sql", r.cfg.seed))
	if werr := os.WriteFile(path, []byte(r.script.String()), 0o644); werr != nil {
		path = "(not written: " + werr.Error() + ")"
	}
	logText := r.logs.String()
	if r.logKept {
		logText = r.logText
	}
	r.t.Errorf("seed %d (rerun: STREAMPROP_SEED=%d; statements in %s): %v\nengine log:\n%s",
		r.cfg.seed, r.cfg.seed, path, err, logText)
}

// freshPostgres creates an empty database on the PostgreSQL at dsn and
// connects to it; drop removes it.
func freshPostgres(ctx context.Context, dsn, name string) (*db, func(), error) {
	admin, err := connect(ctx, "postgres", dsn)
	if err != nil {
		return nil, nil, err
	}
	if _, err := admin.exec(ctx, "DROP DATABASE IF EXISTS "+name); err != nil {
		admin.close()
		return nil, nil, fmt.Errorf("postgres: %w", err)
	}
	if _, err := admin.exec(ctx, "CREATE DATABASE "+name); err != nil {
		admin.close()
		return nil, nil, fmt.Errorf("postgres: %w", err)
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		admin.close()
		return nil, nil, err
	}
	cfg.Database = name
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		admin.close()
		return nil, nil, fmt.Errorf("postgres: %w", err)
	}
	pg := &db{name: "postgres", conn: conn}
	drop := func() {
		pg.close()
		admin.exec(context.Background(), "DROP DATABASE IF EXISTS "+name)
		admin.close()
	}
	return pg, drop, nil
}

// seeds are the seeds to run: STREAMPROP_SEED alone, or n from first on.
func seeds(t *testing.T, first uint64, n int) []uint64 {
	if s := os.Getenv("STREAMPROP_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("STREAMPROP_SEED: %v", err)
		}
		return []uint64{seed}
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = first + uint64(i)
	}
	return out
}

func steps(t *testing.T) int {
	def := 120
	if testing.Short() {
		def = 60
	}
	return harness.EnvInt(t, "STREAMPROP_STEPS", def)
}

// TestViewsMatchBatch: after every FLUSH each view equals its query run as
// a batch query over the tables.
func TestViewsMatchBatch(t *testing.T) {
	n := 5
	if testing.Short() {
		n = 3
	}
	for _, seed := range seeds(t, 1, harness.EnvInt(t, "STREAMPROP_SEEDS", n)) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			runSeed(t, configFor(seed, steps(t)))
		})
	}
	t.Logf("views the streaming planner refuses, as expected: %s", refusedList())
}

// TestViewsMatchPostgres: the same, and every batch query also equals
// PostgreSQL 15's answer over the same statements.
func TestViewsMatchPostgres(t *testing.T) {
	dsn := pgDSN()
	if err := pingPostgres(dsn); err != nil {
		t.Skipf("PostgreSQL is not reachable at %s (set STREAMSQL_PG_DSN, or start it: pg_ctlcluster 15 main start): %v", dsn, err)
	}
	n := 2
	if testing.Short() {
		n = 1
	}
	for _, seed := range seeds(t, 1001, harness.EnvInt(t, "STREAMPROP_SEEDS", n)) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			cfg := configFor(seed, steps(t))
			cfg.pgDSN = dsn
			runSeed(t, cfg)
		})
	}
}

// TestSoak runs new seeds for STREAMPROP_SOAK (a duration), with
// PostgreSQL when it is reachable.
func TestSoak(t *testing.T) {
	s := os.Getenv("STREAMPROP_SOAK")
	if s == "" {
		t.Skip("set STREAMPROP_SOAK=30m to soak")
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("STREAMPROP_SOAK: %v", err)
	}
	dsn := pgDSN()
	if err := pingPostgres(dsn); err != nil {
		t.Logf("soaking without PostgreSQL: %v", err)
		dsn = ""
	}
	end := time.Now().Add(d)
	for seed := uint64(time.Now().UnixNano()) % 1e9; time.Now().Before(end) && !t.Failed(); seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			cfg := configFor(seed, harness.EnvInt(t, "STREAMPROP_STEPS", 250))
			cfg.pgDSN = dsn
			runSeed(t, cfg)
		})
	}
}

func pingPostgres(dsn string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	d, err := connect(ctx, "postgres", dsn)
	if err != nil {
		return err
	}
	d.close()
	return nil
}

func refusedList() string {
	var out []string
	for _, v := range corpus {
		if v.refused != "" {
			out = append(out, v.name+" ("+v.refused+")")
		}
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

// setSplit sets the run's streaming_split_distinct on the session, if any
// (views keep the value they were created with across restarts).
func (r *runner) setSplit() error {
	if r.cfg.split == "" {
		return nil
	}
	q := "SET streaming_split_distinct = " + r.cfg.split
	r.script.WriteString(q + ";\n")
	if _, err := r.ss.exec(r.ctx, q); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	return nil
}
