package catalog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/storage"
)

// TestSequenceLogAhead: NextVal writes the value file once per seqLogAhead
// calls, and a reopened catalog continues after the written value.
func TestSequenceLogAhead(t *testing.T) {
	dir := t.TempDir()
	st, err := storage.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := openTest(t, dir, st)
	opts, err := ApplySeqSpec(nil, SeqSpec{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.CreateSequence(&Relation{Name: "ls", Seq: opts})
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for i := 0; i < 40; i++ {
		if last, err = c.NextVal(r.OID, &SeqLocal{}); err != nil {
			t.Fatal(err)
		}
	}
	c2 := openTest(t, dir, st) // as after a crash: the first catalog is never closed
	v, err := c2.NextVal(r.OID, &SeqLocal{})
	if err != nil {
		t.Fatal(err)
	}
	// 1 logged 33, 34 logged 66: the next run starts at 67.
	if last != 40 || v != 2*seqLogAhead+3 {
		t.Fatalf("last %d, after reopen %d; want 40 and %d", last, v, 2*seqLogAhead+3)
	}
}

// seqCatalog opens a catalog on dir with one sequence made of spec.
func seqCatalog(t *testing.T, dir string, spec SeqSpec) (*Catalog, *Relation) {
	t.Helper()
	st, err := storage.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := openTest(t, dir, st)
	opts, err := ApplySeqSpec(nil, spec)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.CreateSequence(&Relation{Name: "cs", Seq: opts})
	if err != nil {
		t.Fatal(err)
	}
	return c, r
}

func i64(v int64) *int64 { return &v }

// nexts calls NextVal n times for session l and returns the values.
func nexts(t *testing.T, c *Catalog, oid uint32, l *SeqLocal, n int) []int64 {
	t.Helper()
	var out []int64
	for i := 0; i < n; i++ {
		v, err := c.NextVal(oid, l)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func eqVals(t *testing.T, what string, got []int64, want ...int64) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// TestSequenceCache: with CACHE n each session takes blocks of n values;
// another session's setval leaves a block alone, an ALTER SEQUENCE of its
// parameters drops it, a block stops at a bound (and never wraps), and
// log_cnt counts as PostgreSQL 15's does (values checked against it).
func TestSequenceCache(t *testing.T) {
	c, r := seqCatalog(t, t.TempDir(), SeqSpec{Cache: i64(10)})
	var a, b SeqLocal
	eqVals(t, "A", nexts(t, c, r.OID, &a, 1), 1)
	eqVals(t, "B", nexts(t, c, r.OID, &b, 1), 11)
	if last, logCnt, called, _ := c.SeqRow(r.OID); last != 20 || logCnt != 22 || !called {
		t.Fatalf("SeqRow = %d %d %v, want 20 22 true", last, logCnt, called)
	}
	if v, _ := c.SeqLastValue(r); v != 20 {
		t.Fatalf("last_value %d, want 20", v)
	}
	eqVals(t, "A", nexts(t, c, r.OID, &a, 2), 2, 3)
	if err := c.SetVal(r.OID, 100, true, &b); err != nil {
		t.Fatal(err)
	}
	if b.Last != 100 || b.Cached != 100 {
		t.Fatalf("B after setval: %+v", b)
	}
	eqVals(t, "A keeps its block", nexts(t, c, r.OID, &a, 1), 4)
	eqVals(t, "B after setval", nexts(t, c, r.OID, &b, 1), 101)
	if err := c.SetVal(r.OID, 500, false, &b); err != nil {
		t.Fatal(err)
	}
	if b.Last != 101 || b.Cached != 101 {
		t.Fatalf("setval(false) changes currval: %+v", b)
	}
	opts := *c.Relation(r.OID).Seq
	opts.Max = 505
	if err := c.AlterSequence(r.OID, &opts, nil, true); err != nil {
		t.Fatal(err)
	}
	eqVals(t, "A after ALTER", nexts(t, c, r.OID, &a, 1), 500)
	if a.Cached != 505 {
		t.Fatalf("A's block should stop at MAXVALUE 505: %+v", a)
	}
	if _, err := c.NextVal(r.OID, &b); err == nil || !strings.Contains(err.Error(), "reached maximum value") {
		t.Fatalf("B past the bound: %v", err)
	}
	eqVals(t, "A uses its block to the bound", nexts(t, c, r.OID, &a, 5), 501, 502, 503, 504, 505)
	// OWNED BY alone (params false) keeps blocks.
	opts.Max, opts.Cycle = 1000, true
	if err := c.AlterSequence(r.OID, &opts, i64(995), true); err != nil {
		t.Fatal(err)
	}
	eqVals(t, "A after RESTART", nexts(t, c, r.OID, &a, 1), 995)
	if err := c.AlterSequence(r.OID, &opts, nil, false); err != nil {
		t.Fatal(err)
	}
	eqVals(t, "A keeps its block over OWNED BY", nexts(t, c, r.OID, &a, 5), 996, 997, 998, 999, 1000)
	if a.Cached != 1000 {
		t.Fatalf("a block does not wrap: %+v", a)
	}
	eqVals(t, "A wraps on its next block", nexts(t, c, r.OID, &a, 2), 1, 2)
}

// BenchmarkNextVal measures nextval on one sequence, fsync included (one
// per seqLogAhead values), with CACHE 1 and with CACHE 100 (one session).
func BenchmarkNextVal(b *testing.B) {
	for _, cache := range []int64{1, 100} {
		b.Run(fmt.Sprintf("cache=%d", cache), func(b *testing.B) {
			st, err := storage.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			c, err := open(b.TempDir(), st)
			if err != nil {
				b.Fatal(err)
			}
			opts, _ := ApplySeqSpec(nil, SeqSpec{Cache: &cache})
			r, err := c.CreateSequence(&Relation{Name: "bs", Seq: opts})
			if err != nil {
				b.Fatal(err)
			}
			var l SeqLocal
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := c.NextVal(r.OID, &l); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSequenceDurableAndRestore: SeqDurable is what a restart continues
// from (the start before any nextval, then the logged value ahead of
// every value handed out); RestoreSeq sets it durably and drops the
// sessions' preallocated values.
func TestSequenceDurableAndRestore(t *testing.T) {
	dir := t.TempDir()
	c, r := seqCatalog(t, dir, SeqSpec{Start: ptr(int64(10)), Cache: ptr(int64(5))})
	if last, called, err := c.SeqDurable(r.OID); err != nil || last != 10 || called {
		t.Fatalf("before nextval: %d %v %v, want 10 false", last, called, err)
	}
	var sess SeqLocal
	var v int64
	var err error
	for i := 0; i < 3; i++ {
		if v, err = c.NextVal(r.OID, &sess); err != nil {
			t.Fatal(err)
		}
	}
	last, called, err := c.SeqDurable(r.OID)
	if err != nil || !called || last < 14 { // a block of 5 taken: 10..14
		t.Fatalf("after nextval %d: durable %d %v %v, want at least 14, called", v, last, called, err)
	}
	if err := c.RestoreSeq(r.OID, 100, true); err != nil {
		t.Fatal(err)
	}
	// The session's preallocated 13 and 14 are dropped: it continues at 101.
	if v, err = c.NextVal(r.OID, &sess); err != nil || v != 101 {
		t.Fatalf("after RestoreSeq(100): nextval %d %v, want 101", v, err)
	}
	c2 := openTest(t, dir, newStore(t)) // the restored value is durable
	if v, err = c2.NextVal(r.OID, &SeqLocal{}); err != nil || v <= 105 {
		t.Fatalf("reopened: nextval %d %v, want after the logged block", v, err)
	}
}
func ptr[T any](v T) *T { return &v }
