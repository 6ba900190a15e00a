package netx

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
)

var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// randChunk is a chunk of n random rows (some NULL), with ops unless
// appendOnly.
func randChunk(rng *rand.Rand, sch *arrow.Schema, n int, appendOnly bool) *stream.Chunk {
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for range n {
		for i, f := range sch.Fields() {
			fb := b.Field(i)
			if rng.IntN(10) == 0 {
				fb.AppendNull()
				continue
			}
			switch f.Type.ID() {
			case arrow.INT64:
				fb.(*array.Int64Builder).Append(rng.Int64N(1000) - 100)
			case arrow.STRING:
				fb.(*array.StringBuilder).Append(fmt.Sprintf("v%d", rng.IntN(100000)))
			case arrow.FLOAT64:
				fb.(*array.Float64Builder).Append(rng.Float64())
			}
		}
	}
	c := &stream.Chunk{Rec: b.NewRecordBatch()}
	if !appendOnly {
		c.Ops = make([]stream.Op, n)
		for i := range c.Ops {
			c.Ops[i] = stream.Op(rng.IntN(2)) // Insert or Delete
		}
		if n >= 2 {
			c.Ops[0], c.Ops[1] = stream.UpdateBefore, stream.UpdateAfter
		}
	}
	return c
}

// randMessages is a random stream: chunks (of two schemas), watermarks
// (a negative column too), barriers.
func randMessages(seed uint64, count int) []stream.Message {
	rng := rand.New(rand.NewPCG(seed, 1))
	other := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	var out []stream.Message
	epoch := uint64(1)
	for len(out) < count {
		switch r := rng.IntN(10); {
		case r < 6:
			out = append(out, stream.ChunkMsg(randChunk(rng, testSchema, 1+rng.IntN(300), rng.IntN(3) == 0)))
		case r == 6:
			out = append(out, stream.ChunkMsg(randChunk(rng, other, rng.IntN(5), false)))
		case r == 7:
			out = append(out, stream.WatermarkMsg(stream.Watermark{Col: rng.IntN(4) - 1, Value: rng.Int64() - rng.Int64()}))
		default:
			out = append(out, stream.BarrierMsg(stream.Barrier{Epoch: epoch, Checkpoint: rng.IntN(2) == 0}))
			epoch++
		}
	}
	return out
}

// sameMessage reports how a and b differ ("" when equal).
func sameMessage(a, b stream.Message) string {
	if a.Kind != b.Kind {
		return fmt.Sprintf("kind %d, want %d", b.Kind, a.Kind)
	}
	switch a.Kind {
	case stream.KindWatermark:
		if a.Watermark != b.Watermark {
			return fmt.Sprintf("watermark %+v, want %+v", b.Watermark, a.Watermark)
		}
	case stream.KindBarrier:
		if a.Barrier != b.Barrier {
			return fmt.Sprintf("barrier %+v, want %+v", b.Barrier, a.Barrier)
		}
	case stream.KindChunk:
		if !array.RecordEqual(a.Chunk.Rec, b.Chunk.Rec) || !a.Chunk.Rec.Schema().Equal(b.Chunk.Rec.Schema()) {
			return fmt.Sprintf("chunk %v, want %v", b.Chunk.Rec, a.Chunk.Rec)
		}
		if (a.Chunk.Ops == nil) != (b.Chunk.Ops == nil) || !slices.Equal(a.Chunk.Ops, b.Chunk.Ops) {
			return fmt.Sprintf("ops %v, want %v", b.Chunk.Ops, a.Chunk.Ops)
		}
	}
	return ""
}

func testOptions() Options {
	return Options{Credits: 4, Heartbeat: 20 * time.Millisecond, Timeout: 2 * time.Second, Generation: 7}
}

