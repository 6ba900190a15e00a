package kafka

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/klauspost/compress/s2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Test helpers: a kfake cluster, rows (id, epoch) as Arrow batches, and a
// read_committed reader that reads a topic to its end.

var testCols = []types.Column{{Name: "id", Type: types.TInt8}, {Name: "ep", Type: types.TInt8}}

func newTestCluster(t testing.TB, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	cl, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.DefaultNumPartitions(3)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func testSpec(addr string, opts map[string]string) sink.Spec {
	o := map[string]string{"properties.bootstrap.server": addr, "topic": "out"}
	for k, v := range opts {
		o[k] = v
	}
	return sink.Spec{Name: "s", ID: 42, Cols: testCols, Options: o, AppendOnly: true, Format: "JSON"}
}

func openTestSink(t testing.TB, spec sink.Spec) sink.Sink {
	t.Helper()
	open := sink.Lookup("kafka")
	if open == nil {
		t.Fatal("kafka sink not registered")
	}
	s, err := open(spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// batch builds rows ids [from, to) of epoch ep.
func batch(from, to int64, ep uint64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, types.ArrowSchema(testCols))
	defer b.Release()
	for i := from; i < to; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.Int64Builder).Append(int64(ep))
	}
	return b.NewRecordBatch()
}

type outRec struct {
	part   int32
	offset int64
	key    string
	value  []byte
}

// readCommitted reads topic with a read_committed consumer up to its end:
// it appends a marker record to every partition (outside transactions)
// and reads until each partition's marker, so a transaction left open
// makes it time out (and the test fail).
func readCommitted(t testing.TB, addr, topic string) []outRec {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	md, err := kadm.NewClient(prod).Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("marker-%d", time.Now().UnixNano())
	parts := md.Topics[topic].Partitions.Numbers()
	for _, p := range parts {
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Key: []byte(marker)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	var out []outRec
	seen := map[int32]bool{}
	for len(seen) < len(parts) {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %d of %d partitions read to their end: a transaction is left open?", topic, len(seen), len(parts))
		}
		fs.EachRecord(func(r *kgo.Record) {
			switch k := string(r.Key); {
			case k == marker:
				seen[r.Partition] = true
			case strings.HasPrefix(k, "marker-"):
			default:
				out = append(out, outRec{r.Partition, r.Offset, k, r.Value})
			}
		})
	}
	return out
}

type row struct{ ID, Ep int64 }

func decodeRows(t testing.TB, recs []outRec) []row {
	t.Helper()
	var out []row
	for _, r := range recs {
		var x struct{ ID, Ep int64 }
		if err := json.Unmarshal(r.value, &x); err != nil {
			t.Fatalf("record %q: %v", r.value, err)
		}
		out = append(out, row{x.ID, x.Ep})
	}
	return out
}

