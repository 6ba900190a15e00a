package kafka

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestOpenErrors(t *testing.T) {
	c := cols(t, "id bigint, v text")
	base := func(kv ...string) map[string]string {
		m := map[string]string{"properties.bootstrap.server": "127.0.0.1:1", "topic": "t"}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "-" {
				delete(m, kv[i])
			} else {
				m[kv[i]] = kv[i+1]
			}
		}
		return m
	}
	for _, tc := range []struct {
		opts   map[string]string
		format string
		code   pgerr.Code
		naming string
	}{
		{base("bogus.option", "1"), "JSON", pgerr.InvalidParameterValue, "bogus.option"},
		{base("topic", "-"), "JSON", pgerr.InvalidParameterValue, "topic"},
		{base("properties.bootstrap.server", "-"), "JSON", pgerr.InvalidParameterValue, "bootstrap"},
		{base("scan.startup.mode", "middle"), "JSON", pgerr.InvalidParameterValue, "scan.startup.mode"},
		{base("scan.startup.mode", "timestamp"), "JSON", pgerr.InvalidParameterValue, "scan.startup.timestamp.millis"},
		{base("scan.startup.mode", "latest", "scan.startup.timestamp.millis", "5"), "JSON", pgerr.InvalidParameterValue, "scan.startup.timestamp.millis"},
		{base("scan.startup.timestamp.millis", "soon"), "JSON", pgerr.InvalidParameterValue, "scan.startup.timestamp.millis"},
		{base("scan.partition.discovery.interval", "often"), "JSON", pgerr.InvalidParameterValue, "scan.partition.discovery.interval"},
		{base("scan.topic.wait", "perhaps"), "JSON", pgerr.InvalidParameterValue, "scan.topic.wait"},
		{base("group.id.prefix", ""), "JSON", pgerr.InvalidParameterValue, "group.id.prefix"},
		{base(), "AVRO", pgerr.InvalidParameterValue, "AVRO"},
		{base("include.partition", "p"), "JSON", pgerr.InvalidTableDefinition, "partition"},
	} {
		_, err := Open(c, tc.opts, tc.format)
		if pgerr.CodeOf(err) != tc.code || !strings.Contains(err.Error()+fmt.Sprint(pgerr.As(err).Hint), tc.naming) {
			t.Errorf("Open(%v, %q) = %v, want %s naming %s", tc.opts, tc.format, err, tc.code, tc.naming)
		}
	}
	s := mustOpen(t, c, base("scan.startup.timestamp.millis", "5", "scan.partition.discovery.interval", "250",
		"properties.bootstrap.servers", "a:1", "properties.bootstrap.server", "-"), "PLAIN ENCODE CSV")
	if s.mode != Timestamp || s.startMs != 5 || s.discovery != 250*time.Millisecond || s.format != CSV {
		t.Errorf("source %+v", s)
	}
	if up := mustOpen(t, c, base(), "UPSERT ENCODE JSON"); !up.upsert || up.Columns()[len(c)].Name != TombstoneColumn {
		t.Errorf("upsert columns %v", up.Columns())
	}
	if _, _, err := IncludeColumn("headers", ""); pgerr.CodeOf(err) != pgerr.InvalidParameterValue {
		t.Errorf("INCLUDE headers: %v", err)
	}
}

func TestCheck(t *testing.T) {
	_, addr := cluster(t, 1)
	c := cols(t, "v int")
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	if err := mustOpen(t, c, map[string]string{"properties.bootstrap.server": addr, "topic": "t"}, "").Check(ctx); err != nil {
		t.Fatal(err)
	}
	err := mustOpen(t, c, map[string]string{"properties.bootstrap.server": addr, "topic": "nope"}, "").Check(ctx)
	wantCode(t, err, pgerr.UndefinedObject)
	err = mustOpen(t, c, map[string]string{"properties.bootstrap.server": addr, "topic": "nope", "scan.topic.wait": "true"}, "").Check(ctx)
	if err != nil {
		t.Fatalf("with scan.topic.wait: %v", err)
	}
	short, cancel2 := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel2()
	err = mustOpen(t, c, map[string]string{"properties.bootstrap.server": "127.0.0.1:1", "topic": "t"}, "").Check(short)
	wantCode(t, err, pgerr.ConnectionException)
}

