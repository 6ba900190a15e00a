package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestFlushWaitsForKafkaSource: FLUSH returns once every message a Kafka
// source's topic held when FLUSH began has reached the views over it, so
// a SELECT right after sees them (no polling): plain messages, messages
// of committed transactions (whose markers end the partitions), bad
// messages (skipped, counted) and an empty partition. An aborted
// transaction's messages never appear. At parallelism 3 the source's
// two partitions are read by three readers (one idle): FLUSH waits for
// each reader's own partitions.
func TestFlushWaitsForKafkaSource(t *testing.T) {
	for _, par := range []int{1, 3} {
		t.Run(fmt.Sprintf("par%d", par), func(t *testing.T) { flushWaitsForKafka(t, par) })
	}
}

func flushWaitsForKafka(t *testing.T, par int) {
	addr, prod := kafkaCluster(t)
	e, err := Open(Config{DataDir: t.TempDir(), StreamingParallelism: par})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, fmt.Sprintf(`CREATE SOURCE ks (id int, v text) WITH (connector = 'kafka', topic = 't',
		properties.bootstrap.server = '%s') FORMAT JSON`, addr))
	plan := strings.Join(mustRun(t, s, "EXPLAIN CREATE MATERIALIZED VIEW kx AS SELECT id FROM ks"), "\n")
	if split := strings.Contains(plan, "(3 readers)"); split != (par == 3) {
		t.Fatalf("parallelism %d: source split in three: %v\n%s", par, split, plan)
	}
	mustRun(t, s, "CREATE MATERIALIZED VIEW kn AS SELECT count(*) AS n, sum(id) AS s FROM ks")
	mustRun(t, s, "CREATE MATERIALIZED VIEW kp AS SELECT id FROM ks WHERE id % 100 = 7")
	for round := range 3 {
		base := round * 1000
		produceIDs(t, prod, base, base+500) // both partitions
		txn(t, addr, base+500, base+600, true)
		txn(t, addr, base+600, base+700, false) // aborted: never read
		if err := prod.ProduceSync(context.Background(), &kgo.Record{Partition: 1, Value: []byte("not json")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		// A view created now starts reading (connecting, listing, fetching)
		// only after this statement: FLUSH must wait for it.
		mustRun(t, s, fmt.Sprintf("CREATE MATERIALIZED VIEW late%d AS SELECT count(*) AS n FROM ks", round))
		mustRun(t, s, "FLUSH")
		n := (round + 1) * 600
		if got := mustRun(t, s, fmt.Sprintf("SELECT n FROM late%d", round)); got[0] != fmt.Sprint(n) {
			t.Fatalf("round %d: after FLUSH late%d is %v, want %d", round, round, got, n)
		}
		sum := 0
		for r := range round + 1 {
			for i := r * 1000; i < r*1000+600; i++ {
				sum += i
			}
		}
		if got := mustRun(t, s, "SELECT n, s FROM kn"); got[0] != fmt.Sprintf("%d|%d", n, sum) {
			t.Fatalf("round %d: after FLUSH kn is %v, want %d|%d", round, got, n, sum)
		}
		if got := mustRun(t, s, "SELECT count(*) FROM kp"); got[0] != fmt.Sprint(6*(round+1)) {
			t.Fatalf("round %d: after FLUSH kp has %v rows", round, got)
		}
		// Caught up: every reader's lag is 0 (transaction markers
		// included), and its rows add up to what the topic holds.
		if got := mustRun(t, s, "SELECT count(*), sum(lag), min(lag) FROM streamsql_sources WHERE view_name = 'kn'"); got[0] != "2|0|0" {
			t.Fatalf("round %d: kn's readers after FLUSH (partitions, lag): %v", round, got)
		}
		if got := mustRun(t, s, "SELECT sum(rows), sum(bad_rows) FROM streamsql_sources WHERE view_name = 'kn'"); got[0] != fmt.Sprintf("%d|%d", n, round+1) {
			t.Fatalf("round %d: kn's readers after FLUSH (rows, bad rows): %v, want %d|%d", round, got, n, round+1)
		}
	}
}

// txn produces {"id": i} for i in [from, to) on partition 0 in one
// transaction, committed or aborted.
func txn(t *testing.T, addr string, from, to int, commit bool) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DefaultProduceTopic("t"), kgo.TransactionalID(fmt.Sprintf("flush-test-%d", from)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		recs = append(recs, &kgo.Record{Partition: 0, Value: fmt.Appendf(nil, `{"id": %d, "v": "v%d"}`, i, i)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatal(err)
	}
}
