package windowfuzz

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/streamsql/streamsql/tests/harness"
)

// TestWindowedViewsMatchModel creates random windowed aggregations (TUMBLE,
// HOP and SESSION, with or without a key and a WHERE, under EMIT ON UPDATE
// or EMIT ON WINDOW CLOSE with or without WITH DELAY and ALLOW LATENESS),
// top-Ns per TUMBLE or HOP window, aggregations closed by the watermark
// (GROUP BY date_bin, date_trunc or the time itself), EMIT EVERY and
// EARLY EVERY on the manual clock, Nexmark q5's shape, and interval joins
// (inner and outer) and window joins of ev with a second table ew
// over a watermarked table, half of them before any row and half later
// (they backfill), then inserts rows out of order, some far behind the
// watermark, some with NULL keys, values or times. By seed the table is
// APPEND ONLY or also takes UPDATEs (of values, keys and times) and
// DELETEs, and has an idle_timeout, with ADVANCE CLOCK steps in between. After every
// INSERT (and FLUSH) each view must hold what the model in model_test.go
// says, and its late_rows in streamsql_views must be the rows the model
// found late for all their windows, and a LATE ROWS INTO table (some seeds)
// exactly those rows. The views run at parallelism 1, 3 or 8
// by seed. Half way the server restarts: the views resume from a CHECKPOINT
// taken up to five writes before and replay the writes since, which the
// model replays as such (their watermarks move with their rows only: the
// idle time and EVERY ticks between them were processing time).
//
// WINDOWFUZZ_SEED sets the seed (default 1), WINDOWFUZZ_SEEDS how many
// seeds from it (default 4), WINDOWFUZZ_VIEWS the views (default 24),
// WINDOWFUZZ_STEPS the writes (default 60); WFDEBUG=1 logs every write
// with the model's ops, WINDOWFUZZ_SCRIPT=file writes every statement to
// file (a "-- RESTART" line where the server restarts), which
// TestReplayScript runs again (WINDOWFUZZ_REPLAY=file).
func TestWindowedViewsMatchModel(t *testing.T) {
	first := harness.EnvInt(t, "WINDOWFUZZ_SEED", 1)
	for seed := first; seed < first+harness.EnvInt(t, "WINDOWFUZZ_SEEDS", 4); seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { runSeed(t, uint64(seed)) })
	}
}

// event is what happened to a view: a write into a table (a batch, then
// a barrier), its backfill, or an ADVANCE CLOCK.
type event struct {
	table    int
	ops      []op
	advance  int64
	backfill bool
	bf       [2][]op
}

func (e event) play(m viewModel) {
	switch {
	case e.backfill:
		for k, ops := range e.bf {
			if len(ops) > 0 {
				m.apply(k, ops)
			}
		}
		m.barrier()
	case e.advance > 0:
		m.advance(e.advance)
	default:
		m.apply(e.table, e.ops)
		m.barrier()
	}
}

// viewModel is what one view must hold, kept up to date with the writes.
type viewModel interface {
	sql() string
	apply(table int, ops []op) // a batch into ev (0) or ew (1)
	barrier()                  // the end of an epoch (FLUSH)
	advance(d int64)           // ADVANCE CLOCK by d seconds, then a barrier
	checkpoint()               // CHECKPOINT
	// restartAt is a restart from the last checkpoint at processing time
	// clock: the counters start at 0, idleness is measured from now, and
	// EVERY ticks restart; the caller then replays the writes since.
	restartAt(clock int64)
	rows() [][]string
	lateRows() int
	mark() string // the watermark(s), for messages
}

