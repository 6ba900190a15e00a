package windowfuzz

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamsql/streamsql/tests/harness"
)

// A row of a Kafka partition behind its own partition's watermark but not
// behind the source's (the minimum over the partitions) is not late, also
// when the partitions are read by split readers (parallelism 2): the window
// aggregation then is not aggregated per reader first, as such a partial
// would judge the row by its own reader's watermark (it dropped it).
func TestKafkaRowBehindItsPartitionOnly(t *testing.T) {
	ctx := context.Background()
	broker, prod := kafkaTopic(t, 2)
	srv := harness.Start(t, t.TempDir())
	c, err := pgx.Connect(ctx, srv.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	exec := func(q string) {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(fmt.Sprintf(`CREATE SOURCE kev (id int, k int, v int, ts timestamp, WATERMARK FOR ts AS ts)
		WITH (connector = 'kafka', topic = 'kev', properties.bootstrap.server = '%s') FORMAT PLAIN ENCODE JSON`, broker))
	exec("SET streaming_parallelism = 2")
	exec("CREATE MATERIALIZED VIEW k0 AS SELECT window_start, count(*) FROM TUMBLE(kev, ts, INTERVAL '10' SECOND) GROUP BY window_start")
	for i, m := range []struct {
		p  int32
		ts string
	}{{0, "00:16:11"}, {0, "00:16:27"}, {0, "00:16:35"}, {1, "00:16:44"}, {1, "00:16:35"}} {
		msg := fmt.Sprintf(`{"id": %d, "k": 1, "v": 1, "ts": "2024-01-01 %s"}`, i, m.ts)
		if err := prod.ProduceSync(ctx, &kgo.Record{Partition: m.p, Value: []byte(msg)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		exec("FLUSH")
	}
	// p0 is at 16:35, p1 at 16:44: the source's watermark is 16:35, so the
	// window [16:30, 16:40) is open when p1's row at 16:35 comes.
	got := fmt.Sprint(query(ctx, t, c, "SELECT * FROM k0 ORDER BY 1"), query(ctx, t, c, "SELECT late_rows FROM streamsql_views"))
	if want := "[[2024-01-01 00:16:10 1] [2024-01-01 00:16:20 1] [2024-01-01 00:16:30 2] [2024-01-01 00:16:40 1]] [[0]]"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