// TestReadJSON reads JSON messages from four partitions, with the INCLUDE
// columns, missing keys as NULL and a key.
func TestReadJSON(t *testing.T) {
	_, addr := cluster(t, 4)
	p := producer(t, addr)
	for i := range 40 {
		r := rec(int32(i%4), fmt.Sprintf(`{"id": %d, "host": "h%d", "cpu": %d.5, "ts": "2024-01-01 00:00:%02d+00"}`, i, i%3, i, i))
		if i == 7 {
			r.Value = []byte(`{"id": 7, "extra": [1, {"x": 2}]}`)
			r.Key = []byte("k7")
		}
		produce(t, p, r)
	}
	c := cols(t, "id bigint, host text, cpu double precision, ts timestamptz, part int4, off int8, k bytea")
	s := mustOpen(t, c, map[string]string{"properties.bootstrap.server": addr, "topic": "t",
		"include.partition": "part", "include.offset": "off", "include.key": "k"}, "JSON")
	ru := start(t, s, nil)
	ru.waitRows(40)
	rows, _, _, errs := ru.snapshot()
	if len(rows) != 40 || len(errs) != 0 {
		t.Fatalf("%d rows, errors %v", len(rows), errs)
	}
	slices.Sort(rows)
	want := []string{}
	for i := range 40 {
		if i == 7 {
			want = append(want, `7|NULL|NULL|NULL|3|1|\x6b37`)
			continue
		}
		want = append(want, fmt.Sprintf("%d|h%d|%d.5|2024-01-01 00:00:%02d+00|%d|%d|NULL", i, i%3, i, i, i%4, i/4))
	}
	slices.Sort(want)
	if !slices.Equal(rows, want) {
		t.Fatalf("rows\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	st := ru.r.Status()
	if st.State != "running" || len(st.Partitions) != 4 {
		t.Fatalf("status %+v", st)
	}
	for _, ps := range st.Partitions {
		if ps.Offset != 10 || ps.Rows != 10 || ps.Lag() != 0 {
			t.Errorf("partition status %+v, lag %d", ps, ps.Lag())
		}
	}
}

func TestReadCSV(t *testing.T) {
	_, addr := cluster(t, 1)
	produce(t, producer(t, addr), rec(0, "1,a\n"), rec(0, `2,"b,c"`), rec(0, "3,"), rec(0, "x,y"), rec(0, "4,d,e"))
	s := mustOpen(t, cols(t, "id int, v text"), map[string]string{"properties.bootstrap.server": addr, "topic": "t"}, "PLAIN ENCODE CSV")
	ru := start(t, s, nil)
	ru.wait("3 rows and 2 errors", func(rows []string, errs []error) bool { return len(rows) == 3 && len(errs) == 2 })
	rows, _, _, _ := ru.snapshot()
	if want := []string{"1|a", "2|b,c", "3|NULL"}; !slices.Equal(rows, want) {
		t.Fatalf("rows %v, want %v", rows, want)
	}
}

// TestBadMessages: a message that does not decode is skipped, reported
// with its partition, offset and a prefix of its payload, and counted; the
// reader goes on.
func TestBadMessages(t *testing.T) {
	_, addr := cluster(t, 2)
	long := `{"id": "` + strings.Repeat("x", 2000) + `"}`
	produce(t, producer(t, addr), rec(0, `{"id": 1}`), rec(1, `{"id": 2`), rec(1, `{"id": "two"}`), rec(0, long),
		&kgo.Record{Partition: 1}, rec(1, `{"id": 3}`), rec(0, `[1]`), rec(0, `{"id": 99999999999}`), rec(0, `{"id": 4}`))
	s := mustOpen(t, cols(t, "id int"), map[string]string{"properties.bootstrap.server": addr, "topic": "t"}, "JSON")
	ru := start(t, s, nil)
	ru.wait("3 rows and 6 errors", func(rows []string, errs []error) bool { return len(rows) == 3 && len(errs) == 6 })
	_, _, _, errs := ru.snapshot()
	var msgs []string
	for _, err := range errs {
		e := pgerr.As(err)
		if e == nil || !strings.Contains(e.Message, `kafka topic "t", partition `) || !strings.Contains(e.Detail, "The message") {
			t.Errorf("error %v (%+v)", err, e)
			continue
		}
		msgs = append(msgs, e.Message+" / "+e.Detail)
	}
	all := strings.Join(msgs, "\n")
	for _, err := range errs {
		if n := len(pgerr.As(err).Message); n > maxErrorText+80 {
			t.Errorf("an error message of %d bytes", n)
		}
	}
	for _, want := range []string{"partition 1, offset 0: invalid JSON", "partition 1, offset 1, column id:",
		`partition 0, offset 1, column id:`, `(2010 bytes) starts with "{\"id\": \"xxxx`, "partition 1, offset 2: the message has no value",
		"partition 0, offset 2: invalid JSON: expected a JSON object", "partition 0, offset 3, column id:"} {
		if !strings.Contains(all, want) {
			t.Errorf("errors lack %q:\n%s", want, all)
		}
	}
	var bad int64
	for _, ps := range ru.r.Status().Partitions {
		bad += ps.BadRows
	}
	if bad != 6 {
		t.Errorf("BadRows total %d, want 6", bad)
	}
	// streamsql_sources.last_error: each partition's last skipped
	// message's error, naming that partition; the reader's own stays for
	// its failures (brokers, fetches).
	for _, ps := range ru.r.Status().Partitions {
		if le := ps.LastError; !strings.Contains(le, fmt.Sprintf(`kafka topic "t", partition %d, offset `, ps.Partition)) {
			t.Errorf("partition %d: LastError = %q, want its last skipped message's error", ps.Partition, le)
		}
	}
	if le := ru.r.Status().LastError; le != "" {
		t.Errorf("reader LastError = %q after skipped messages only", le)
	}
}

// TestResumeExactly stops a reader, resumes at each position it reported
// and checks that the rows after it complete the rows before it exactly:
// nothing twice, nothing skipped, per partition.
func TestResumeExactly(t *testing.T) {
	_, addr := cluster(t, 4)
	p := producer(t, addr)
	const n = 4000
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, rec(int32(i*7%4), fmt.Sprintf(`{"id": %d}`, i)))
	}
	produce(t, p, recs...)
	s := mustOpen(t, cols(t, "id int"), map[string]string{"properties.bootstrap.server": addr, "topic": "t"}, "JSON")
	ru := start(t, s, nil)
	ru.waitRows(n)
	ru.stop()
	rows, pos, nrows, _ := ru.snapshot()
	if len(pos) < 2 {
		t.Fatalf("only %d batches", len(pos))
	}
	// Positions only move forward.
	for i := 1; i < len(pos); i++ {
		if c, ok := ComparePositions(pos[i-1], pos[i]); !ok || c > 0 {
			t.Fatalf("position %d %x then %x: compare %d %v", i, pos[i-1], pos[i], c, ok)
		}
	}
	for _, k := range []int{0, len(pos) / 2, len(pos) - 1} {
		before := rows[:nrows[k]]
		r2 := start(t, s, pos[k])
		if rest := n - len(before); rest > 0 {
			r2.waitRows(rest)
		}
		after, _, _, _ := r2.snapshot()
		r2.stop()
		all := append(append([]string(nil), before...), after...)
		slices.Sort(all)
		all = slices.Compact(all)
		if len(all) != n || len(before)+len(after) != n {
			t.Fatalf("resumed at batch %d: %d before + %d after, %d distinct, want %d", k, len(before), len(after), len(all), n)
		}
	}
	if _, err := s.NewReader(ReaderOptions{}), s.NewReader(ReaderOptions{}).Seek([]byte{0x41, 5}); pgerr.CodeOf(err) != pgerr.DataCorrupted {
		t.Errorf("bad position: %v", err)
	}
}