func runSeed(t *testing.T, seed uint64) {
	ctx := context.Background()
	srv := harness.Start(t, t.TempDir())
	c, err := pgx.Connect(ctx, srv.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close(ctx) }()
	r := rand.New(rand.NewPCG(seed, 0x3e7a))
	par := []int{1, 3, 8}[seed%3]
	var script []string // every statement, for WINDOWFUZZ_SCRIPT
	defer func() {
		if f := os.Getenv("WINDOWFUZZ_SCRIPT"); f != "" {
			os.WriteFile(f, []byte(strings.Join(script, ";\n")+";\n"), 0o644)
		}
	}()
	exec := func(q string) {
		t.Helper()
		script = append(script, q)
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// ev feeds every view, ew the right side of interval joins (which need
	// both inputs append only: only on append-only seeds).
	appendOnly := seed%2 == 1 // even seeds also update and delete rows of ev
	// In some seeds windowed aggregations under EMIT ON WINDOW CLOSE store
	// their late rows (LATE ROWS INTO), which makes FLUSH take checkpoints.
	lateTables := seed%5 == 1
	var ins [2]input
	for k, name := range []string{"ev", "ew"} {
		ins[k].delay = []int64{0, 5, 30}[r.IntN(3)]
		ddl := fmt.Sprintf("CREATE TABLE %s (id int, k int, v int, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '%d' SECOND", name, ins[k].delay)
		if seed%4 >= 2 { // some seeds' watermarks move while no row arrives
			ins[k].idle = []int64{10, 30}[r.IntN(2)]
			ddl += fmt.Sprintf(" WITH (idle_timeout = '%ds')", ins[k].idle)
		}
		ddl += ")"
		if appendOnly || k == 1 {
			ddl += " APPEND ONLY"
		}
		exec(ddl)
	}
	exec(fmt.Sprintf("SET streaming_parallelism = %d", par))

	nViews := harness.EnvInt(t, "WINDOWFUZZ_VIEWS", 24)
	steps := harness.EnvInt(t, "WINDOWFUZZ_STEPS", 60)
	type view struct {
		created int // the step before which it is created
		new     func(clock int64) viewModel
		m       viewModel
		born    int64   // the processing time it was created at
		hist    []event // what happened to it since
		cpAt    int     // len(hist) at the last CHECKPOINT
		// inexact: its rows after a replay depend on where the replay's
		// epochs end (a SESSION under ALLOW LATENESS), so they are no
		// longer compared; its late rows still are, unless lateInexact:
		// they depend on how the replay interleaves two inputs (a UNION
		// ALL's watermark is their minimum)
		inexact, lateInexact bool
	}
	views := make([]view, nViews)
	for i := range views {
		switch {
		case appendOnly && r.IntN(5) == 0:
			j := randJoin(r)
			views[i].new = func(clock int64) viewModel { return &joinModel{j: j, in: ins, clock: clock} }
		case appendOnly && r.IntN(6) == 0:
			seed := r.Uint64()
			views[i].new = func(clock int64) viewModel { return randWJoin(rand.New(rand.NewPCG(seed, 1)), ins, clock) }
		case appendOnly && r.IntN(8) == 0:
			seed := r.Uint64()
			views[i].new = func(clock int64) viewModel { return randJoinWin(rand.New(rand.NewPCG(seed, 7)), ins, clock) }
		case appendOnly && r.IntN(7) == 0:
			seed := r.Uint64()
			views[i].new = func(clock int64) viewModel { return randOver(rand.New(rand.NewPCG(seed, 3)), ins[0], clock) }
		case r.IntN(10) == 0:
			seed := r.Uint64()
			views[i].new = func(clock int64) viewModel { return randTemporal(rand.New(rand.NewPCG(seed, 4)), clock) }
		case r.IntN(10) == 0:
			seed, late := r.Uint64(), ""
			if lateTables && r.IntN(2) == 0 {
				late = fmt.Sprintf("v%d_late", i)
			}
			views[i].new = func(clock int64) viewModel {
				m := randEOWC(rand.New(rand.NewPCG(seed, 5)), ins[0], clock)
				m.lateTable = late
				return m
			}
		case r.IntN(8) == 0:
			seed := r.Uint64()
			views[i].new = func(clock int64) viewModel { return randUnion(rand.New(rand.NewPCG(seed, 6)), ins, clock) }
		case r.IntN(8) == 0:
			seed, up := r.Uint64(), fmt.Sprintf("v%d_low", i)
			views[i].new = func(clock int64) viewModel { return randChain(rand.New(rand.NewPCG(seed, 2)), up, ins[0], clock) }
		default:
			s := randSpec(r)
			if lateTables && s.eowc && s.topN == 0 && !s.outer && s.kind != bucket && r.IntN(2) == 0 {
				s.lateTable = fmt.Sprintf("v%d_late", i)
			}
			views[i].new = func(clock int64) viewModel { return newModel(s, ins[0], clock) }
		}
		if i >= nViews/2 {
			views[i].created = 1 + r.IntN(steps-1)
		}
	}
	now, id, clock := int64(1000), 0, int64(0)
	var cur [2]map[int]row // the tables' rows by id
	cur[0], cur[1] = map[int]row{}, map[int]row{}
	create := func(i int, ddl bool) {
		v := &views[i]
		v.m, v.born, v.hist, v.cpAt = v.new(clock), clock, nil, 0
		if ddl {
			if p, ok := v.m.(interface{ prelude() []string }); ok {
				for _, q := range p.prelude() {
					exec(q)
				}
			}
			exec(fmt.Sprintf("CREATE MATERIALIZED VIEW v%d AS %s", i, v.m.sql()))
		}
		e := event{backfill: true}
		for k := range cur {
			e.bf[k] = inserts(slices.Collect(maps.Values(cur[k]))) // the backfill: one batch
		}
		v.hist = append(v.hist, e)
		e.play(v.m)
	}
	cp := steps/2 - r.IntN(6) // the CHECKPOINT
	if os.Getenv("WFDEBUG") != "" {
		t.Logf("checkpoint before step %d", cp)
	}
	lastCp := -1 // the step of the checkpoint the restart resumes from (that of FLUSH after the write)
	bad, compared, skipped, lateStored := 0, 0, 0, 0
	for step := 0; step < steps && bad < 10; step++ {
		for i := range views {
			if views[i].created == step {
				create(i, true)
			}
		}
		if step == cp {
			lastCp = step
			exec("CHECKPOINT")
			for i := range views {
				if v := &views[i]; v.m != nil {
					v.m.checkpoint()
					v.cpAt = len(v.hist)
				}
			}
		}
		if step == steps/2 { // the views resume from the checkpoint and replay the writes after it
			script = append(script, "-- RESTART")
			c = restart(ctx, t, srv, c)
			for i, v := range views {
				switch {
				case v.m == nil:
				case v.created > lastCp: // no checkpoint: rebuilt from the tables, one batch
					create(i, false)
				default:
					// Resumed from the checkpoint, then the writes since are
					// replayed now: the watermark moves with their rows only
					// (idle time and EVERY ticks are processing time, which
					// a replay does not repeat).
					m := v.new(v.born)
					for _, e := range v.hist[:v.cpAt] {
						e.play(m)
					}
					m.checkpoint()
					m.restartAt(clock)
					replayed := 0
					for _, e := range v.hist[v.cpAt:] {
						if e.advance == 0 {
							e.play(m)
							replayed++
						}
					}
					views[i].m = m
					if x, ok := m.(interface{ replayExact() bool }); ok && !x.replayExact() && replayed > 1 {
						views[i].inexact = true
					}
					if x, ok := m.(interface{ replayLateExact() bool }); ok && !x.replayLateExact() && replayed > 1 {
						views[i].inexact, views[i].lateInexact = true, true
					}
				}
			}
		}
		var w string
		var ops []op
		var advance int64
		table := 0
		switch {
		case r.IntN(6) == 0:
			advance = int64(1 + r.IntN(int(max(ins[0].idle, ins[1].idle, 20))+10))
			clock += advance
			w = fmt.Sprintf("ADVANCE CLOCK BY INTERVAL '%d seconds'", advance)
		case appendOnly || len(cur[0]) == 0 || r.IntN(3) > 0:
			if appendOnly && r.IntN(3) == 0 {
				table = 1
			}
			now += int64(r.IntN(12))
			var vals []string
			for n := 1 + r.IntN(4); n > 0; n-- {
				id++
				x := row{id: id, k: int64(1 + r.IntN(3)), v: int64(r.IntN(10)), t: now - int64(r.IntN(15))}
				switch r.IntN(8) {
				case 0:
					x.t = now - int64(r.IntN(150)) // far behind: often late
				case 1:
					x.t = now + int64(r.IntN(20)) // ahead
				}
				x.kN, x.vN, x.tN = r.IntN(15) == 0, r.IntN(10) == 0, r.IntN(30) == 0
				ops = append(ops, op{r: x})
				cur[table][x.id] = x
				vals = append(vals, x.values())
			}
			w = fmt.Sprintf("INSERT INTO %s VALUES %s", []string{"ev", "ew"}[table], strings.Join(vals, ", "))
		default:
			w, ops = change(r, cur[0])
		}
		exec(w)
		if advance == 0 {
			exec("FLUSH")
		}
		if os.Getenv("WFDEBUG") != "" {
			t.Logf("step %d clock %d: %s ops %+v", step, clock, w, ops)
		}
		for i, v := range views {
			m := v.m
			if m == nil {
				continue
			}
			e := event{table: table, ops: ops, advance: advance}
			views[i].hist = append(views[i].hist, e)
			e.play(m)
			want := sortRows(m.rows())
			got := sortRows(query(ctx, t, c, fmt.Sprintf("SELECT * FROM v%d", i)))
			compared++
			if late := query(ctx, t, c, fmt.Sprintf("SELECT late_rows FROM streamsql_views WHERE viewname = 'v%d'", i)); !views[i].lateInexact && (len(late) != 1 || late[0][0] != fmt.Sprint(m.lateRows())) {
				bad++
				t.Errorf("seed %d step %d (%s; watermark %s), view v%d:\n  %s\n  late rows: %v, want %d", seed, step, w, m.mark(), i, m.sql(), late, m.lateRows())
			}
			if views[i].inexact {
				skipped++
				continue
			}
			if !slices.EqualFunc(want, got, slices.Equal) {
				bad++
				t.Errorf("seed %d step %d (%s; watermark %s), view v%d:\n  %s\n  missing: %v\n  extra:   %v",
					seed, step, w, m.mark(), i, m.sql(), minus(want, got), minus(got, want))
			}
			if lm, ok := m.(interface {
				lateName() string
				lateTableRows() [][]string
			}); ok && lm.lateName() != "" {
				want := sortRows(lm.lateTableRows())
				got := sortRows(query(ctx, t, c, "SELECT id, k, v, ts, view_name FROM "+lm.lateName()))
				lateStored += len(got)
				if !slices.EqualFunc(want, got, slices.Equal) {
					bad++
					t.Errorf("seed %d step %d (%s; watermark %s), view v%d:\n  %s\n  late rows missing: %v\n  late rows extra:   %v",
						seed, step, w, m.mark(), i, m.sql(), minus(want, got), minus(got, want))
				}
			}
		}
		// FLUSH and ADVANCE CLOCK took a checkpoint if late rows waited.
		waiting := false
		for _, v := range views {
			if x, ok := v.m.(interface{ lateWaiting() bool }); ok && x.lateWaiting() {
				waiting = true
			}
		}
		if waiting {
			lastCp = step
			for i := range views {
				if v := &views[i]; v.m != nil {
					v.m.checkpoint()
					v.cpAt = len(v.hist)
				}
			}
		}
	}
	t.Logf("seed %d: %d views at parallelism %d, watermark delays %ds and %ds, idle_timeouts %ds and %ds, append only %v: %d comparisons, %d differences, %d rows not compared after the replay, %d stored late rows compared",
		seed, nViews, par, ins[0].delay, ins[1].delay, ins[0].idle, ins[1].idle, appendOnly, compared, bad, skipped, lateStored)
}

// change draws an UPDATE or DELETE of the table's rows cur, applies it to
// cur and returns it with its ops: for each row it changes, in id order,
// the delete of the old row and the insert of the new one.
func change(r *rand.Rand, cur map[int]row) (string, []op) {
	ids := slices.Sorted(maps.Keys(cur))
	pick := ids[r.IntN(len(ids))]
	var w string
	var where func(x row) bool
	var set func(x *row)
	switch r.IntN(6) {
	case 0:
		w, where = fmt.Sprintf("DELETE FROM ev WHERE id = %d", pick), func(x row) bool { return x.id == pick }
	case 1:
		m := r.IntN(7)
		w, where = fmt.Sprintf("DELETE FROM ev WHERE id %% 7 = %d", m), func(x row) bool { return x.id%7 == m }
	case 2:
		m := r.IntN(4)
		w, where, set = fmt.Sprintf("UPDATE ev SET v = v + 1 WHERE id %% 4 = %d", m), func(x row) bool { return x.id%4 == m }, func(x *row) { x.v++ }
	case 3:
		m := r.IntN(5)
		w, where, set = fmt.Sprintf("UPDATE ev SET k = k %% 3 + 1 WHERE id %% 5 = %d", m), func(x row) bool { return x.id%5 == m }, func(x *row) { x.k = x.k%3 + 1 }
	default:
		d := []int64{9, -4, -40}[r.IntN(3)]
		w, where, set = fmt.Sprintf("UPDATE ev SET ts = ts + INTERVAL '%d' SECOND WHERE id = %d", d, pick), func(x row) bool { return x.id == pick }, func(x *row) { x.t += d }
	}
	var ops []op
	for _, id := range ids {
		x := cur[id]
		if !where(x) {
			continue
		}
		ops = append(ops, op{r: x, del: true})
		if set == nil {
			delete(cur, id)
			continue
		}
		set(&x) // NULL stays NULL: only the value under it changes
		cur[id] = x
		ops = append(ops, op{r: x})
	}
	return w, ops
}

// randSpec draws a windowed aggregation.
func randSpec(r *rand.Rand) spec {
	s := spec{kind: kind(r.IntN(5)), keyed: r.IntN(3) > 0}
	switch s.kind {
	case tumble:
		s.size = []int64{10, 20, 60}[r.IntN(3)]
		if r.IntN(3) == 0 {
			s.off = 7
		}
	case hop:
		s.slide = []int64{5, 10}[r.IntN(2)]
		s.size = s.slide * int64(2+r.IntN(3))
		if r.IntN(3) == 0 {
			s.off = 3
		}
	case cumulate:
		s.slide = []int64{5, 10}[r.IntN(2)]
		s.size = s.slide * int64(2+r.IntN(4))
		if r.IntN(3) == 0 {
			s.off = 3
		}
	case bucket:
		switch r.IntN(3) {
		case 0:
			s.size = []int64{10, 20, 30}[r.IntN(3)]
			s.bucketSQL = fmt.Sprintf("date_bin(INTERVAL '%d seconds', ts, TIMESTAMP '2024-01-01')", s.size)
		case 1:
			s.size, s.bucketSQL = 60, "date_trunc('minute', ts)"
		default:
			s.size, s.bucketSQL = 1, "ts"
		}
	default:
		s.gap = []int64{5, 15, 40}[r.IntN(3)]
	}
	if (s.kind == tumble || s.kind == hop) && r.IntN(4) == 0 {
		s.topN = 1 + r.IntN(3)
		s.where = []string{"", "", "v > 3", "v IS NOT NULL", "k <> 2"}[r.IntN(5)]
		if r.IntN(2) == 0 {
			s.eowc = true
			if r.IntN(2) == 0 {
				s.delay = []int64{3, 10}[r.IntN(2)]
			}
		}
		return s
	}
	s.aggs = []agg{aggCount}
	for a := aggCountV; a < nAggs; a++ {
		if r.IntN(2) == 0 {
			s.aggs = append(s.aggs, a)
		}
	}
	s.where = []string{"", "", "v > 3", "v IS NOT NULL", "k <> 2"}[r.IntN(5)]
	if r.IntN(2) == 0 {
		s.eowc = true
		if r.IntN(2) == 0 {
			s.delay = []int64{3, 10}[r.IntN(2)]
		}
		switch {
		case s.kind == bucket: // (refused there)
		case s.kind != bucket && r.IntN(3) == 0:
			s.early = []int64{5, 20}[r.IntN(2)]
		case r.IntN(2) == 0:
			s.lateness = []int64{5, 20}[r.IntN(2)]
		}
	} else if s.kind != bucket && r.IntN(4) == 0 {
		s.every = []int64{5, 20}[r.IntN(2)]
	}
	if (s.kind == tumble || s.kind == hop) && s.every == 0 && s.early == 0 && s.lateness == 0 && r.IntN(4) == 0 {
		s.outer = true
	}
	return s
}

func query(ctx context.Context, t *testing.T, c *pgx.Conn, q string) [][]string {
	t.Helper()
	rows, err := harness.TextRows(ctx, c, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return rows
}

func sortRows(rows [][]string) [][]string {
	slices.SortFunc(rows, func(x, y []string) int { return strings.Compare(strings.Join(x, "\x00"), strings.Join(y, "\x00")) })
	return rows
}

// minus is the rows of a not in b (multisets).
func minus(a, b [][]string) [][]string {
	n := map[string]int{}
	for _, r := range b {
		n[strings.Join(r, "\x00")]++
	}
	var out [][]string
	for _, r := range a {
		k := strings.Join(r, "\x00")
		if n[k] > 0 {
			n[k]--
			continue
		}
		out = append(out, r)
	}
	return out
}