// checkExactlyOnce checks that recs hold ids [0, n) exactly once each,
// increasing within every partition.
func checkExactlyOnce(t testing.TB, recs []outRec, n int64) {
	t.Helper()
	rows := decodeRows(t, recs)
	last := map[int32]int64{}
	count := map[int64]int{}
	for i, r := range rows {
		count[r.ID]++
		if l, ok := last[recs[i].part]; ok && r.ID <= l {
			t.Errorf("partition %d: id %d after id %d", recs[i].part, r.ID, l)
		}
		last[recs[i].part] = r.ID
	}
	var bad []string
	for id := int64(0); id < n; id++ {
		if count[id] != 1 {
			bad = append(bad, fmt.Sprintf("id %d seen %d times", id, count[id]))
		}
	}
	for id := range count {
		if id < 0 || id >= n {
			bad = append(bad, fmt.Sprintf("unexpected id %d", id))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		if len(bad) > 10 {
			bad = append(bad[:10], "...")
		}
		t.Fatalf("%d records, want %d once each: %s", len(rows), n, strings.Join(bad, "; "))
	}
}

func TestSinkOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"topc": "x"}, `unknown kafka sink option "topc"`},
		{map[string]string{"topic": " "}, "needs topic"},
		{map[string]string{"sink.delivery-guarantee": "twice"}, "sink.delivery-guarantee"},
		{map[string]string{"sink.max-epoch-bytes": "10"}, "sink.max-epoch-bytes"},
		{map[string]string{"properties.transaction.timeout.ms": "x"}, "properties.transaction.timeout.ms"},
		{map[string]string{"sink.topic.create": "maybe"}, "sink.topic.create"},
		{map[string]string{"properties.compression.type": "brotli"}, "properties.compression.type"},
		{map[string]string{"sink.progress.topic": "out"}, "must differ"},
	} {
		_, err := sink.Lookup("kafka")(testSpec("127.0.0.1:1", tc.opts))
		if err == nil || !strings.Contains(err.Error(), tc.want) || pgerr.CodeOf(err) != pgerr.InvalidParameterValue {
			t.Errorf("%v: got %v, want a 22023 error containing %q", tc.opts, err, tc.want)
		}
	}
	spec := testSpec("127.0.0.1:1", nil)
	spec.Format, spec.Encode = "UPSERT", "JSON"
	if _, err := sink.Lookup("kafka")(spec); err == nil || !strings.Contains(err.Error(), "primary key") {
		t.Errorf("UPSERT without a key: %v", err)
	}
	spec.Format, spec.Encode = "PLAIN", "AVRO"
	if _, err := sink.Lookup("kafka")(spec); pgerr.CodeOf(err) != pgerr.InvalidParameterValue || !strings.Contains(err.Error(), "schema.registry") {
		t.Errorf("ENCODE AVRO without a registry: %v", err)
	}
	spec.Format, spec.Encode = "UPSERT", "PROTOBUF"
	if _, err := sink.Lookup("kafka")(spec); pgerr.CodeOf(err) != pgerr.FeatureNotSupported {
		t.Errorf("ENCODE PROTOBUF: %v", err)
	}
}

// A topic that does not exist is created, unless sink.topic.create is
// false: then NewWriter fails naming it.
func TestSinkTopicCreation(t *testing.T) {
	c := newTestCluster(t)
	addr := c.ListenAddrs()[0]
	ctx := context.Background()
	s := openTestSink(t, testSpec(addr, map[string]string{"topic": "absent", "sink.topic.create": "false"}))
	if _, err := s.NewWriter(ctx, 0); err == nil || !strings.Contains(err.Error(), `"absent"`) || pgerr.CodeOf(err) != pgerr.UndefinedObject {
		t.Fatalf("NewWriter on a missing topic: %v", err)
	}
	// A topic the broker refuses to create.
	c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.CreateTopics}, Topic: "refused", Err: kerr.PolicyViolation})
	s = openTestSink(t, testSpec(addr, map[string]string{"topic": "refused"}))
	if _, err := s.NewWriter(ctx, 0); err == nil || !strings.Contains(err.Error(), `"refused"`) || pgerr.CodeOf(err) != pgerr.InvalidParameterValue {
		t.Fatalf("NewWriter on a topic that cannot be created: %v", err)
	}
	s = openTestSink(t, testSpec(addr, map[string]string{"topic": "made", "sink.topic.partitions": "5"}))
	w, err := s.NewWriter(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	adm := kadm.NewClient(w.(*txnWriter).admin)
	tm, err := topicMeta(ctx, w.(*txnWriter).admin, "made")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tm.Partitions); n != 5 {
		t.Fatalf("made has %d partitions, want 5", n)
	}
	cfg, err := adm.DescribeTopicConfigs(ctx, defaultProgressTopic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := cfg.On(defaultProgressTopic, nil)
	if err != nil {
		t.Fatal(err)
	}
	compact := false
	for _, c := range rc.Configs {
		if c.Key == "cleanup.policy" && c.MaybeValue() == "compact" {
			compact = true
		}
	}
	if !compact {
		t.Fatalf("the progress topic is not compacted: %+v", rc.Configs)
	}
}