func listen(t *testing.T, opt Options) *Server {
	t.Helper()
	srv, err := Listen("127.0.0.1:0", opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// TestRoundTrip: every message arrives, in order and equal (rows, NULLs,
// ops or none, schema changes, watermarks, barriers), and the end is
// clean on both sides.
func TestRoundTrip(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := listen(t, testOptions())
	for seed := range uint64(3) {
		want := randMessages(seed, 300)
		id := fmt.Sprintf("job/x0/#%d", seed)
		r, err := srv.Expect(id)
		if err != nil {
			t.Fatal(err)
		}
		sent := make(chan error, 1)
		go func() {
			s, err := Dial(ctx, srv.Addr(), id, testOptions())
			if err != nil {
				sent <- err
				return
			}
			for _, m := range want {
				if err := s.Send(ctx, m); err != nil {
					sent <- err
					return
				}
			}
			sent <- s.Close(ctx)
		}()
		for i := 0; ; i++ {
			m, ok, err := r.Recv(ctx)
			if err != nil {
				t.Fatalf("seed %d: message %d: %v", seed, i, err)
			}
			if !ok {
				if i != len(want) {
					t.Fatalf("seed %d: ended after %d messages, want %d", seed, i, len(want))
				}
				break
			}
			if i >= len(want) {
				t.Fatalf("seed %d: more than %d messages", seed, len(want))
			}
			if d := sameMessage(want[i], m); d != "" {
				t.Fatalf("seed %d: message %d: %s", seed, i, d)
			}
		}
		if err := <-sent; err != nil {
			t.Fatalf("seed %d: sender: %v", seed, err)
		}
		r.Close()
	}
}

// TestBackpressure: a receiver whose consumer takes nothing lets the
// sender send exactly its credit, then Send blocks; taking messages
// grants more.
func TestBackpressure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opt := testOptions()
	srv := listen(t, opt)
	r, _ := srv.Expect("bp")
	s, err := Dial(ctx, srv.Addr(), "bp", opt)
	if err != nil {
		t.Fatal(err)
	}
	msgs := randMessages(9, 40)
	sent := 0
	for ; sent < opt.Credits; sent++ {
		if err := s.Send(ctx, msgs[sent]); err != nil {
			t.Fatal(err)
		}
	}
	// No credit left: Send blocks (here until its context ends), even
	// though heartbeats keep flowing.
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	err = s.Send(short, msgs[sent])
	cancelShort()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("send past the credit: %v, want it blocked", err)
	}
	// The consumer takes two (credits/2): two more may be sent.
	for range 2 {
		if _, _, err := r.Recv(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := s.Send(ctx, msgs[sent]); err != nil {
			t.Fatal(err)
		}
		sent++
	}
	short, cancelShort = context.WithTimeout(ctx, 300*time.Millisecond)
	err = s.Send(short, msgs[sent])
	cancelShort()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("send past the new credit: %v, want it blocked", err)
	}
	if s.Err() != nil || r.Err() != nil {
		t.Fatalf("a blocked stream failed: %v / %v", s.Err(), r.Err())
	}
	s.Abort(errors.New("done"))
	r.Close()
}

