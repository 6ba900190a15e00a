package kafka

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connector/internal/position"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSplitReaders: reader i of n reads the partitions p with p mod n ==
// i (partitions discovered later too), lists only those, waits in
// InputEnd only for those, and resumes from its own position; a reader
// whose share has no partition lists none (idle).
func TestSplitReaders(t *testing.T) {
	_, addr := cluster(t, 5)
	p := producer(t, addr)
	var recs []*kgo.Record
	for i := range 500 {
		recs = append(recs, rec(int32(i%5), fmt.Sprintf(`{"id": %d, "p": %d}`, i, i%5)))
	}
	produce(t, p, recs...)
	s := mustOpen(t, cols(t, "id int, p int"), map[string]string{"properties.bootstrap.server": addr, "topic": "t",
		"scan.partition.discovery.interval": "20ms"}, "JSON")
	const n = 3
	var all []string
	runs := make([]*run, n)
	for i := range n {
		ru := startWith(t, s, nil, ReaderOptions{Split: i, Splits: n})
		runs[i] = ru
		want := 0
		for q := i; q < 5; q += n {
			want += 100
		}
		ru.waitRows(want)
		rows, pos, _, _ := ru.snapshot()
		ru.mu.Lock()
		parts := slices.Clone(ru.parts)
		ru.mu.Unlock()
		for _, q := range parts {
			if int(q)%n != i {
				t.Fatalf("reader %d of %d read partition %d", i, n, q)
			}
		}
		got := ru.r.Partitions()
		slices.Sort(got)
		var mine []int32
		for q := int32(i); q < 5; q += n {
			mine = append(mine, q)
		}
		if !slices.Equal(got, mine) {
			t.Fatalf("reader %d of %d lists partitions %v, want %v", i, n, got, mine)
		}
		end, err := ru.r.InputEnd(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		m, err := position.DecodeOffsets(end)
		if err != nil {
			t.Fatal(err)
		}
		if len(m) != len(mine) {
			t.Fatalf("reader %d of %d: InputEnd lists %v, want its partitions %v", i, n, m, mine)
		}
		for q := range m {
			if int(q)%n != i {
				t.Fatalf("reader %d of %d: InputEnd lists partition %d", i, n, q)
			}
		}
		if c, ok := comparePositions(pos[len(pos)-1], end); !ok || c != 0 {
			t.Fatalf("reader %d of %d read all but is at %x, its input ends at %x", i, n, pos[len(pos)-1], end)
		}
		all = append(all, rows...)
	}
	if slices.Sort(all); len(slices.Compact(all)) != 500 {
		t.Fatalf("%d distinct rows over %d readers, want 500", len(all), n)
	}
	// a partition added later goes to its reader only
	if _, err := kadm.NewClient(p).CreatePartitions(context.Background(), 1, "t"); err != nil {
		t.Fatal(err)
	}
	p = producer(t, addr)
	produce(t, p, rec(5, `{"id": 1000, "p": 5}`))
	had := 0
	for q := 5 % n; q < 5; q += n {
		had += 100
	}
	runs[5%n].waitRows(had + 1)
	for i, ru := range runs {
		rows, _, _, _ := ru.snapshot()
		if has := slices.Contains(rows, "1000|5"); has != (i == 5%n) {
			t.Fatalf("reader %d of %d has the new partition's row: %v", i, n, has)
		}
		ru.stop()
	}
	// more readers than partitions: the last has none
	idle := startWith(t, s, nil, ReaderOptions{Split: 7, Splits: 8})
	deadline := time.Now().Add(testWait)
	for ps := idle.r.Partitions(); ps == nil || len(ps) != 0; ps = idle.r.Partitions() {
		if time.Now().After(deadline) {
			t.Fatalf("reader 7 of 8 lists %v, want none", ps)
		}
		time.Sleep(5 * time.Millisecond) // polling with a deadline
	}
	if end, err := idle.r.InputEnd(context.Background()); err != nil || end != nil {
		t.Fatalf("reader 7 of 8: InputEnd %x, %v: want nothing to wait for", end, err)
	}
	idle.stop()
}
