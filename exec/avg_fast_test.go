package exec

import (
	"math/rand"
	"testing"

	"github.com/cockroachdb/apd/v3"
)

// TestAvgIntText checks the integer fast path of avg against the apd path
// (itself checked against PostgreSQL in TestAggregatesMatchPostgres), and a
// few values from PostgreSQL 15: avg of (1,2) is 1.5000000000000000, of
// (100000, 300000) 200000.000000000000, of (-1,-2,-2) -1.6666666666666667.
func TestAvgIntText(t *testing.T) {
	for _, c := range []struct {
		sum, n int64
		want   string
	}{{3, 2, "1.5000000000000000"}, {400000, 2, "200000.000000000000"}, {-5, 3, "-1.6666666666666667"}, {0, 5, ""}} {
		got, ok := avgIntText(c.sum, c.n)
		if c.want == "" {
			continue
		}
		if !ok || got != c.want {
			t.Errorf("avg %d/%d = %q, %v; want %q", c.sum, c.n, got, ok, c.want)
		}
	}
	rng := rand.New(rand.NewSource(2))
	fast := 0
	for i := 0; i < 20000; i++ {
		sum := rng.Int63n(1<<uint(rng.Intn(62)+1)) - rng.Int63n(1<<uint(rng.Intn(62)+1))
		n := rng.Int63n(1<<uint(rng.Intn(40)+1)) + 1
		got, ok := avgIntText(sum, n)
		if !ok {
			continue
		}
		fast++
		q, err := numericDiv(apd.New(sum, 0), apd.New(n, 0))
		if err != nil {
			t.Fatal(err)
		}
		if want := numericText(q); got != want {
			t.Fatalf("avg %d/%d = %s, want %s", sum, n, got, want)
		}
	}
	if fast < 10000 {
		t.Fatalf("fast path taken only %d times", fast)
	}
}
