package stream

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// The property test feeds random changelogs (inserts, deletes, update
// pairs, duplicates, times out of order, some late; watermarks advancing
// by random steps; processing-time ticks from a fake clock) through a
// running WindowAgg, for every window kind and EMIT mode, and after each
// barrier compares the view its output builds with a model: the windows'
// rows kept naively, the emission rules applied by brute force at the same
// points (every window or key recomputed from its rows), the aggregate
// values computed by the batch engine's exec.HashAgg over each window's
// rows. Late-row counts must match exactly.

var wpCols = []types.Column{
	{Name: "k1", Type: types.TInt4}, {Name: "k2", Type: types.TText}, {Name: "ts", Type: types.TTimestamp},
	{Name: "i4", Type: types.TInt4}, {Name: "i8", Type: types.TInt8}, {Name: "f8", Type: types.TFloat8},
	{Name: "num", Type: types.TNumeric}, {Name: "txt", Type: types.TText}, {Name: "b", Type: types.TBool},
}

const wpTS = 2 // the time column

func wpCol(name string) *expr.ColRef {
	for i, c := range wpCols {
		if c.Name == name {
			return &expr.ColRef{Idx: i, T: c.Type, Name: name}
		}
	}
	panic(name)
}

func wpRow(rng *rand.Rand, ts int64) []types.Value {
	pick := rng.Intn
	null := func() bool { return pick(8) == 0 }
	row := make([]types.Value, len(wpCols))
	if pick(12) != 0 {
		row[0] = int64(pick(3))
	}
	row[1] = []string{"x", "y"}[pick(2)]
	row[2] = types.TimestampValue(ts)
	if pick(40) == 0 {
		row[2] = nil // in no window
	}
	if !null() {
		row[3] = int64(pick(7))
	}
	if !null() {
		row[4] = propBigInts[pick(len(propBigInts))]
	}
	if !null() {
		row[5] = []float64{0, 0.25, -1.5, 2, 100.5, -3.75}[pick(6)]
	}
	if !null() {
		row[6] = []string{"0", "1.5", "-2.25", "10", "3.100", "0.001"}[pick(6)]
	}
	if !null() {
		row[7] = propTexts[pick(len(propTexts))]
	}
	if !null() {
		row[8] = pick(2) == 0
	}
	return row
}

func wpRecord(t *testing.T, rows [][]types.Value) arrow.RecordBatch {
	t.Helper()
	saved := propCols
	propCols = wpCols
	defer func() { propCols = saved }()
	return propRecord(t, rows)
}

// wpConfig is one query shape.
type wpConfig struct {
	name       string
	ws         WindowSpec
	emit       EmitSpec
	groupBy    []string
	appendOnly bool
}

