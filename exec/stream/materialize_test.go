package stream

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

var kvCols = []types.Column{{Name: "k", Type: types.TInt8}, {Name: "v", Type: types.TText}}

// kv builds a chunk of (k, v) rows from "k=v" strings.
func kv(ops []Op, rows ...string) *Chunk {
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	vb := array.NewStringBuilder(memory.DefaultAllocator)
	for _, r := range rows {
		var k int64
		var v string
		if _, err := fmt.Sscanf(strings.Replace(r, "=", " ", 1), "%d %s", &k, &v); err != nil {
			panic(err)
		}
		kb.Append(k)
		vb.Append(v)
	}
	rec := array.NewRecordBatch(types.ArrowSchema(kvCols), []arrow.Array{kb.NewArray(), vb.NewArray()}, int64(len(rows)))
	return &Chunk{Rec: rec, Ops: ops}
}

// rowsText renders batches' rows as sorted "c1=c2..." strings (order of a
// view's rows is unspecified).
func rowsText(bs []arrow.RecordBatch) []string {
	var out []string
	for _, b := range bs {
		for i := 0; i < int(b.NumRows()); i++ {
			parts := make([]string, b.NumCols())
			for c := range parts {
				parts[c] = b.Column(c).ValueStr(i)
			}
			out = append(out, strings.Join(parts, "="))
		}
	}
	slices.Sort(out)
	return out
}

// changesText renders a chunk of changes in order as "op:row".
func changesText(c *Chunk) []string {
	if c == nil {
		return nil
	}
	var out []string
	for i := 0; i < c.Len(); i++ {
		parts := make([]string, c.Rec.NumCols())
		for col := range parts {
			parts[col] = c.Rec.Column(col).ValueStr(i)
		}
		out = append(out, c.Op(i).String()+":"+strings.Join(parts, "="))
	}
	return out
}

type epochChanges struct {
	epoch   uint64
	changes *Chunk
}

// runView starts m's view on an unbuffered input; each completed epoch is
// reported on the returned channel after its snapshot is published.
func runView(t *testing.T, m *Materialize) (*View, chan<- Message, <-chan epochChanges, <-chan error) {
	t.Helper()
	epochs := make(chan epochChanges, 64)
	m.OnEpoch = func(e uint64, c *Chunk) { epochs <- epochChanges{e, c} }
	env := newEnv(t)
	v := m.NewView()
	in := make(chan Message)
	done := make(chan error, 1)
	go func() { done <- v.Run(env, in) }()
	return v, in, epochs, done
}

func expectRows(t *testing.T, v *View, epoch uint64, want ...string) {
	t.Helper()
	e, bs, err := v.SnapshotEpoch()
	if err != nil {
		t.Fatal(err)
	}
	if got := rowsText(bs); e != epoch || !slices.Equal(got, want) {
		t.Fatalf("snapshot epoch %d rows %q, want epoch %d rows %q", e, got, epoch, want)
	}
}

func expectEpoch(t *testing.T, epochs <-chan epochChanges, epoch uint64, want ...string) {
	t.Helper()
	ec := <-epochs
	if got := changesText(ec.changes); ec.epoch != epoch || !slices.Equal(got, want) {
		t.Fatalf("epoch %d changes %q, want epoch %d changes %q", ec.epoch, got, epoch, want)
	}
}

