package stream

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// snapshotBatchRows bounds the rows of one snapshot record batch.
const snapshotBatchRows = 4096

// View is the running state of a Materialize: the view's rows keyed by the
// stream key. One goroutine writes it (Run); any goroutine may read it
// (Snapshot) at any time and sees the rows as of the last completed epoch.
//
// During an epoch, changes go to a pending delta over the committed rows;
// at the epoch's barrier the delta is merged in and a new snapshot is
// published through an atomic pointer. A snapshot's record batches are built
// on its first read and cached until the next epoch that changes something.
type View struct {
	m     *Materialize
	keyed bool

	// Writer-owned (the Run goroutine only).
	delta map[string]entry // keys touched this epoch -> their state now
	order []string         // delta's keys in first-touch order
	buf   []byte
	// Checkpoints (view_state.go): keys changed since the last snapshot,
	// tracked only when the graph checkpoints; based once a snapshot or a
	// restore made the next snapshot's deltas meaningful.
	track bool
	dirty map[string]struct{}
	based bool

	// mu guards base against the writer's merge: the writer holds it to
	// merge a delta and publish, readers hold it shared to build batches.
	// The writer reads base without it (only the writer changes base).
	mu   sync.RWMutex
	base map[string]entry // the rows as of the last completed epoch
	// hold is held shared by readers that need the view to stay at its
	// current epoch for a while (Hold); publish takes it exclusively.
	hold sync.RWMutex
	cur  atomic.Pointer[snapshot]

	// gates are the epochs readers asked the view not to publish past
	// (HoldAt), with how many ask for each; gateCh is closed and replaced
	// when one is released. Guarded by gateMu.
	gateMu sync.Mutex
	gates  map[uint64]int
	gateCh chan struct{}
}

// entry is one key's state: its row and its multiplicity (0 or 1 for keyed
// views; n == 0 means absent).
//
// Within an epoch a keyed view may hold a key twice for a while: the
// instances of a parallel operator send their rows through one merge in
// no set order, so a key that moved between instances (an update that
// changed the exchange key) can arrive as an insert of the new row before
// the delete of the old one. extra holds the rows a key got while it held
// row (then n is 1 + len(extra)); by the epoch's barrier every key must
// hold one row again (View.checkKeys). Only entries of the delta have
// extra rows.
type entry struct {
	row   []types.Value
	n     int64
	extra [][]types.Value
}

// snapshot is one published epoch; data is shared with the following
// epochs until one of them changes a row.
type snapshot struct {
	epoch uint64
	data  *snapshotData
}

type snapshotData struct {
	once    sync.Once
	done    atomic.Bool
	batches []arrow.RecordBatch
	err     error
}

// NewView returns empty running state for m (epoch 0, no rows).
func (m *Materialize) NewView() *View {
	v := &View{m: m, keyed: len(m.Key) > 0, delta: map[string]entry{}, base: map[string]entry{}}
	v.cur.Store(&snapshot{data: &snapshotData{}})
	return v
}

// Run consumes input until it is closed or env.Ctx is canceled, applying
// chunks to the pending delta and publishing a snapshot at each barrier.
// Changes after the last barrier belong to no completed epoch and are never
// published. A retraction of a row the view does not hold (or, for a keyed
// view, an insert of a key it holds) is an internal error: it goes to
// env.Fail and Run returns it. Run returns the graph's first failure (nil if
// none) when the input closed, and the failure or the context's error when
// the graph stopped. Run must be called at most once per View.
func (v *View) Run(env *Env, input <-chan Message) error {
	return v.run(env, input, nil)
}

// Snapshot returns the view's rows as of the last completed epoch (no
// batches before the first). The batches are shared and immutable: callers
// must not release or modify them. Safe for concurrent use.
func (v *View) Snapshot() []arrow.RecordBatch {
	_, b, _ := v.SnapshotEpoch()
	return b
}

// Hold keeps the view at its current epoch (its writer waits before
// publishing the next one) until release is called, and returns that epoch.
// Snapshot and SnapshotEpoch may be called meanwhile. Hold briefly: the
// view's whole job waits.
func (v *View) Hold() (epoch uint64, release func()) {
	v.hold.RLock()
	return v.cur.Load().epoch, v.hold.RUnlock
}

// HoldAt keeps the view from publishing any epoch after e until release
// is called: its writer publishes up to e, then waits. A reader that
// holds some views at epoch e while others catch up (dataflow's
// ReadViews) gates the ones behind at e, so that they stop there instead
// of running past e before it holds them: under load, views that ran on
// kept the reader chasing them. Call it while the view cannot be past e
// (held below it). Safe for concurrent use.
func (v *View) HoldAt(e uint64) (release func()) {
	v.gateMu.Lock()
	if v.gates == nil {
		v.gates, v.gateCh = map[uint64]int{}, make(chan struct{})
	}
	v.gates[e]++
	v.gateMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			v.gateMu.Lock()
			if v.gates[e]--; v.gates[e] == 0 {
				delete(v.gates, e)
			}
			close(v.gateCh)
			v.gateCh = make(chan struct{})
			v.gateMu.Unlock()
		})
	}
}

