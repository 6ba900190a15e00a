package nexmark

import (
	"bytes"
	"errors"
	"io"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

func TestCounts(t *testing.T) {
	for _, n := range []int64{1, 49, 50, 51, 50000, 123457} {
		s := collect(t, Config{Events: n}, 4096)
		// Independent count: 1 person, 3 auctions, 46 bids per 50 events.
		var wp, wa, wb int
		for i := int64(0); i < n; i++ {
			switch m := i % 50; {
			case m == 0:
				wp++
			case m < 4:
				wa++
			default:
				wb++
			}
		}
		if len(s.person) != wp || len(s.auction) != wa || len(s.bid) != wb || s.events != n {
			t.Errorf("events=%d: got %d/%d/%d rows over %d events, want %d/%d/%d", n,
				len(s.person), len(s.auction), len(s.bid), s.events, wp, wa, wb)
		}
	}
	s := collect(t, Config{Events: 50000}, 1000)
	if len(s.person) != 1000 || len(s.auction) != 3000 || len(s.bid) != 46000 {
		t.Errorf("50000 events: %d persons, %d auctions, %d bids", len(s.person), len(s.auction), len(s.bid))
	}
}

func TestEOFAndValidate(t *testing.T) {
	g := New(Config{Events: 10})
	if b, err := g.Next(100); err != nil || b.Events != 10 {
		t.Fatalf("first Next: %v, %d events", err, b.Events)
	}
	if _, err := g.Next(100); !errors.Is(err, io.EOF) {
		t.Fatalf("second Next: %v, want io.EOF", err)
	}
	b, err := New(Config{Table: "bid"}).Next(0)
	if err != nil || b.Bid.NumRows() != DefaultBatchRows {
		t.Fatalf("Next(0): %v, %d rows", err, b.Bid.NumRows())
	}
	for _, cfg := range []Config{{Table: "bids"}, {Events: -1}, {EventsPerSecond: -5}, {FirstEventID: -1}} {
		_, err := New(cfg).Next(10)
		if pgerr.CodeOf(err) != pgerr.InvalidParameterValue {
			t.Errorf("%+v: got %v, want 22023", cfg, err)
		}
	}
}

func ipcBytes(t *testing.T, recs ...arrow.RecordBatch) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(recs[0].Schema()))
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDeterminism(t *testing.T) {
	gen := func(seed uint64) [3][]byte {
		b, err := New(Config{Seed: seed}).Next(20000)
		if err != nil {
			t.Fatal(err)
		}
		return [3][]byte{ipcBytes(t, b.Person), ipcBytes(t, b.Auction), ipcBytes(t, b.Bid)}
	}
	a, b, c := gen(7), gen(7), gen(8)
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Errorf("table %d: same seed gave different bytes", i)
		}
		if bytes.Equal(a[i], c[i]) {
			t.Errorf("table %d: different seeds gave the same bytes", i)
		}
	}
	// A different seed changes the data, never the ids or times.
	s7 := collect(t, Config{Events: 5000, Seed: 7}, 5000)
	s8 := collect(t, Config{Events: 5000, Seed: 8}, 5000)
	for i := range s7.person {
		if s7.person[i][0] != s8.person[i][0] || s7.person[i][6] != s8.person[i][6] {
			t.Fatalf("person %d: id/time differ across seeds", i)
		}
	}
	for i := range s7.auction {
		if s7.auction[i][0] != s8.auction[i][0] || s7.auction[i][5] != s8.auction[i][5] {
			t.Fatalf("auction %d: id/time differ across seeds", i)
		}
	}
}

func TestBatchSplitAndTableFilter(t *testing.T) {
	whole := collect(t, Config{Events: 10000, Seed: 3}, 10000)
	split := collect(t, Config{Events: 10000, Seed: 3}, 1429)
	if len(split.watermarks) != 7 {
		t.Fatalf("1429-row steps: %d steps, want 7", len(split.watermarks))
	}
	if !reflect.DeepEqual(whole.person, split.person) || !reflect.DeepEqual(whole.auction, split.auction) ||
		!reflect.DeepEqual(whole.bid, split.bid) {
		t.Fatal("splitting 10000 events into 7 steps changed the rows")
	}
	for _, tc := range []struct {
		table string
		want  [][]string
	}{{"person", whole.person}, {"auction", whole.auction}, {"bid", whole.bid}} {
		one := collect(t, Config{Events: 10000, Seed: 3, Table: tc.table}, 333)
		got := map[string][][]string{"person": one.person, "auction": one.auction, "bid": one.bid}
		if !reflect.DeepEqual(got[tc.table], tc.want) {
			t.Errorf("table=%s alone differs from the combined stream", tc.table)
		}
		for name, rows := range got {
			if name != tc.table && rows != nil {
				t.Errorf("table=%s also produced %s rows", tc.table, name)
			}
		}
	}
	// A single-table step holds max rows of that table.
	b, err := New(Config{Table: "auction"}).Next(30)
	if err != nil || b.Auction.NumRows() != 30 || b.Bid != nil || b.Person != nil {
		t.Fatalf("auction-only step: %v %+v", err, b)
	}
	if b.Events != 50*9+4 { // the 30th auction is event 9*50+3
		t.Errorf("30 auctions consumed %d events, want %d", b.Events, 50*9+4)
	}
}

