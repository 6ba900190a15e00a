package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaCluster starts an in-process broker with topic "t" of 2 partitions
// and a producer for it.
func kafkaCluster(t testing.TB) (addr string, prod *kgo.Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr = c.ListenAddrs()[0]
	prod, err = kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	return addr, prod
}

// produceIDs produces {"id": i, "v": "v<i>"} for i in [from, to), even
// ids to partition 0, odd to 1.
func produceIDs(t *testing.T, prod *kgo.Client, from, to int) {
	t.Helper()
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		recs = append(recs, &kgo.Record{Partition: int32(i % 2), Value: fmt.Appendf(nil, `{"id": %d, "v": "v%d"}`, i, i)})
	}
	if err := prod.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// waitRows polls query until it returns want (the ingest runs on its own
// goroutine; polling waits for it, the comparison decides).
func waitRows(t *testing.T, s *Session, query string, want ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var got []string
	for time.Now().Before(deadline) {
		got = mustRun(t, s, query)
		if strings.Join(got, ",") == strings.Join(want, ",") {
			return
		}
		time.Sleep(5 * time.Millisecond) // polling for progress, not for correctness
	}
	t.Fatalf("%s: %v, want %v", query, got, want)
}

const kafkaTableDDL = `CREATE TABLE kt (id bigint, v text) INCLUDE partition AS p, offset AS o
	WITH (connector = 'kafka', topic = 't', properties.bootstrap.server = '%s') FORMAT JSON`

