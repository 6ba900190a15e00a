package catalog

import (
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
		if last, err = c.NextVal(r.OID); err != nil {
			t.Fatal(err)
		}
	}
	c2 := openTest(t, dir, st) // as after a crash: the first catalog is never closed
	v, err := c2.NextVal(r.OID)
	if err != nil {
		t.Fatal(err)
	}
	// 1 logged 33, 34 logged 66: the next run starts at 67.
	if last != 40 || v != 2*seqLogAhead+3 {
		t.Fatalf("last %d, after reopen %d; want 40 and %d", last, v, 2*seqLogAhead+3)
	}
}

// BenchmarkNextVal measures nextval on one sequence, fsync included (one
// per seqLogAhead values).
func BenchmarkNextVal(b *testing.B) {
	st, err := storage.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	c, err := open(b.TempDir(), st)
	if err != nil {
		b.Fatal(err)
	}
	opts, _ := ApplySeqSpec(nil, SeqSpec{})
	r, err := c.CreateSequence(&Relation{Name: "bs", Seq: opts})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.NextVal(r.OID); err != nil {
			b.Fatal(err)
		}
	}
}