// The plain exactly-once path: epochs written, pre-committed and committed
// appear once each, and nothing is visible before its commit.
func TestSinkExactlyOnceEpochs(t *testing.T) {
	c := newTestCluster(t)
	addr := c.ListenAddrs()[0]
	ctx := context.Background()
	w, err := openTestSink(t, testSpec(addr, nil)).NewWriter(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var id int64
	for ep := uint64(1); ep <= 4; ep++ {
		for b := 0; b < 3; b++ {
			if err := w.Write(ctx, batch(id, id+100, ep), nil); err != nil {
				t.Fatal(err)
			}
			id += 100
		}
		if ep%2 == 1 {
			if err := w.Barrier(ctx, ep); err != nil {
				t.Fatal(err)
			}
			continue
		}
		pending, err := w.PreCommit(ctx, ep)
		if err != nil {
			t.Fatal(err)
		}
		if len(pending) == 0 {
			t.Fatal("no pending after rows")
		}
		if ep == 4 {
			// Not committed yet: a read_committed reader does not see
			// epochs 3 and 4 (and is not held back by their open
			// transaction forever: the marker read waits for it, so
			// commit concurrently).
			done := make(chan error, 1)
			go func() { time.Sleep(50 * time.Millisecond); done <- w.Commit(ctx, ep, pending) }()
			recs := readCommitted(t, addr, "out")
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			checkExactlyOnce(t, recs, id)
			continue
		}
		if err := w.Commit(ctx, ep, pending); err != nil {
			t.Fatal(err)
		}
	}
	st := w.Status()
	if st.Rows != id || st.CommittedEpoch != 4 || st.Status != "running" || st.OpenTxnAgeMs != 0 {
		t.Fatalf("status %+v", st)
	}
	checkExactlyOnce(t, readCommitted(t, addr, "out"), id)
}

// Rows written but never committed (no PreCommit) are not visible, and
// Close aborts their transaction so readers are not held back.
func TestSinkCloseAbandonsOpenEpoch(t *testing.T) {
	c := newTestCluster(t)
	addr := c.ListenAddrs()[0]
	ctx := context.Background()
	w, err := openTestSink(t, testSpec(addr, nil)).NewWriter(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(ctx, batch(0, 10, 1), nil); err != nil {
		t.Fatal(err)
	}
	if st := w.Status(); st.Rows != 0 {
		t.Fatalf("status %+v", st)
	}
	w.Close()
	checkExactlyOnce(t, readCommitted(t, addr, "out"), 0)
}

func TestSinkAtLeastOnce(t *testing.T) {
	c := newTestCluster(t)
	addr := c.ListenAddrs()[0]
	ctx := context.Background()
	w, err := openTestSink(t, testSpec(addr, map[string]string{"sink.delivery-guarantee": "at-least-once"})).NewWriter(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Write(ctx, batch(0, 500, 1), nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Barrier(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// Visible at the barrier, before any checkpoint.
	checkExactlyOnce(t, readCommitted(t, addr, "out"), 500)
	if err := w.Write(ctx, batch(500, 1000, 2), nil); err != nil {
		t.Fatal(err)
	}
	p, err := w.PreCommit(ctx, 2)
	if err != nil || p != nil {
		t.Fatalf("PreCommit: %v %v", p, err)
	}
	if err := w.Commit(ctx, 2, p); err != nil {
		t.Fatal(err)
	}
	if st := w.Status(); st.Rows != 1000 || st.CommittedEpoch != 2 {
		t.Fatalf("status %+v", st)
	}
	checkExactlyOnce(t, readCommitted(t, addr, "out"), 1000)
}

// UPSERT: key = the key columns, a delete is a tombstone, an update that
// keeps the key writes only the new row.
func TestSinkUpsertKeys(t *testing.T) {
	c := newTestCluster(t)
	addr := c.ListenAddrs()[0]
	ctx := context.Background()
	spec := testSpec(addr, map[string]string{"primary_key": "id"})
	spec.Format, spec.Encode, spec.Key = "UPSERT", "JSON", []int{0}
	w, err := openTestSink(t, spec).NewWriter(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rec := batch(1, 4, 7) // ids 1, 2, 3
	ops := []stream.Op{stream.Insert, stream.Delete, stream.Insert}
	if err := w.Write(ctx, rec, ops); err != nil {
		t.Fatal(err)
	}
	upd := batch(3, 4, 7) // id 3 twice: before and after
	two, _ := array.Concatenate([]arrow.Array{upd.Column(0), upd.Column(0)}, memory.DefaultAllocator)
	eps, _ := array.Concatenate([]arrow.Array{upd.Column(1), batch(3, 4, 8).Column(1)}, memory.DefaultAllocator)
	if err := w.Write(ctx, array.NewRecordBatch(upd.Schema(), []arrow.Array{two, eps}, 2), []stream.Op{stream.UpdateBefore, stream.UpdateAfter}); err != nil {
		t.Fatal(err)
	}
	p, err := w.PreCommit(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx, 1, p); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range readCommitted(t, addr, "out") {
		got = append(got, r.key+"="+string(r.value))
	}
	sort.Strings(got)
	want := []string{`{"id":1}={"id":1,"ep":7}`, `{"id":2}=`, `{"id":3}={"id":3,"ep":7}`, `{"id":3}={"id":3,"ep":8}`}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestPendingRoundTrip(t *testing.T) {
	// pad 0: pendings below compressAbove (raw) but the last; pad 60: all
	// above (chunks compressed).
	for _, pad := range []int{0, 60} {
		t.Run(fmt.Sprint("pad", pad), func(t *testing.T) { testPendingRoundTrip(t, strings.Repeat("x", pad)) })
	}
	if _, err := decodePending([]byte("garbage!")); !errors.Is(err, errPending) {
		t.Fatalf("garbage: %v", err)
	}
}

func testPendingRoundTrip(t *testing.T, pad string) {
	var bs []*epochBatch
	for e := uint64(3); e < 6; e++ {
		b := &epochBatch{epoch: e}
		// The first alone spans several chunks; then one of one chunk.
		for i := 0; i < []int{12000, 1000, 5000}[e-3]; i++ {
			var v []byte
			if i%7 != 0 {
				v = fmt.Appendf(nil, `{"i":%d,"p":"%s"}`, i, pad)
			}
			b.add(fmt.Appendf(nil, "k%d", i), v, 4096, 0, nil)
		}
		b.cut()
		if e == 3 && len(b.chunks) < 2 {
			t.Fatalf("epoch 3 in %d chunks, want several", len(b.chunks))
		}
		bs = append(bs, b)
		p := encodePending(bs)
		total := 0
		for _, b := range bs {
			total += b.size
		}
		if magic := string(p[len(p)-4:]); (total <= compressAbove) != (magic == magicRaw) {
			t.Fatalf("%d bytes: format %s", total, magic)
		}
		checkParts := func(b *epochBatch, want int) {
			t.Helper()
			n := 0
			for k := 0; k < b.parts(); k++ {
				recs, err := b.part(k)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range recs {
					if string(r.Key) != fmt.Sprintf("k%d", n) || (n%7 == 0) != (r.Value == nil) {
						t.Fatalf("record %d: %q %q", n, r.Key, r.Value)
					}
					n++
				}
			}
			if n != want {
				t.Fatalf("%d records, want %d", n, want)
			}
		}
		check := func(p []byte) {
			t.Helper()
			got, err := decodePending(p)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(bs) {
				t.Fatalf("%d batches, want %d", len(got), len(bs))
			}
			for i := range got {
				if got[i].epoch != bs[i].epoch || got[i].n != bs[i].n || fmt.Sprint(got[i].cuts) != fmt.Sprint(bs[i].cuts) || string(bytes.Join(got[i].chunks, nil)) != string(bytes.Join(bs[i].chunks, nil)) {
					t.Fatalf("batch %d differs", i)
				}
				checkParts(got[i], bs[i].n)
			}
		}
		for _, b := range bs {
			checkParts(b, b.n) // the live batch: parts that span chunks
		}
		check(p)
		check(encodePending(bs)) // again: a batch's compressed form is kept
		if total <= compressAbove {
			// What earlier versions wrote above compressAbove: the raw
			// format s2-compressed whole.
			check(append(s2.Encode(nil, p), magicS2...))
		} else if _, err := decodePending(p[:len(p)/2]); err == nil {
			// (Damaged bytes are the checkpoint's CRC's to find.)
			t.Fatal("half a pending decoded")
		}
	}
}