// TestKafkaTable: a kafka table stores every message once, across a
// restart; a view over it sees the rows; DML works on it; bad messages
// are counted in streamsql_sources; DROP TABLE stops the ingest.
func TestKafkaTable(t *testing.T) {
	addr, prod := kafkaCluster(t)
	dir := t.TempDir()
	e, s := open(t, dir)
	mustRun(t, s, fmt.Sprintf(kafkaTableDDL, addr))
	mustRun(t, s, "CREATE MATERIALIZED VIEW kv AS SELECT count(*) AS n, sum(id) AS s FROM kt")
	produceIDs(t, prod, 0, 100)
	if err := prod.ProduceSync(context.Background(), &kgo.Record{Partition: 0, Value: []byte("not json")},
		&kgo.Record{Partition: 1, Value: []byte(`{"id": "x"}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	produceIDs(t, prod, 100, 110)
	waitRows(t, s, "SELECT count(*), count(DISTINCT id), sum(id) FROM kt", "110|110|5995")
	mustRun(t, s, "FLUSH")
	waitRows(t, s, "SELECT n, s FROM kv", "110|5995")
	waitRows(t, s, "SELECT source_name, view_name, partition, \"offset\", rows, bad_rows FROM streamsql_sources ORDER BY partition",
		"kt|kt|0|56|55|1", "kt|kt|1|56|55|1")
	// DML by users.
	mustRun(t, s, "UPDATE kt SET v = 'changed' WHERE id = 1")
	mustRun(t, s, "DELETE FROM kt WHERE id = 2")
	mustRun(t, s, "INSERT INTO kt (id, v) VALUES (1000, 'mine')")
	waitRows(t, s, "SELECT v FROM kt WHERE id IN (1, 2, 1000) ORDER BY id", "changed", "mine")
	e.Close()

	// A restart reads on from the committed position: nothing twice.
	produceIDs(t, prod, 110, 150)
	e, s = open(t, dir)
	waitRows(t, s, "SELECT count(*), count(DISTINCT p::bigint * 1000000 + o), sum(id) FROM kt WHERE id < 1000", "149|149|11173")
	if got := mustRun(t, s, "SELECT count(*) FROM kt WHERE o IS NULL"); got[0] != "1" {
		t.Fatalf("user rows: %v", got)
	}
	// ALTER TABLE: a rename is kept, other changes refused.
	if _, _, err := run(t, s, "ALTER TABLE kt ADD COLUMN w int"); pgerr.CodeOf(err) != pgerr.FeatureNotSupported {
		t.Fatalf("ADD COLUMN: %v", err)
	}
	mustRun(t, s, "ALTER TABLE kt RENAME TO kt2")
	produceIDs(t, prod, 150, 152)
	waitRows(t, s, "SELECT count(*) FROM kt2 WHERE id < 1000", "151")
	mustRun(t, s, "DROP MATERIALIZED VIEW kv")
	mustRun(t, s, "DROP TABLE kt2")
	e.ingests.mu.Lock()
	n := len(e.ingests.m)
	e.ingests.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d ingests after DROP TABLE", n)
	}
	if got := mustRun(t, s, "SELECT count(*) FROM streamsql_sources"); got[0] != "0" {
		t.Fatalf("streamsql_sources after DROP TABLE: %v", got)
	}
	e.Close()
}

// TestKafkaTableRefused: what a kafka table cannot have is refused by
// name, and a missing topic fails CREATE TABLE.
func TestKafkaTableRefused(t *testing.T) {
	addr, _ := kafkaCluster(t)
	e, s := open(t, t.TempDir())
	defer e.Close()
	with := fmt.Sprintf("WITH (connector = 'kafka', topic = 't', properties.bootstrap.server = '%s')", addr)
	for _, tc := range []struct {
		ddl  string
		code pgerr.Code
	}{
		{"CREATE TABLE a (id int PRIMARY KEY, v text) " + with + " FORMAT JSON", pgerr.FeatureNotSupported},
		{"CREATE TABLE a (id int NOT NULL) " + with + " FORMAT JSON", pgerr.FeatureNotSupported},
		{"CREATE TABLE a (id int DEFAULT 1) " + with + " FORMAT JSON", pgerr.FeatureNotSupported},
		{"CREATE TABLE a (id int) " + with + " FORMAT AVRO", pgerr.InvalidParameterValue},
		{"CREATE TABLE a (id int) WITH (connector = 'datagen') FORMAT JSON", pgerr.FeatureNotSupported},
		{"CREATE TABLE a (id int) " + strings.Replace(with, "'t'", "'nope'", 1) + " FORMAT JSON", pgerr.UndefinedObject},
		{"CREATE TABLE a (id int) " + with + " FORMAT JSON INCLUDE nothing", pgerr.InvalidParameterValue},
	} {
		if _, _, err := run(t, s, tc.ddl); pgerr.CodeOf(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.ddl, err, tc.code)
		}
	}
	if got := mustRun(t, s, "SELECT count(*) FROM pg_class WHERE relname = 'a'"); got[0] != "0" {
		t.Fatalf("a refused table was created: %v", got)
	}
}

// TestKafkaTableUpsert: FORMAT UPSERT ENCODE JSON replaces the row with a
// message's key and deletes it on a tombstone (the key's columns from the
// message key, a JSON object), within a batch and across batches and a
// restart; a view over the table follows.
func TestKafkaTableUpsert(t *testing.T) {
	addr, prod := kafkaCluster(t)
	dir := t.TempDir()
	e, s := open(t, dir)
	mustRun(t, s, fmt.Sprintf(`CREATE TABLE u (id int, v text, PRIMARY KEY (id))
		WITH (connector = 'kafka', topic = 't', properties.bootstrap.server = '%s') FORMAT UPSERT ENCODE JSON`, addr))
	mustRun(t, s, "CREATE MATERIALIZED VIEW uv AS SELECT count(*) AS n, sum(id) AS s FROM u")
	msg := func(p int32, key, value string) *kgo.Record {
		r := &kgo.Record{Partition: p, Key: []byte(key)}
		if value != "" {
			r.Value = []byte(value)
		}
		return r
	}
	produce := func(recs ...*kgo.Record) {
		t.Helper()
		if err := prod.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce(msg(0, `{"id": 1}`, `{"id": 1, "v": "a"}`), msg(0, `{"id": 2}`, `{"id": 2, "v": "b"}`),
		msg(0, `{"id": 1}`, `{"id": 1, "v": "c"}`), msg(0, `{"id": 2}`, ""), msg(0, "", `{"v": "no key"}`),
		msg(1, `{"id": 5}`, `{"id": 5, "v": "e"}`))
	waitRows(t, s, "SELECT id, v FROM u ORDER BY id", "1|c", "5|e")
	waitRows(t, s, "SELECT partition, rows, bad_rows FROM streamsql_sources WHERE source_name = 'u' ORDER BY partition", "0|4|1", "1|1|0")
	produce(msg(1, `{"id": 5}`, ""), msg(0, `{"id": 1}`, `{"id": 1, "v": "d"}`), msg(0, `{"id": 9}`, ""))
	waitRows(t, s, "SELECT id, v FROM u ORDER BY id", "1|d")
	mustRun(t, s, "INSERT INTO u VALUES (7, 'mine')")
	e.Close()
	produce(msg(0, `{"id": 7}`, `{"id": 7, "v": "theirs"}`), msg(1, `{"id": 3}`, `{"id": 3, "v": "x"}`))
	e, s = open(t, dir)
	defer e.Close()
	waitRows(t, s, "SELECT id, v FROM u ORDER BY id", "1|d", "3|x", "7|theirs")
	mustRun(t, s, "FLUSH")
	waitRows(t, s, "SELECT n, s FROM uv", "3|11")
	waitRows(t, s, "SELECT sum(rows), sum(bad_rows) FROM streamsql_sources WHERE source_name = 'u'", "2|0")
	for _, q := range []string{
		"CREATE TABLE a (id int, v text) WITH (connector = 'kafka', topic = 't', properties.bootstrap.server = '" + addr + "') FORMAT UPSERT ENCODE JSON",
		"CREATE SOURCE a (id int, v text) WITH (connector = 'kafka', topic = 't', properties.bootstrap.server = '" + addr + "') FORMAT UPSERT ENCODE JSON",
	} {
		if _, _, err := run(t, s, q); err == nil {
			t.Errorf("%s: accepted", q)
		}
	}
}

// TestKafkaTableBrokerDown: with the brokers gone the server still opens
// and serves the rows stored; the ingest waits (retrying) and DROP TABLE
// stops it.
func TestKafkaTableBrokerDown(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	addr := c.ListenAddrs()[0]
	prod, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	e, s := open(t, dir)
	mustRun(t, s, fmt.Sprintf(kafkaTableDDL, addr))
	produceIDs(t, prod, 0, 10)
	waitRows(t, s, "SELECT count(*) FROM kt", "10")
	e.Close()
	prod.Close()
	c.Close()
	e, s = open(t, dir)
	defer e.Close()
	waitRows(t, s, "SELECT count(*), sum(id) FROM kt", "10|45")
	mustRun(t, s, "INSERT INTO kt (id) VALUES (100)")
	mustRun(t, s, "DROP TABLE kt")
	e.ingests.mu.Lock()
	n := len(e.ingests.m)
	e.ingests.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d ingests after DROP TABLE", n)
	}
}

// A Kafka table stores its reader's position with its rows: it cannot be a
// view's LATE ROWS INTO table, whose writes record the view's checkpoint.
func TestLateRowsIntoKafkaTableIsRefused(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, fmt.Sprintf(kafkaTableDDL, c.ListenAddrs()[0]))
	mustRun(t, s, "CREATE TABLE ev (k int, ts timestamp, WATERMARK FOR ts AS ts) APPEND ONLY")
	_, _, err = run(t, s, "CREATE MATERIALIZED VIEW w AS SELECT window_start, count(*) FROM TUMBLE(ev, ts, INTERVAL '10' SECOND) GROUP BY window_start EMIT ON WINDOW CLOSE LATE ROWS INTO kt")
	if pgerr.CodeOf(err) != pgerr.WrongObjectType || !strings.Contains(err.Error(), "fed by a connector") {
		t.Fatalf("got %v", err)
	}
}