func wpConfigs() []wpConfig {
	kinds := []struct {
		name string
		ws   WindowSpec
	}{
		{"tumble", WindowSpec{Kind: Tumble, Size: 10, Offset: 3}},
		{"hop gcd panes", WindowSpec{Kind: Hop, Size: 10, Slide: 4, Offset: 1}},
		{"hop", WindowSpec{Kind: Hop, Size: 6, Slide: 2}},
		{"hop with gaps", WindowSpec{Kind: Hop, Size: 4, Slide: 6, Offset: -1}},
		{"hop many panes", WindowSpec{Kind: Hop, Size: 40, Slide: 1, Offset: 1}}, // > densePanes live panes
		{"cumulate cut", WindowSpec{Kind: Cumulate, Size: 10, Slide: 3, Offset: 2}},
		{"cumulate", WindowSpec{Kind: Cumulate, Size: 8, Slide: 2}},
		{"session", WindowSpec{Kind: Session, Gap: 5}},
	}
	modes := []struct {
		name string
		emit EmitSpec
	}{
		{"on update", EmitSpec{Mode: EmitOnUpdate}},
		{"on update lateness", EmitSpec{Mode: EmitOnUpdate, AllowLateness: 4}},
		{"eowc", EmitSpec{Mode: EmitOnWindowClose}},
		{"eowc delay", EmitSpec{Mode: EmitOnWindowClose, Delay: 3}},
		{"eowc lateness", EmitSpec{Mode: EmitOnWindowClose, Delay: 2, AllowLateness: 5}},
		{"eowc early", EmitSpec{Mode: EmitOnWindowClose, Delay: 1, EarlyEvery: 1e6}},
		{"eowc early lateness", EmitSpec{Mode: EmitOnWindowClose, EarlyEvery: 1e6, AllowLateness: 4}},
		{"every", EmitSpec{Mode: EmitEvery, Every: 1e6}},
	}
	groupings := [][]string{{"k1"}, {"k1", "k2"}, nil}
	var out []wpConfig
	for ki, k := range kinds {
		for mi, m := range modes {
			out = append(out, wpConfig{name: k.name + "/" + m.name, ws: k.ws, emit: m.emit, groupBy: groupings[(ki+mi)%3]})
		}
		out = append(out, wpConfig{name: k.name + "/append only", ws: k.ws, emit: modes[(ki*3)%len(modes)].emit,
			groupBy: groupings[ki%3], appendOnly: true})
	}
	// Append-only sessions wider than the rows' disorder: rows come before
	// a key's first time within the gap of its second (what the readers of
	// a split source send), which moves the first time (sessWin.group).
	wide := WindowSpec{Kind: Session, Gap: 12}
	for _, m := range modes[:3] {
		out = append(out, wpConfig{name: "session wide/append only/" + m.name, ws: wide, emit: m.emit,
			groupBy: groupings[0], appendOnly: true})
	}
	return out
}

// wpPlans builds the WindowAgg of cfg and the batch aggregation computing
// one window's rows.
func wpPlans(t *testing.T, cfg wpConfig) (*WindowAgg, *exec.HashAgg) {
	t.Helper()
	call := func(name, arg string, distinct bool, filter expr.Expr) exec.AggCall {
		var args []expr.Expr
		var ts []types.T
		if arg != "" {
			a := wpCol(arg)
			args, ts = []expr.Expr{a}, []types.T{a.T}
		}
		fn, err := exec.ResolveAggregate(name, ts, arg == "")
		if err != nil {
			t.Fatalf("%s(%s): %v", name, arg, err)
		}
		return exec.AggCall{Fn: fn, Args: args, Distinct: distinct, Filter: filter}
	}
	b := wpCol("b")
	calls := []exec.AggCall{call("count", "", false, nil), call("count", "i4", false, nil), call("sum", "i4", false, nil),
		call("sum", "i8", false, nil), call("avg", "i4", false, nil), call("sum", "f8", false, nil), call("avg", "num", false, nil),
		call("min", "i8", false, nil), call("max", "txt", false, nil), call("min", "num", false, nil),
		call("count", "i4", true, nil), call("sum", "i4", true, nil), call("bool_or", "b", false, nil),
		call("max", "i4", false, b), call("avg", "f8", true, b)}
	ws := cfg.ws
	ws.TimeCol = wpTS
	w := &WindowAgg{Input: &winSource{wpCols}, Window: ws, Emit: cfg.emit, AppendOnly: cfg.appendOnly,
		Cols: []types.Column{{Name: "window_start", Type: types.TTimestamp}, {Name: "window_end", Type: types.TTimestamp}}}
	bh := &exec.HashAgg{Input: &exec.FuncScan{Name: "window", Cols: wpCols}}
	for _, g := range cfg.groupBy {
		c := wpCol(g)
		w.GroupBy, bh.GroupBy = append(w.GroupBy, c), append(bh.GroupBy, c)
		col := types.Column{Name: g, Type: c.T}
		w.Cols, bh.Cols = append(w.Cols, col), append(bh.Cols, col)
	}
	for i, c := range calls {
		spec, err := AggSpecFor(c)
		if err != nil {
			t.Fatal(err)
		}
		col := types.Column{Name: fmt.Sprintf("a%d", i), Type: c.Fn.Return}
		w.Aggs, bh.Aggs = append(w.Aggs, spec), append(bh.Aggs, c)
		w.Cols, bh.Cols = append(w.Cols, col), append(bh.Cols, col)
	}
	return w, bh
}