// ComparePositions is connector.ComparePositions (position.Compare).
func ComparePositions(a, b []byte) (int, bool) { return comparePositions(a, b) }

// TestStartupModes: latest skips what is there; timestamp starts at the
// first message at or after the time.
func TestStartupModes(t *testing.T) {
	_, addr := cluster(t, 2)
	p := producer(t, addr)
	t0 := time.UnixMilli(1_700_000_000_000)
	for i := range 6 {
		r := rec(int32(i%2), fmt.Sprintf(`{"id": %d}`, i))
		r.Timestamp = t0.Add(time.Duration(i) * time.Second)
		produce(t, p, r)
	}
	c := cols(t, "id int")
	latest := start(t, mustOpen(t, c, map[string]string{"properties.bootstrap.server": addr, "topic": "t", "scan.startup.mode": "latest"}, "JSON"), nil)
	ts := start(t, mustOpen(t, c, map[string]string{"properties.bootstrap.server": addr, "topic": "t",
		"scan.startup.timestamp.millis": fmt.Sprint(t0.Add(3 * time.Second).UnixMilli())}, "JSON"), nil)
	ts.waitRows(3)
	// The latest reader has resolved its offsets once it reports running.
	latest.waitStatus("running", func(st Status) bool { return st.State == "running" })
	produce(t, p, rec(0, `{"id": 100}`), rec(1, `{"id": 101}`))
	latest.waitRows(2)
	ts.waitRows(5)
	lr, _, _, _ := latest.snapshot()
	tr, _, _, _ := ts.snapshot()
	slices.Sort(lr)
	slices.Sort(tr)
	if !slices.Equal(lr, []string{"100", "101"}) || !slices.Equal(tr, []string{"100", "101", "3", "4", "5"}) {
		t.Fatalf("latest %v, timestamp %v", lr, tr)
	}
}