// waitGates waits until no gate (HoldAt) is below epoch; false when done
// ends first.
func (v *View) waitGates(done <-chan struct{}, epoch uint64) bool {
	for {
		v.gateMu.Lock()
		blocked := false
		for g := range v.gates {
			blocked = blocked || g < epoch
		}
		ch := v.gateCh
		v.gateMu.Unlock()
		if !blocked {
			return true
		}
		select {
		case <-ch:
		case <-done:
			return false
		}
	}
}

// SnapshotEpoch is Snapshot with the epoch it is as of, and the error of
// building its batches (only possible if rows do not fit Cols, which Run
// refuses). Safe for concurrent use.
func (v *View) SnapshotEpoch() (uint64, []arrow.RecordBatch, error) {
	if s := v.cur.Load(); s.data.done.Load() {
		return s.epoch, s.data.batches, s.data.err
	}
	v.mu.RLock()
	defer v.mu.RUnlock()
	s := v.cur.Load() // base is as of s.epoch while mu is held
	s.data.once.Do(func() {
		s.data.batches, s.data.err = v.build()
		s.data.done.Store(true)
	})
	return s.epoch, s.data.batches, s.data.err
}

// build turns base into record batches; mu is held (shared).
func (v *View) build() ([]arrow.RecordBatch, error) {
	cols := v.m.Cols
	schema := types.ArrowSchema(cols)
	bs := newBuilders(cols)
	var out []arrow.RecordBatch
	rows := 0
	for _, e := range v.base {
		for j := int64(0); j < e.n; j++ {
			if err := bs.append(e.row); err != nil {
				return nil, err
			}
			if rows++; rows == snapshotBatchRows {
				out = append(out, bs.finish(schema, rows))
				rows = 0
			}
		}
	}
	if rows > 0 {
		out = append(out, bs.finish(schema, rows))
	}
	return out, nil
}

func (v *View) run(env *Env, in <-chan Message, out chan<- Message) error {
	marks := map[int]int64{} // highest watermark per column this epoch (for out)
	if env.Checkpoints != nil {
		v.track = true
		v.dirty = map[string]struct{}{}
	}
	bc := env.busyClock()
	for {
		bc.stop()
		var m Message
		var ok bool
		select {
		case m, ok = <-in:
		case <-env.Ctx.Done():
			if err := env.Err(); err != nil {
				return err
			}
			return env.Ctx.Err()
		}
		bc.start()
		if !ok {
			return env.Err() // an upstream failure also closes the input
		}
		switch m.Kind {
		case KindChunk:
			if err := v.apply(m.Chunk); err != nil {
				env.Fail(err)
				return err
			}
		case KindWatermark:
			if w, seen := marks[m.Watermark.Col]; !seen || m.Watermark.Value > w {
				marks[m.Watermark.Col] = m.Watermark.Value
			}
		case KindBarrier:
			if err := v.checkKeys(); err != nil {
				env.Fail(err)
				return err
			}
			var changes *Chunk
			if v.m.OnEpoch != nil || out != nil {
				changes = v.netChanges()
			}
			if !v.waitGates(env.Ctx.Done(), m.Barrier.Epoch) {
				if err := env.Err(); err != nil {
					return err
				}
				return env.Ctx.Err()
			}
			v.publish(m.Barrier.Epoch)
			if err := env.snapshot(v.m, m.Barrier, viewState{v}); err != nil {
				env.Fail(err)
				return err
			}
			if v.m.OnEpoch != nil {
				v.m.OnEpoch(m.Barrier.Epoch, changes)
			}
			if out == nil {
				continue
			}
			if changes != nil && !send(env, out, ChunkMsg(changes)) {
				return env.Err()
			}
			for col, val := range marks {
				if !send(env, out, WatermarkMsg(Watermark{Col: col, Value: val})) {
					return env.Err()
				}
				delete(marks, col)
			}
			if !send(env, out, m) {
				return env.Err()
			}
		}
	}
}

// apply adds a chunk's changes to the pending delta.
func (v *View) apply(c *Chunk) error {
	if err := checkSchema(c.Rec, v.m.Cols); err != nil {
		return err
	}
	for i := 0; i < c.Len(); i++ {
		row := rowValues(c.Rec, i, v.m.Cols)
		var idx []int
		if v.keyed {
			idx = v.m.Key
		}
		v.buf = appendKey(v.buf[:0], row, idx)
		e, touched := v.delta[string(v.buf)]
		if !touched {
			e = v.base[string(v.buf)]
		}
		op := c.Op(i)
		switch {
		case op.Sign() > 0:
			if v.keyed && e.n > 0 {
				e.extra = append(e.extra, row) // the key's other row should go before the barrier
			} else if e.n == 0 {
				e.row = row
			}
			e.n++
		case e.n > 0 && (!v.keyed || sameRow(e.row, row)):
			if e.n--; e.n == 0 {
				e.row = nil
			} else if v.keyed {
				e.row, e.extra = e.extra[0], e.extra[1:]
			}
		case v.keyed && dropRow(&e.extra, row):
			e.n--
		default:
			return fmt.Errorf("stream: materialize: %s of a row the view does not hold: %v", op, row)
		}
		if !touched {
			v.order = append(v.order, string(v.buf))
		}
		v.delta[string(v.buf)] = e
	}
	return nil
}