// wpModel is the brute-force model of one configuration.
type wpModel struct {
	t    *testing.T
	cfg  wpConfig
	bh   *exec.HashAgg
	keys []int // group key columns
	wm   int64
	dl   int64
	late int64

	wins map[int64]*mwin  // fixed windows by end
	sess map[string]*mkey // sessions by group key
}

type mwin struct {
	start, end int64
	rows       [][]types.Value
	shown      map[string]string
	ver, cver  int
	cache      map[string]string
}

type mkey struct {
	rows   [][]types.Value
	shown  []mshown // by start, disjoint
	frozen []mshown // rows of freed sessions: they stay in the view
	ver    int
	cache  map[[3]int64]mshown
}

type mshown struct {
	start, end int64
	key, row   string
}

func newWPModel(t *testing.T, cfg wpConfig, bh *exec.HashAgg) *wpModel {
	m := &wpModel{t: t, cfg: cfg, bh: bh, wm: -1 << 62, dl: cfg.emit.Delay + cfg.emit.AllowLateness,
		wins: map[int64]*mwin{}, sess: map[string]*mkey{}}
	for _, g := range cfg.groupBy {
		m.keys = append(m.keys, wpCol(g).Idx)
	}
	return m
}

func floorAlign(t, n, off int64) int64 {
	d := t - off
	q := d / n
	if d%n != 0 && d < 0 {
		q--
	}
	return q*n + off
}

// windowsOf lists the [start, end) of the fixed windows holding t.
func (m *wpModel) windowsOf(t int64) [][2]int64 {
	ws := m.cfg.ws
	var out [][2]int64
	switch ws.Kind {
	case Tumble:
		s := floorAlign(t, ws.Size, ws.Offset)
		out = append(out, [2]int64{s, s + ws.Size})
	case Hop:
		for s := floorAlign(t, ws.Slide, ws.Offset); s > t-ws.Size; s -= ws.Slide {
			out = append(out, [2]int64{s, s + ws.Size})
		}
	case Cumulate:
		ps := floorAlign(t, ws.Size, ws.Offset)
		for k := int64(1); ; k++ {
			e := min(ps+k*ws.Slide, ps+ws.Size)
			if e > t {
				out = append(out, [2]int64{ps, e})
			}
			if e == ps+ws.Size {
				break
			}
		}
	}
	return out
}

func removeRow(t *testing.T, rows [][]types.Value, r []types.Value) [][]types.Value {
	t.Helper()
	id := string(appendKey(nil, r, nil))
	for i, x := range rows {
		if string(appendKey(nil, x, nil)) == id {
			return append(rows[:i], rows[i+1:]...)
		}
	}
	t.Fatalf("model: retraction of a row it does not hold")
	return nil
}

// row applies one input row.
func (m *wpModel) row(sign int64, r []types.Value) {
	if r[wpTS] == nil {
		return
	}
	ts := int64(r[wpTS].(types.TimestampValue))
	if m.cfg.ws.Kind == Session {
		if ts+m.cfg.ws.Gap+m.dl <= m.wm {
			m.late++
			return
		}
		var k string
		if len(m.keys) > 0 {
			k = string(appendKey(nil, r, m.keys))
		}
		mk := m.sess[k]
		if mk == nil {
			mk = &mkey{}
			m.sess[k] = mk
		}
		mk.ver++
		if sign > 0 {
			mk.rows = append(mk.rows, r)
		} else {
			mk.rows = removeRow(m.t, mk.rows, r)
		}
		return
	}
	wins := m.windowsOf(ts)
	late := len(wins) > 0
	for _, se := range wins {
		if se[1]+m.dl <= m.wm {
			continue
		}
		late = false
		w := m.wins[se[1]]
		if w == nil {
			w = &mwin{start: se[0], end: se[1], shown: map[string]string{}}
			m.wins[se[1]] = w
		}
		w.ver++
		if sign > 0 {
			w.rows = append(w.rows, r)
		} else {
			w.rows = removeRow(m.t, w.rows, r)
		}
	}
	if late {
		m.late++
	}
}