// TestDiscovery: partitions added to the topic while a reader runs are
// read from their start.
func TestDiscovery(t *testing.T) {
	_, addr := cluster(t, 1)
	p := producer(t, addr)
	produce(t, p, rec(0, `{"id": 1}`))
	s := mustOpen(t, cols(t, "id int"), map[string]string{"properties.bootstrap.server": addr, "topic": "t",
		"scan.partition.discovery.interval": "20ms"}, "JSON")
	ru := start(t, s, nil)
	ru.waitRows(1)
	adm := kadm.NewClient(p)
	if _, err := adm.CreatePartitions(context.Background(), 2, "t"); err != nil {
		t.Fatal(err)
	}
	p = producer(t, addr) // knows the new partitions
	produce(t, p, rec(1, `{"id": 2}`), rec(2, `{"id": 3}`), rec(0, `{"id": 4}`))
	ru.waitRows(4)
	rows, pos, _, _ := ru.snapshot()
	slices.Sort(rows)
	if !slices.Equal(rows, []string{"1", "2", "3", "4"}) {
		t.Fatalf("rows %v", rows)
	}
	if len(ru.r.Status().Partitions) != 3 {
		t.Fatalf("status %+v", ru.r.Status())
	}
	_ = pos
}

// TestReadCommitted: messages of aborted transactions are never read;
// those of committed ones are, once committed.
func TestReadCommitted(t *testing.T) {
	_, addr := cluster(t, 2)
	tx := producer(t, addr, kgo.TransactionalID("tx"))
	ctx := context.Background()
	txn := func(commit bool, vals ...string) {
		t.Helper()
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			produce(t, tx, rec(int32(i%2), v))
		}
		if err := tx.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	txn(true, `{"id": 1}`, `{"id": 2}`)
	txn(false, `{"id": 10}`, `{"id": 11}`, `{"id": 12}`)
	txn(true, `{"id": 3}`, `{"id": 4}`)
	s := mustOpen(t, cols(t, "id int"), map[string]string{"properties.bootstrap.server": addr, "topic": "t"}, "JSON")
	ru := start(t, s, nil)
	ru.waitRows(4)
	// An open transaction is not read until it commits.
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, tx, rec(0, `{"id": 5}`))
	txn2 := producer(t, addr)
	produce(t, txn2, rec(1, `{"id": 6}`))
	ru.waitRows(5)
	if rows, _, _, _ := ru.snapshot(); slices.Contains(rows, "5") {
		t.Fatalf("read an open transaction's message: %v", rows)
	}
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	ru.waitRows(6)
	rows, pos, _, _ := ru.snapshot()
	slices.Sort(rows)
	if !slices.Equal(rows, []string{"1", "2", "3", "4", "5", "6"}) {
		t.Fatalf("rows %v", rows)
	}
	// Resuming at the last position reads nothing again (the markers and
	// the aborted messages after it are skipped).
	ru.stop()
	r2 := start(t, s, pos[len(pos)-1])
	produce(t, txn2, rec(0, `{"id": 7}`))
	r2.waitRows(1)
	if got, _, _, _ := r2.snapshot(); !slices.Equal(got, []string{"7"}) {
		t.Fatalf("resumed: %v", got)
	}
}

// TestGroupCommitAndTopicWait: a reader of a topic that does not exist yet
// (scan.topic.wait) has no partitions and says it waits; once the topic is
// created it reads it, and commits the offsets read to the monitoring
// group.
func TestGroupCommitAndTopicWait(t *testing.T) {
	defer func(d time.Duration) { commitInterval = d }(commitInterval)
	commitInterval = 10 * time.Millisecond
	_, addr := cluster(t, 1)
	s := mustOpen(t, cols(t, "id int"), map[string]string{"properties.bootstrap.server": addr, "topic": "later",
		"scan.topic.wait": "true", "group.id.prefix": "mon"}, "JSON")
	ru := start(t, s, nil)
	ru.waitStatus("waiting for topic", func(st Status) bool { return st.State == "waiting for topic" })
	if ps := ru.r.Partitions(); ps == nil || len(ps) != 0 {
		t.Fatalf("Partitions() = %#v while waiting, want empty", ps)
	}
	p := producer(t, addr)
	adm := kadm.NewClient(p)
	if _, err := adm.CreateTopic(context.Background(), 2, 1, nil, "later"); err != nil {
		t.Fatal(err)
	}
	p = producer(t, addr, kgo.DefaultProduceTopic("later"))
	produce(t, p, &kgo.Record{Partition: 0, Value: []byte(`{"id": 1}`)}, &kgo.Record{Partition: 1, Value: []byte(`{"id": 2}`)},
		&kgo.Record{Partition: 1, Value: []byte(`{"id": 3}`)})
	ru.waitRows(3)
	deadline := time.Now().Add(testWait)
	for {
		os, err := adm.FetchOffsets(context.Background(), "mon-later")
		if err == nil {
			o0, _ := os.Lookup("later", 0)
			o1, _ := os.Lookup("later", 1)
			if o0.At == 1 && o1.At == 2 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("group offsets %v, %v", os, err)
		}
		time.Sleep(5 * time.Millisecond) // polling for the commit, not for correctness
	}
}