// dropRow removes the first row of *rows equal to row, reporting
// whether there was one.
func dropRow(rows *[][]types.Value, row []types.Value) bool {
	for i, r := range *rows {
		if sameRow(r, row) {
			*rows = slices.Delete(*rows, i, i+1)
			return true
		}
	}
	return false
}

// checkKeys fails when a key of a keyed view still holds two rows at the
// end of an epoch (see entry).
func (v *View) checkKeys() error {
	if !v.keyed {
		return nil
	}
	for _, k := range v.order {
		if e := v.delta[k]; e.n > 1 {
			return fmt.Errorf("stream: materialize: insert of a key the view already holds: %v", e.extra[0])
		}
	}
	return nil
}

// netChanges compares the touched keys' state now with base: the epoch's
// net changes in first-touch order, or nil if none.
func (v *View) netChanges() *Chunk {
	bs := newBuilders(v.m.Cols)
	var ops []Op
	add := func(op Op, row []types.Value) {
		_ = bs.append(row) // rows were read by ValueAt from batches of Cols' types
		ops = append(ops, op)
	}
	for _, k := range v.order {
		before, after := v.base[k], v.delta[k]
		switch {
		case v.keyed && before.n == 1 && after.n == 1:
			if !sameRow(before.row, after.row) {
				add(UpdateBefore, before.row)
				add(UpdateAfter, after.row)
			}
		case after.n > before.n:
			for j := before.n; j < after.n; j++ {
				add(Insert, after.row)
			}
		default:
			for j := after.n; j < before.n; j++ {
				add(Delete, before.row)
			}
		}
	}
	if len(ops) == 0 {
		return nil
	}
	c := &Chunk{Rec: bs.finish(types.ArrowSchema(v.m.Cols), len(ops)), Ops: ops}
	allInserts := true
	for _, op := range ops {
		allInserts = allInserts && op == Insert
	}
	if allInserts {
		c.Ops = nil
	}
	return c
}

// publish merges the delta into base and makes epoch the readers' snapshot,
// sharing the previous snapshot's batches if no row changed.
func (v *View) publish(epoch uint64) {
	v.hold.Lock()
	defer v.hold.Unlock()
	v.mu.Lock()
	changed := false
	for _, k := range v.order {
		before, e := v.base[k], v.delta[k]
		changed = changed || before.n != e.n || (v.keyed && e.n > 0 && !sameRow(before.row, e.row))
		if e.n == 0 {
			delete(v.base, k)
		} else {
			v.base[k] = e
		}
		if v.track {
			v.dirty[k] = struct{}{}
		}
	}
	data := v.cur.Load().data
	if changed {
		data = &snapshotData{}
	}
	v.cur.Store(&snapshot{epoch: epoch, data: data})
	v.mu.Unlock()
	clear(v.delta)
	v.order = v.order[:0]
}

// sameRow reports whether two rows are identical (as keys encode them).
func sameRow(a, b []types.Value) bool {
	return string(appendKey(nil, a, nil)) == string(appendKey(nil, b, nil))
}

// checkSchema refuses a chunk whose columns are not Cols' storage types.
func checkSchema(rec arrow.RecordBatch, cols []types.Column) error {
	if int(rec.NumCols()) != len(cols) {
		return fmt.Errorf("stream: materialize: chunk has %d columns, view has %d", rec.NumCols(), len(cols))
	}
	for i, c := range cols {
		if !arrow.TypeEqual(rec.Column(i).DataType(), c.Type.ArrowType()) {
			return fmt.Errorf("stream: materialize: column %q is %s, want %s", c.Name, rec.Column(i).DataType(), c.Type.ArrowType())
		}
	}
	return nil
}

// builders builds record batches of Cols from rows of Values.
type builders struct {
	cols []types.Column
	bs   []array.Builder
}

func newBuilders(cols []types.Column) *builders {
	b := &builders{cols: cols, bs: make([]array.Builder, len(cols))}
	for i, c := range cols {
		b.bs[i] = types.NewBuilder(memory.DefaultAllocator, c.Type)
	}
	return b
}

func (b *builders) append(row []types.Value) error {
	for i, c := range b.cols {
		if err := types.AppendValue(b.bs[i], row[i], c.Type); err != nil {
			return fmt.Errorf("stream: materialize: %w", err)
		}
	}
	return nil
}

// finish returns the rows appended since the last finish as a batch.
func (b *builders) finish(schema *arrow.Schema, rows int) arrow.RecordBatch {
	arrs := make([]arrow.Array, len(b.bs))
	for i, bb := range b.bs {
		arrs[i] = bb.NewArray()
	}
	return array.NewRecordBatch(schema, arrs, int64(rows))
}