// aggregate runs the batch aggregation over rows: group key identity ->
// row identity, each prefixed with the window.
func (m *wpModel) aggregate(rows [][]types.Value, start, end int64) map[string]string {
	out := map[string]string{}
	if len(rows) == 0 {
		return out
	}
	batches := []arrow.RecordBatch{wpRecord(m.t, rows)}
	plan := *m.bh
	plan.Input = &exec.FuncScan{Name: "window", Cols: wpCols, Produce: func(*exec.Context) ([]arrow.RecordBatch, error) { return batches, nil }}
	it, err := plan.Open(&exec.Context{Eval: &expr.Context{}})
	if err != nil {
		m.t.Fatal(err)
	}
	defer it.Close()
	win := string(appendValueKey(appendValueKey(nil, types.TimestampValue(start)), types.TimestampValue(end)))
	nk := len(m.bh.GroupBy)
	for {
		b, err := it.Next()
		if err != nil {
			m.t.Fatalf("batch engine: %v", err)
		}
		if b == nil {
			return out
		}
		for i := 0; i < int(b.NumRows()); i++ {
			out[win+rowIdentity(b, i, m.bh.Cols, 0, nk)] = win + rowIdentity(b, i, m.bh.Cols, 0, len(m.bh.Cols))
		}
	}
}

func (m *wpModel) flushWin(w *mwin) {
	if w.cache == nil || w.cver != w.ver {
		w.cache, w.cver = m.aggregate(w.rows, w.start, w.end), w.ver
	}
	w.shown = w.cache
}

// session is one session of a key, computed from its rows.
type msession struct {
	first, last int64
	rows        [][]types.Value
}

func (m *wpModel) sessions(mk *mkey) []msession {
	rows := append([][]types.Value(nil), mk.rows...)
	ts := func(r []types.Value) int64 { return int64(r[wpTS].(types.TimestampValue)) }
	sort.SliceStable(rows, func(i, j int) bool { return ts(rows[i]) < ts(rows[j]) })
	var out []msession
	for _, r := range rows {
		if n := len(out); n > 0 && ts(r) < out[n-1].last+m.cfg.ws.Gap {
			out[n-1].last = ts(r)
			out[n-1].rows = append(out[n-1].rows, r)
		} else {
			out = append(out, msession{ts(r), ts(r), [][]types.Value{r}})
		}
	}
	return out
}

func (m *wpModel) sessionRow(mk *mkey, s msession) mshown {
	end := s.last + m.cfg.ws.Gap
	ck := [3]int64{s.first, s.last, int64(mk.ver)}
	if x, ok := mk.cache[ck]; ok {
		return x
	}
	res := m.aggregate(s.rows, s.first, end)
	if len(res) != 1 {
		m.t.Fatalf("model: a session of one key has %d groups", len(res))
	}
	var x mshown
	for k, r := range res {
		x = mshown{s.first, end, k, r}
	}
	if mk.cache == nil || len(mk.cache) > 1000 {
		mk.cache = map[[3]int64]mshown{}
	}
	mk.cache[ck] = x
	return x
}

// flushKey reconciles a key's shown sessions with its sessions whose end
// due accepts (the rule the operator documents).
func (m *wpModel) flushKey(mk *mkey, due func(end int64) bool) {
	var kept []mshown
	oi := 0
	for _, s := range m.sessions(mk) {
		end := s.last + m.cfg.ws.Gap
		for ; oi < len(mk.shown) && mk.shown[oi].end <= s.first; oi++ {
			if !due(mk.shown[oi].end) {
				kept = append(kept, mk.shown[oi])
			}
		}
		oj := oi
		for oj < len(mk.shown) && mk.shown[oj].start < end {
			oj++
		}
		run := mk.shown[oi:oj]
		oi = oj
		if !due(end) {
			kept = append(kept, run...)
			continue
		}
		kept = append(kept, m.sessionRow(mk, s))
	}
	for ; oi < len(mk.shown); oi++ {
		if !due(mk.shown[oi].end) {
			kept = append(kept, mk.shown[oi])
		}
	}
	mk.shown = kept
}

