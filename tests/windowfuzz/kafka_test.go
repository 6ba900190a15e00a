package windowfuzz

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamsql/streamsql/tests/harness"
)

// TestKafkaWindowsMatchModel is TestWindowedViewsMatchModel over a Kafka
// source (one or two partitions of an in-process broker) instead of a table: the
// same random windowed aggregations, the same model, one message per
// write so that every batch the reader emits is one message (FLUSH reads
// as far as the topic held when it began), and a restart right after a
// CHECKPOINT, so that the source resumes from its checkpointed offset with
// nothing to replay (a replay would read several messages at once, in
// batches that depend on timing). The source's watermark is the minimum
// over its partitions of max(ts) - delay over each one's messages, none
// while a partition has none (docs/connectors.md, "Watermarks per
// partition"); the model's input takes it after each message.
// WINDOWFUZZ_KAFKA_SEEDS sets how many seeds (default 8: seed 7 found a bug).
func TestKafkaWindowsMatchModel(t *testing.T) {
	for seed := 1; seed <= harness.EnvInt(t, "WINDOWFUZZ_KAFKA_SEEDS", 8); seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { runKafkaSeed(t, uint64(seed)) })
	}
}

func runKafkaSeed(t *testing.T, seed uint64) {
	ctx := context.Background()
	parts := []int{1, 2, 2}[seed%3]
	broker, prod := kafkaTopic(t, parts)
	srv := harness.Start(t, t.TempDir())
	c, err := pgx.Connect(ctx, srv.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close(ctx) }()
	exec := func(q string) {
		t.Helper()
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	r := rand.New(rand.NewPCG(seed, 0x6b61))
	in := input{delay: []int64{0, 5, 30}[r.IntN(3)], external: true}
	exec(fmt.Sprintf(`CREATE SOURCE kev (id int, k int, v int, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '%d' SECOND)
		WITH (connector = 'kafka', topic = 'kev', properties.bootstrap.server = '%s') FORMAT PLAIN ENCODE JSON`, in.delay, broker))
	exec(fmt.Sprintf("SET streaming_parallelism = %d", []int{1, 3}[seed%2]))

	// Every view exists before the first message: a view created later
	// would read the topic's earlier messages in batches of its reader's
	// choosing.
	var views []viewModel
	for i := 0; i < harness.EnvInt(t, "WINDOWFUZZ_VIEWS", 24); i++ {
		var m viewModel
		if r.IntN(6) == 0 { // plain rows emitted on window close
			e := randEOWC(r, in, 0)
			e.table = "kev"
			m = e
		} else {
			s := randSpec(r)
			if s.every > 0 || s.early > 0 { // processing time: the clock does not move here
				continue
			}
			s.table = "kev"
			m = newModel(s, in, 0)
		}
		views = append(views, m)
		q := fmt.Sprintf("CREATE MATERIALIZED VIEW k%d AS %s", len(views)-1, m.sql())
		if os.Getenv("WFDEBUG") != "" {
			t.Log(q)
		}
		exec(q)
	}
	steps := harness.EnvInt(t, "WINDOWFUZZ_STEPS", 60)
	partMax := make([]int64, parts) // per partition: max(ts) so far
	partSeen := make([]bool, parts)
	now, bad := int64(1000), 0
	for step := 0; step < steps && bad < 10; step++ {
		if step == steps/2 { // resume from a checkpoint of this very point
			exec("CHECKPOINT")
			for _, m := range views {
				m.checkpoint()
			}
			c = restart(ctx, t, srv, c)
			for _, m := range views {
				m.restartAt(0)
			}
		}
		now += int64(r.IntN(4))
		x := row{id: step + 1, k: int64(1 + r.IntN(3)), v: int64(r.IntN(10)), t: now - int64(r.IntN(15))}
		if r.IntN(8) == 0 {
			x.t = now - int64(r.IntN(150)) // far behind: often late
		}
		x.kN, x.vN = r.IntN(15) == 0, r.IntN(10) == 0
		js := func(v int64, null bool) string { return strings.ToLower(text(v, null)) } // JSON's null
		msg := fmt.Sprintf(`{"id": %d, "k": %s, "v": %s, "ts": "%s"}`, x.id, js(x.k, x.kN), js(x.v, x.vN), stamp(x.t))
		p := r.IntN(parts)
		if os.Getenv("WFDEBUG") != "" {
			t.Logf("step %d partition %d: %s", step, p, msg)
		}
		if err := prod.ProduceSync(ctx, &kgo.Record{Partition: int32(p), Value: []byte(msg)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		exec("FLUSH")
		if os.Getenv("WFDEBUG") != "" {
			t.Logf("  sources: %v", query(ctx, t, c, "SELECT view_name, partition, \"offset\", watermark, idle FROM streamsql_sources WHERE view_name = 'k10' ORDER BY 1, 2"))
			t.Logf("  view wm: %v", query(ctx, t, c, "SELECT watermark FROM streamsql_views WHERE viewname = 'k10'"))
		}
		if !partSeen[p] || x.t > partMax[p] {
			partMax[p], partSeen[p] = x.t, true
		}
		wm, hasWM := int64(0), !slices.Contains(partSeen, false)
		if hasWM {
			wm = slices.Min(partMax) - in.delay
		}
		for i, m := range views {
			m.apply(0, []op{{r: x}}) // judged against the watermark before it
			src := m.(interface{ source() *input }).source()
			src.wm, src.hasWM = wm, hasWM
			m.barrier()
			want := sortRows(m.rows())
			got := sortRows(query(ctx, t, c, fmt.Sprintf("SELECT * FROM k%d", i)))
			if late := query(ctx, t, c, fmt.Sprintf("SELECT late_rows FROM streamsql_views WHERE viewname = 'k%d'", i)); len(late) != 1 || late[0][0] != fmt.Sprint(m.lateRows()) {
				bad++
				t.Errorf("seed %d step %d (%s; watermark %s), view k%d:\n  %s\n  late rows: %v, want %d", seed, step, msg, m.mark(), i, m.sql(), late, m.lateRows())
			}
			if !slices.EqualFunc(want, got, slices.Equal) {
				bad++
				t.Errorf("seed %d step %d (%s; watermark %s), view k%d:\n  %s\n  missing: %v\n  extra:   %v",
					seed, step, msg, m.mark(), i, m.sql(), minus(want, got), minus(got, want))
			}
		}
	}
	t.Logf("seed %d: %d views over a Kafka source of %d partitions, watermark delay %ds: %d writes, %d differences", seed, len(views), parts, in.delay, steps, bad)
}

// kafkaTopic starts an in-process broker with topic kev of parts
// partitions and a producer that names each record's partition; both end
// with the test.
func kafkaTopic(t *testing.T, parts int) (broker string, prod *kgo.Client) {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(parts), "kev"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	broker = kc.ListenAddrs()[0]
	prod, err = kgo.NewClient(kgo.SeedBrokers(broker), kgo.DefaultProduceTopic("kev"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	return broker, prod
}

// source is the view's input, whose watermark the Kafka test sets.
func (m *model) source() *input     { return &m.input }
func (m *eowcModel) source() *input { return &m.in }