// TestAbortCrossesTheNetwork: a sender's failure reaches the receiver
// with its SQLSTATE, and a receiver's failure reaches the sender.
func TestAbortCrossesTheNetwork(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opt := testOptions()
	srv := listen(t, opt)

	r, _ := srv.Expect("a")
	s, err := Dial(ctx, srv.Addr(), "a", opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(ctx, randMessages(1, 1)[0]); err != nil {
		t.Fatal(err)
	}
	s.Abort(pgerr.New(pgerr.DivisionByZero, "division by zero"))
	var got error
	for got == nil {
		_, ok, err := r.Recv(ctx)
		if !ok && err == nil {
			t.Fatal("clean end after an abort")
		}
		got = err
	}
	if pgerr.CodeOf(got) != pgerr.DivisionByZero {
		t.Fatalf("receiver got %v (%s), want the sender's 22012", got, pgerr.CodeOf(got))
	}

	r2, _ := srv.Expect("b")
	s2, err := Dial(ctx, srv.Addr(), "b", opt)
	if err != nil {
		t.Fatal(err)
	}
	r2.Abort(pgerr.New(pgerr.DiskFull, "out of space"))
	msgs := randMessages(2, 1000)
	for i := 0; ; i++ {
		err := s2.Send(ctx, msgs[i%len(msgs)])
		if err == nil {
			continue
		}
		if pgerr.CodeOf(err) != pgerr.DiskFull {
			t.Fatalf("sender got %v, want the receiver's 53100", err)
		}
		break
	}
}

// TestRefusals: a wrong generation, an unknown stream and a sender that
// never comes each fail with an error, not a hang.
func TestRefusals(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opt := testOptions()
	opt.Timeout = 300 * time.Millisecond
	srv := listen(t, opt)
	if _, err := srv.Expect("g"); err != nil {
		t.Fatal(err)
	}
	old := opt
	old.Generation = 6
	if _, err := Dial(ctx, srv.Addr(), "g", old); err == nil || pgerr.CodeOf(err) != pgerr.ConnectionException {
		t.Fatalf("stale generation: %v", err)
	}
	if _, err := Dial(ctx, srv.Addr(), "nobody", opt); err == nil {
		t.Fatal("unknown stream accepted")
	}
	// A newer generation waits for the node to learn of it: accepted
	// once the server is at that generation and expects the stream.
	newer := opt
	newer.Generation = 8
	dialed := make(chan error, 1)
	go func() {
		s, err := Dial(ctx, srv.Addr(), "next", newer)
		if err == nil {
			err = s.Close(ctx)
		}
		dialed <- err
	}()
	srv.SetGeneration(8)
	rn, err := srv.Expect("next")
	if err != nil {
		t.Fatal(err)
	}
	if err := <-dialed; err != nil {
		t.Fatalf("newer generation: %v", err)
	}
	if _, ok, err := rn.Recv(ctx); ok || err != nil {
		t.Fatalf("newer generation's stream: ok %v err %v", ok, err)
	}
	// ... and refused when the server moved past it meanwhile.
	go func() {
		_, err := Dial(ctx, srv.Addr(), "skipped", newer)
		dialed <- err
	}()
	srv.SetGeneration(9)
	if _, err := srv.Expect("skipped"); err != nil {
		t.Fatal(err)
	}
	if err := <-dialed; err == nil || !strings.Contains(err.Error(), "generation 8 is not the current 9") {
		t.Fatalf("a generation the server moved past: %v", err)
	}
	r, _ := srv.Expect("late")
	start := time.Now()
	_, _, err = r.Recv(ctx)
	if err == nil || pgerr.CodeOf(err) != pgerr.ConnectionException {
		t.Fatalf("no sender: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("no sender noticed after %s", d)
	}
}

// TestDialBeforeExpect: a sender may connect before the receiving side
// expects its stream (the nodes start their parts independently); the
// handshake waits for the Expect.
func TestDialBeforeExpect(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opt := testOptions()
	srv := listen(t, opt)
	dialed := make(chan error, 1)
	go func() {
		s, err := Dial(ctx, srv.Addr(), "early", opt)
		if err == nil {
			err = s.Send(ctx, stream.BarrierMsg(stream.Barrier{Epoch: 5}))
		}
		if err == nil {
			err = s.Close(ctx)
		}
		dialed <- err
	}()
	// Expect once the connection is waiting in its handshake.
	for {
		srv.mu.Lock()
		n := len(srv.conns)
		srv.mu.Unlock()
		if n > 0 {
			break
		}
		select {
		case err := <-dialed:
			t.Fatalf("dial ended before the expect: %v", err)
		case <-time.After(time.Millisecond): // polling with the test's deadline
		}
	}
	r, err := srv.Expect("early")
	if err != nil {
		t.Fatal(err)
	}
	m, ok, err := r.Recv(ctx)
	if err != nil || !ok || m.Kind != stream.KindBarrier || m.Barrier.Epoch != 5 {
		t.Fatalf("%+v %v %v", m, ok, err)
	}
	if _, ok, err := r.Recv(ctx); ok || err != nil {
		t.Fatalf("end: %v %v", ok, err)
	}
	if err := <-dialed; err != nil {
		t.Fatal(err)
	}
}

// TestPumpCause: a Pump whose context is canceled with a cause (the
// sending job's failure) passes that error, SQLSTATE and all, to the
// receiver; without a cause the receiver sees 57014.
func TestPumpCause(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opt := testOptions()
	srv := listen(t, opt)
	for _, cause := range []error{pgerr.New(pgerr.DivisionByZero, "division by zero"), nil} {
		id := fmt.Sprint("cause-", cause == nil)
		r, _ := srv.Expect(id)
		pctx, stop := context.WithCancelCause(ctx)
		in := make(chan stream.Message)
		done := Outbound(pctx, srv.Addr(), id, opt, in, func(error) {})
		in <- stream.BarrierMsg(stream.Barrier{Epoch: 1})
		if _, ok, err := r.Recv(ctx); !ok || err != nil {
			t.Fatalf("first message: %v %v", ok, err)
		}
		stop(cause)
		<-done
		_, _, err := r.Recv(ctx)
		want := pgerr.QueryCanceled
		if cause != nil {
			want = pgerr.DivisionByZero
		}
		if pgerr.CodeOf(err) != want {
			t.Fatalf("cause %v: receiver got %v (%s), want %s", cause, err, pgerr.CodeOf(err), want)
		}
	}
}

// TestDialRetriesRefused: a sender that dials before the receiving node
// listens retries until it does (within the timeout); with nobody ever
// listening it fails after the timeout.
func TestDialRetriesRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nobody listens on addr now
	opt := testOptions()
	opt.Timeout = 400 * time.Millisecond
	start := time.Now()
	if _, err := Dial(ctx, addr, "x", opt); err == nil || pgerr.CodeOf(err) != pgerr.ConnectionException {
		t.Fatalf("dial nobody: %v", err)
	}
	if d := time.Since(start); d < opt.Timeout/2 {
		t.Fatalf("gave up after %s, want about the timeout", d)
	}
	opt.Timeout = 5 * time.Second
	dialed := make(chan error, 1)
	go func() {
		s, err := Dial(ctx, addr, "x", opt)
		if err == nil {
			err = s.Close(ctx)
		}
		dialed <- err
	}()
	srv, err := Listen(addr, opt) // the receiving node comes up
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	defer srv.Close()
	r, _ := srv.Expect("x")
	if _, ok, err := r.Recv(ctx); ok || err != nil {
		t.Fatalf("end: %v %v", ok, err)
	}
	if err := <-dialed; err != nil {
		t.Fatal(err)
	}
}

// TestExpectAgain: a stream expected again before its sender connected
// (a job's instance started again in the same assignment) replaces the
// earlier receiver, which fails at once; the sender then reaches the
// new one.
func TestExpectAgain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opt := testOptions()
	srv := listen(t, opt)
	r1, err := srv.Expect("again")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := srv.Expect("again")
	if err != nil {
		t.Fatalf("expected again: %v", err)
	}
	if _, _, err := r1.Recv(ctx); pgerr.CodeOf(err) != pgerr.ConnectionException || !strings.Contains(err.Error(), "expected again") {
		t.Fatalf("the replaced receiver: %v", err)
	}
	dialed := make(chan error, 1)
	go func() {
		s, err := Dial(ctx, srv.Addr(), "again", opt)
		if err == nil {
			err = s.Send(ctx, stream.BarrierMsg(stream.Barrier{Epoch: 3}))
		}
		if err == nil {
			err = s.Close(ctx)
		}
		dialed <- err
	}()
	m, ok, err := r2.Recv(ctx)
	if err != nil || !ok || m.Kind != stream.KindBarrier || m.Barrier.Epoch != 3 {
		t.Fatalf("the new receiver: %+v %v %v", m, ok, err)
	}
	if _, ok, err := r2.Recv(ctx); ok || err != nil {
		t.Fatalf("end: %v %v", ok, err)
	}
	if err := <-dialed; err != nil {
		t.Fatal(err)
	}
}