func TestMaterializeKeyedEpochs(t *testing.T) {
	v, in, epochs, done := runView(t, &Materialize{Key: []int{0}, Cols: kvCols})
	expectRows(t, v, 0)
	in <- ChunkMsg(kv(nil, "1=a", "2=b", "3=c"))
	expectRows(t, v, 0) // epoch 1 is not complete
	in <- BarrierMsg(Barrier{Epoch: 1})
	expectEpoch(t, epochs, 1, "insert:1=a", "insert:2=b", "insert:3=c")
	expectRows(t, v, 1, "1=a", "2=b", "3=c")

	in <- ChunkMsg(kv([]Op{Delete, UpdateBefore, UpdateAfter, Insert}, "2=b", "1=a", "1=x", "4=d"))
	in <- ChunkMsg(kv([]Op{UpdateBefore, UpdateAfter}, "3=c", "5=c")) // an update that moves the key
	expectRows(t, v, 1, "1=a", "2=b", "3=c")
	in <- BarrierMsg(Barrier{Epoch: 2})
	expectEpoch(t, epochs, 2, "delete:2=b", "update_before:1=a", "update_after:1=x", "insert:4=d", "delete:3=c", "insert:5=c")
	expectRows(t, v, 2, "1=x", "4=d", "5=c")

	close(in)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A key's new row may come before the delete of its old one within an
// epoch (parallel instances merged in no set order): the view holds both
// until the delete, and the epoch's net change is an update.
func TestMaterializeKeyedInsertBeforeDelete(t *testing.T) {
	v, in, epochs, done := runView(t, &Materialize{Key: []int{0}, Cols: kvCols})
	in <- ChunkMsg(kv(nil, "1=a", "2=b"))
	in <- BarrierMsg(Barrier{Epoch: 1})
	expectEpoch(t, epochs, 1, "insert:1=a", "insert:2=b")
	in <- ChunkMsg(kv(nil, "1=x", "2=y", "2=z")) // 2 even three times for a while
	in <- ChunkMsg(kv([]Op{Delete, Delete, Delete}, "1=a", "2=y", "2=b"))
	in <- BarrierMsg(Barrier{Epoch: 2})
	expectEpoch(t, epochs, 2, "update_before:1=a", "update_after:1=x", "update_before:2=b", "update_after:2=z")
	expectRows(t, v, 2, "1=x", "2=z")
	close(in)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestMaterializeWholeRowDuplicates(t *testing.T) {
	v, in, epochs, done := runView(t, &Materialize{Cols: cols})
	in <- ChunkMsg(chunk(nil, 5, 5, 7))
	in <- ChunkMsg(chunk(nil, 5))
	in <- BarrierMsg(Barrier{Epoch: 1})
	expectEpoch(t, epochs, 1, "insert:5", "insert:5", "insert:5", "insert:7")
	expectRows(t, v, 1, "5", "5", "5", "7")

	in <- ChunkMsg(chunk([]Op{Delete, Delete, Insert}, 5, 7, 8))
	expectRows(t, v, 1, "5", "5", "5", "7")
	in <- BarrierMsg(Barrier{Epoch: 2})
	expectEpoch(t, epochs, 2, "delete:5", "delete:7", "insert:8")
	expectRows(t, v, 2, "5", "5", "8")
	close(in)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestMaterializeNetChangesCancel(t *testing.T) {
	v, in, epochs, done := runView(t, &Materialize{Key: []int{0}, Cols: kvCols})
	in <- ChunkMsg(kv(nil, "1=a"))
	in <- BarrierMsg(Barrier{Epoch: 1})
	expectEpoch(t, epochs, 1, "insert:1=a")
	_, first, _ := v.SnapshotEpoch()

	// Insert then delete of the same row, and an update to the same values:
	// no net change, and the snapshot's batches are reused.
	in <- ChunkMsg(kv([]Op{Insert, Delete, UpdateBefore, UpdateAfter}, "9=z", "9=z", "1=a", "1=a"))
	in <- BarrierMsg(Barrier{Epoch: 2})
	expectEpoch(t, epochs, 2)
	expectRows(t, v, 2, "1=a")
	if _, again, _ := v.SnapshotEpoch(); len(first) != 1 || len(again) != 1 || first[0] != again[0] {
		t.Fatalf("unchanged epoch rebuilt its snapshot: %v then %v", first, again)
	}

	// A delete then re-insert with new values is an update.
	in <- ChunkMsg(kv([]Op{Delete}, "1=a"))
	in <- ChunkMsg(kv([]Op{Insert, Insert}, "1=b", "2=c"))
	in <- BarrierMsg(Barrier{Epoch: 3})
	ec := <-epochs
	if got := changesText(ec.changes); !slices.Equal(got, []string{"update_before:1=a", "update_after:1=b", "insert:2=c"}) {
		t.Fatalf("epoch 3 changes %q", got)
	}
	expectRows(t, v, 3, "1=b", "2=c")
	close(in)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestMaterializeAllInsertsHaveNilOps(t *testing.T) {
	_, in, epochs, done := runView(t, &Materialize{Cols: cols})
	in <- ChunkMsg(chunk([]Op{Insert, Insert, Delete}, 1, 2, 2))
	in <- BarrierMsg(Barrier{Epoch: 1})
	ec := <-epochs
	if ec.changes == nil || ec.changes.Ops != nil || ec.changes.Len() != 1 {
		t.Fatalf("changes %+v", ec.changes)
	}
	close(in)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestMaterializeBadRetractionFails(t *testing.T) {
	cases := []struct {
		name string
		m    *Materialize
		msgs []Message
		want string
	}{
		{"absent whole row", &Materialize{Cols: cols},
			[]Message{ChunkMsg(chunk(nil, 1)), ChunkMsg(chunk([]Op{Delete}, 2))}, "delete of a row the view does not hold"},
		{"retracted twice", &Materialize{Cols: cols},
			[]Message{ChunkMsg(chunk(nil, 1)), BarrierMsg(Barrier{Epoch: 1}), ChunkMsg(chunk([]Op{Delete, UpdateBefore}, 1, 1))}, "update_before of a row the view does not hold"},
		{"absent key", &Materialize{Key: []int{0}, Cols: kvCols},
			[]Message{ChunkMsg(kv([]Op{UpdateBefore, UpdateAfter}, "1=a", "1=b"))}, "update_before of a row the view does not hold"},
		{"key with other values", &Materialize{Key: []int{0}, Cols: kvCols},
			[]Message{ChunkMsg(kv(nil, "1=a")), ChunkMsg(kv([]Op{Delete}, "1=b"))}, "delete of a row the view does not hold"},
		{"key inserted twice", &Materialize{Key: []int{0}, Cols: kvCols},
			[]Message{ChunkMsg(kv(nil, "1=a", "1=b")), BarrierMsg(Barrier{Epoch: 1})}, "insert of a key the view already holds"},
		{"key held twice at the barrier", &Materialize{Key: []int{0}, Cols: kvCols},
			[]Message{ChunkMsg(kv(nil, "1=a")), BarrierMsg(Barrier{Epoch: 1}), ChunkMsg(kv(nil, "1=b")), BarrierMsg(Barrier{Epoch: 2})},
			"insert of a key the view already holds"},
		{"other row of a key held twice", &Materialize{Key: []int{0}, Cols: kvCols},
			[]Message{ChunkMsg(kv(nil, "1=a", "1=b")), ChunkMsg(kv([]Op{Delete}, "1=c"))}, "delete of a row the view does not hold"},
		{"wrong columns", &Materialize{Cols: cols},
			[]Message{ChunkMsg(kv(nil, "1=a"))}, "chunk has 2 columns, view has 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			in := make(chan Message, len(tc.msgs))
			for _, m := range tc.msgs {
				in <- m
			}
			close(in)
			err := tc.m.NewView().Run(env, in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if env.Err() != err {
				t.Fatalf("env.Err() = %v, want %v", env.Err(), err)
			}
		})
	}
}

// Readers on other goroutines always see one completed epoch: epoch e
// inserts row e and deletes row e-1, so the snapshot of epoch e is exactly {e}.
func TestMaterializeConcurrentReaders(t *testing.T) {
	const epochs = 200
	env := newEnv(t)
	v := (&Materialize{Cols: cols}).NewView()
	in := make(chan Message, ChannelSize)
	done := make(chan error, 1)
	go func() { done <- v.Run(env, in) }()

	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last uint64
			for {
				select {
				case <-stop:
					return
				default:
				}
				e, bs, err := v.SnapshotEpoch()
				want := []string{fmt.Sprint(e)}
				if e == 0 {
					want = nil
				}
				if got := rowsText(bs); err != nil || e < last || !slices.Equal(got, want) {
					errs <- fmt.Errorf("epoch %d (after %d): rows %q, err %v", e, last, got, err)
					return
				}
				last = e
			}
		}()
	}
	for e := int64(1); e <= epochs; e++ {
		in <- ChunkMsg(chunk(nil, e))
		if e > 1 {
			in <- ChunkMsg(chunk([]Op{Delete}, e-1))
		}
		in <- BarrierMsg(Barrier{Epoch: uint64(e)})
	}
	close(in)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	expectRows(t, v, epochs, fmt.Sprint(epochs))
}

func TestMaterializeAsNodeForwardsNetChanges(t *testing.T) {
	env := newEnv(t)
	in := make(chan Message, 8)
	in <- ChunkMsg(chunk(nil, 1, 2))
	in <- WatermarkMsg(Watermark{Col: 0, Value: 5})
	in <- WatermarkMsg(Watermark{Col: 0, Value: 3})
	in <- ChunkMsg(chunk([]Op{Delete}, 1))
	in <- BarrierMsg(Barrier{Epoch: 1, Checkpoint: true})
	in <- BarrierMsg(Barrier{Epoch: 2})
	in <- ChunkMsg(chunk(nil, 9)) // no barrier: never completes
	close(in)
	m := &Materialize{Input: &source{in}, Cols: cols}
	got := drain(t, env, m.Start(env, []<-chan Message{in}))
	if len(got) != 4 {
		t.Fatalf("messages %+v", got)
	}
	if c := changesText(got[0].Chunk); got[0].Kind != KindChunk || !slices.Equal(c, []string{"insert:2"}) {
		t.Fatalf("changes %+v", got[0])
	}
	if got[1].Kind != KindWatermark || got[1].Watermark.Value != 5 {
		t.Fatalf("watermark %+v", got[1])
	}
	if got[2].Kind != KindBarrier || got[2].Barrier.Epoch != 1 || !got[2].Barrier.Checkpoint {
		t.Fatalf("barrier %+v", got[2])
	}
	if got[3].Kind != KindBarrier || got[3].Barrier.Epoch != 2 {
		t.Fatalf("barrier %+v", got[3])
	}
}

// Whole-row keys are identity: numeric 1.0 and 1.00 are different rows (a
// delete of 1.00 leaves 1.0 showing), and NULLs are rows like any other.
func TestMaterializeWholeRowIdentity(t *testing.T) {
	numCols := []types.Column{{Name: "n", Type: types.TNumeric}, {Name: "f", Type: types.TFloat8}}
	mk := func(ops []Op, rows ...[2]types.Value) *Chunk {
		nb := types.NewBuilder(memory.DefaultAllocator, types.TNumeric)
		fb := types.NewBuilder(memory.DefaultAllocator, types.TFloat8)
		for _, r := range rows {
			if err := types.AppendValue(nb, r[0], types.TNumeric); err != nil {
				t.Fatal(err)
			}
			if err := types.AppendValue(fb, r[1], types.TFloat8); err != nil {
				t.Fatal(err)
			}
		}
		return &Chunk{Rec: array.NewRecordBatch(types.ArrowSchema(numCols), []arrow.Array{nb.NewArray(), fb.NewArray()}, int64(len(rows))), Ops: ops}
	}
	env := newEnv(t)
	v := (&Materialize{Cols: numCols}).NewView()
	in := make(chan Message, 8)
	in <- ChunkMsg(mk(nil, [2]types.Value{"1.0", 0.0}, [2]types.Value{"1.00", 0.0}, [2]types.Value{nil, nil}, [2]types.Value{nil, nil}))
	in <- ChunkMsg(mk([]Op{Delete, Delete}, [2]types.Value{"1.00", 0.0}, [2]types.Value{nil, nil}))
	in <- BarrierMsg(Barrier{Epoch: 1})
	close(in)
	if err := v.Run(env, in); err != nil {
		t.Fatal(err)
	}
	expectRows(t, v, 1, "(null)=(null)", "1.0=0")
}

// TestViewHoldAt: a view gated at epoch e publishes up to e and waits
// before publishing past it until the gate is released; two gates at
// different epochs stop it at the lower; a gate's release is idempotent.
func TestViewHoldAt(t *testing.T) {
	v, in, epochs, done := runView(t, &Materialize{Key: []int{0}, Cols: kvCols})
	in <- BarrierMsg(Barrier{Epoch: 1})
	expectEpoch(t, epochs, 1)
	low, high := v.HoldAt(2), v.HoldAt(3)
	in <- ChunkMsg(kv(nil, "1=a"))
	in <- BarrierMsg(Barrier{Epoch: 2})
	expectEpoch(t, epochs, 2, "insert:1=a")
	sent := make(chan struct{})
	go func() {
		in <- ChunkMsg(kv(nil, "2=b"))
		in <- BarrierMsg(Barrier{Epoch: 3})
		close(sent)
	}()
	<-sent // the writer took the barrier of epoch 3: it waits at the gate
	select {
	case in <- ChunkMsg(kv(nil, "3=c")): // (in is unbuffered: taken only past the gate)
		t.Fatal("the writer went past the gate at 2")
	case ec := <-epochs:
		t.Fatalf("published epoch %d past the gate at 2", ec.epoch)
	default:
	}
	expectRows(t, v, 2, "1=a")
	low()
	low()
	expectEpoch(t, epochs, 3, "insert:2=b")
	in <- BarrierMsg(Barrier{Epoch: 4})
	high()
	expectEpoch(t, epochs, 4)
	close(in)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