func TestTimes(t *testing.T) {
	for _, rate := range []float64{10000, 3, 1e6, 7e6} {
		cfg := Config{Events: 20000, EventsPerSecond: rate}
		g := New(cfg)
		base := DefaultBaseTime.UnixMicro()
		delay := 1e6 / rate
		var n int64 // event number of the next row of each kind, found independently
		var prevWM int64 = -1 << 62
		for {
			b, err := g.Next(1000)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			pt, at, bt := int64Col(b.Person, "date_time"), int64Col(b.Auction, "date_time"), int64Col(b.Bid, "date_time")
			var pi, ai, bi int
			last := int64(0)
			for end := n + b.Events; n < end; n++ {
				want := base + int64(float64(n)*delay)
				var got int64
				switch m := n % 50; {
				case m == 0:
					got, pi = pt[pi], pi+1
				case m < 4:
					got, ai = at[ai], ai+1
				default:
					got, bi = bt[bi], bi+1
				}
				if got != want {
					t.Fatalf("rate %g: event %d at %d, want %d", rate, n, got, want)
				}
				if got < last {
					t.Fatalf("rate %g: event %d goes back in time", rate, n)
				}
				last = got
			}
			if int64(b.Watermark) != last || last < prevWM {
				t.Fatalf("rate %g: watermark %d, last event %d, previous watermark %d", rate, b.Watermark, last, prevWM)
			}
			prevWM = last
		}
	}
	// First event is person 1000 at the base time; spacing 100 µs at 10 K/s.
	b, _ := New(Config{BaseTime: time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)}).Next(3)
	if id := int64Col(b.Person, "id"); len(id) != 1 || id[0] != 1000 {
		t.Fatalf("first person: %v", id)
	}
	if ts := int64Col(b.Person, "date_time")[0]; ts != time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC).UnixMicro() {
		t.Errorf("first event time %d", ts)
	}
	if ts := int64Col(b.Auction, "date_time"); ts[1]-ts[0] != 100 {
		t.Errorf("spacing %d µs, want 100", ts[1]-ts[0])
	}
	if int64(b.Watermark) != time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC).UnixMicro()+200 {
		t.Errorf("watermark %d", b.Watermark)
	}
}

func TestSchemas(t *testing.T) {
	b, err := New(Config{}).Next(100)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rec  arrow.RecordBatch
		cols []types.Column
	}{{b.Person, PersonColumns}, {b.Auction, AuctionColumns}, {b.Bid, BidColumns}} {
		if !tc.rec.Schema().Equal(types.ArrowSchema(tc.cols)) {
			t.Errorf("schema %v, want %v", tc.rec.Schema(), types.ArrowSchema(tc.cols))
		}
	}
	if Columns("bid")[5].Name != "date_time" || Columns("x") != nil {
		t.Error("Columns lookup")
	}
}

func TestPriceApproximation(t *testing.T) {
	// price() must equal round(10^(6u)*100) computed with math.Pow, up to a
	// cent where the exact value sits on a rounding boundary.
	r := rng{s: 42}
	off := 0
	for i := 0; i < 200000; i++ {
		r0 := r
		u := r0.float()
		want := int64(math.Round(math.Pow(10, u*6) * 100))
		got := r.price()
		if d := got - want; d < -1 || d > 1 {
			t.Fatalf("u=%v: price %d, want %d", u, got, want)
		} else if d != 0 {
			off++
		}
	}
	if off > 2 {
		t.Errorf("%d of 200000 prices are a cent off math.Pow's", off)
	}
}

func TestFirstEventID(t *testing.T) {
	// Event ids start at FirstEventID; event numbers (and times) at 0.
	b, err := New(Config{FirstEventID: 103, Events: 50}).Next(100)
	if err != nil {
		t.Fatal(err)
	}
	// ids 103..152: auctions at ids 103 (epoch 2, third: 2*3+2), 151 and 152
	// (epoch 3: 9, 10); the person at id 150 (epoch 3).
	if p := int64Col(b.Person, "id"); len(p) != 1 || p[0] != 1003 {
		t.Errorf("persons %v, want [1003]", p)
	}
	if a := int64Col(b.Auction, "id"); !reflect.DeepEqual(a, []int64{1008, 1009, 1010}) {
		t.Errorf("auctions %v, want [1008 1009 1010]", a)
	}
	if pt := int64Col(b.Person, "date_time")[0]; pt != DefaultBaseTime.UnixMicro()+47*100 {
		t.Errorf("person at %d, want event number 47", pt)
	}
	if n := b.Bid.NumRows(); n != 46 {
		t.Errorf("%d bids, want 46", n)
	}
}