func (m *wpModel) eowc() bool { return m.cfg.emit.Mode == EmitOnWindowClose }

func (m *wpModel) watermark(v int64) {
	if v <= m.wm {
		return
	}
	old := m.wm
	m.wm = v
	e := m.cfg.emit
	if m.cfg.ws.Kind == Session {
		m.releaseSessions(v)
		return
	}
	for _, w := range m.wins {
		closes := m.eowc() && w.end+e.Delay > old && w.end+e.Delay <= v
		frees := w.end+m.dl > old && w.end+m.dl <= v && e.Mode != EmitEvery
		if closes || frees {
			m.flushWin(w)
		}
	}
}

// releaseSessions emits the sessions that are due at watermark v and
// frees those it releases.
func (m *wpModel) releaseSessions(v int64) {
	e := m.cfg.emit
	{
		by := m.dl
		if m.eowc() {
			by = e.Delay
		}
		for _, mk := range m.sess {
			m.flushKey(mk, func(end int64) bool { return end+by <= v })
			ss := m.sessions(mk)
			n := 0
			for n < len(ss) && ss[n].last+m.cfg.ws.Gap+m.dl <= v {
				n++
			}
			if n == 0 {
				continue
			}
			last := ss[n-1].last
			end := last + m.cfg.ws.Gap
			var rows [][]types.Value
			for _, r := range mk.rows {
				if int64(r[wpTS].(types.TimestampValue)) > last {
					rows = append(rows, r)
				}
			}
			mk.rows, mk.ver = rows, mk.ver+1
			var shown []mshown
			for _, x := range mk.shown {
				if x.start >= end {
					shown = append(shown, x)
				} else {
					mk.frozen = append(mk.frozen, x)
				}
			}
			mk.shown = shown
		}
	}
}

func (m *wpModel) barrier(tick bool) {
	e := m.cfg.emit
	all := e.Mode == EmitOnUpdate || (tick && (e.Mode == EmitEvery || e.EarlyEvery > 0))
	if m.cfg.ws.Kind == Session {
		// a session that a retraction ended below the watermark
		m.releaseSessions(m.wm)
		for _, mk := range m.sess {
			switch {
			case all:
				m.flushKey(mk, func(int64) bool { return true })
			case m.eowc():
				m.flushKey(mk, func(end int64) bool { return end+e.Delay <= m.wm })
			}
		}
		return
	}
	for _, w := range m.wins {
		if all || (m.eowc() && (e.EarlyEvery > 0 || e.AllowLateness > 0) && w.end+e.Delay <= m.wm) {
			m.flushWin(w)
		}
	}
}

func (m *wpModel) view() map[string]string {
	out := map[string]string{}
	for _, w := range m.wins {
		for k, r := range w.shown {
			out[k] = r
		}
	}
	for _, mk := range m.sess {
		for _, x := range append(mk.frozen, mk.shown...) {
			if _, ok := out[x.key]; ok {
				m.t.Fatalf("model: two rows of the session %q", x.key)
			}
			out[x.key] = x.row
		}
	}
	return out
}

// wpSeed varies the property test's inputs (go test -args -wpseed N ... is
// not wired; change it here to explore).
const wpSeed = 1

func TestWindowAggMatchesModel(t *testing.T) {
	epochs := 100
	if testing.Short() {
		epochs = 30
	}
	for ci, cfg := range wpConfigs() {
		for _, par := range []int{1, 3, 8} { // behind a hash exchange (parallel_test.go)
			name := cfg.name
			if par > 1 {
				name += fmt.Sprintf(" x%d", par)
			}
			t.Run(name, func(t *testing.T) {
				rng := rand.New(rand.NewSource(int64(ci)*7919 + wpSeed))
				w, bh := wpPlans(t, cfg)
				if par > 1 && len(w.GroupBy) == 0 {
					t.Skip("no key besides the window: one instance")
				}
				h := newWinHarnessN(t, w, par)
				m := newWPModel(t, cfg, bh)
				var live [][]types.Value
				stats := map[Op]int{}
				defer func() { t.Logf("%s: late %d ops %v view %d", cfg.name, m.late, stats, len(h.view)) }()
				now := int64(rng.Intn(40) - 20)
				period := time.Duration(cfg.emit.EarlyEvery+cfg.emit.Every) * time.Microsecond
				for epoch := 0; epoch < epochs; epoch++ {
					for c := rng.Intn(4); c > 0; c-- {
						var ops []Op
						var rows [][]types.Value
						for n := rng.Intn(8); n > 0; n-- {
							ts := now - int64(rng.Intn(9)) + int64(rng.Intn(6))
							if rng.Intn(5) == 0 {
								ts = now - int64(rng.Intn(30)) // often late
							}
							x := rng.Intn(10)
							if cfg.appendOnly {
								x = 9
							}
							switch {
							case x < 2 && len(live) > 0:
								i := rng.Intn(len(live))
								ops, rows = append(ops, Delete), append(rows, live[i])
								live = append(live[:i], live[i+1:]...)
							case x < 4 && len(live) > 0:
								i := rng.Intn(len(live))
								nr := wpRow(rng, ts)
								if rng.Intn(2) == 0 {
									copy(nr[:3], live[i][:3]) // same key and time
								}
								ops, rows = append(ops, UpdateBefore, UpdateAfter), append(rows, live[i], nr)
								live[i] = nr
							case x < 5 && len(live) > 0:
								nr := live[rng.Intn(len(live))]
								ops, rows = append(ops, Insert), append(rows, nr)
								live = append(live, nr)
							default:
								nr := wpRow(rng, ts)
								ops, rows = append(ops, Insert), append(rows, nr)
								live = append(live, nr)
							}
						}
						if len(rows) == 0 {
							continue
						}
						if cfg.appendOnly {
							ops = nil
						}
						h.send(ChunkMsg(&Chunk{Rec: wpRecord(t, rows), Ops: ops}))
						for i, r := range rows {
							op := Insert
							if ops != nil {
								op = ops[i]
							}
							m.row(op.Sign(), r)
						}
						if rng.Intn(2) == 0 {
							v := now - int64(rng.Intn(9))
							h.watermark(v)
							m.watermark(v)
						}
						now += int64(rng.Intn(5))
					}
					tick := period > 0 && rng.Intn(3) == 0
					if tick {
						h.clock.Advance(period)
					}
					msgs := h.barrier()
					m.barrier(tick)
					if h.lateCount() != m.late {
						t.Fatalf("epoch %d: %d late rows, the model %d", epoch, h.lateCount(), m.late)
					}
					if cfg.emit.Mode == EmitEvery && !tick {
						if rows := outRows(msgs, w.Cols); len(rows) > 0 {
							t.Fatalf("epoch %d: EVERY emitted before its tick: %v", epoch, rows)
						}
						continue
					}
					if cfg.emit.Mode == EmitOnWindowClose && cfg.emit.EarlyEvery == 0 && cfg.emit.AllowLateness == 0 {
						for _, msg := range msgs {
							if msg.Kind == KindChunk && msg.Chunk.Ops != nil {
								for _, op := range msg.Chunk.Ops {
									if op != Insert {
										t.Fatalf("epoch %d: ON WINDOW CLOSE emitted %v", epoch, op)
									}
								}
							}
						}
					}
					compareWinView(t, epoch, h.view, m.view())
					for _, msg := range msgs {
						if msg.Kind == KindChunk {
							for i := 0; i < msg.Chunk.Len(); i++ {
								stats[msg.Chunk.Op(i)]++
							}
						}
					}
				}
			})
		}
	}
}

func compareWinView(t *testing.T, epoch int, got, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Fatalf("epoch %d: row %q: got %q, want %q (view %d rows, model %d)", epoch, k, g, w, len(got), len(want))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Fatalf("epoch %d: row %q not in the model: %q", epoch, k, g)
		}
	}
}
