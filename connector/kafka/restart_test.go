package kafka

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"

	"context"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
)

// TestBrokerRestart: the broker goes away and comes back (same address,
// same data); the reader shows it is retrying, resumes by itself and
// loses nothing.
func TestBrokerRestart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	opts := []kfake.Opt{kfake.Ports(port), kfake.DataDir(dir), kfake.SyncWrites()}
	c, addr := cluster(t, 2, opts...)
	p := producer(t, addr)
	for i := range 10 {
		produce(t, p, rec(int32(i%2), fmt.Sprintf(`{"id": %d}`, i)))
	}
	s := mustOpen(t, cols(t, "id int"), map[string]string{"properties.bootstrap.server": addr, "topic": "t",
		"scan.partition.discovery.interval": "10ms"}, "JSON")
	ru := start(t, s, nil)
	ru.waitRows(10)
	c.Close()
	p.Close()
	ru.waitStatus("retrying", func(st Status) bool { return st.State == "retrying" && st.LastError != "" })
	c2, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	p = producer(t, addr)
	for i := 10; i < 20; i++ {
		produce(t, p, rec(int32(i%2), fmt.Sprintf(`{"id": %d}`, i)))
	}
	ru.waitRows(20)
	ru.waitStatus("running", func(st Status) bool { return st.State == "running" })
	rows, _, _, _ := ru.snapshot()
	slices.Sort(rows)
	if rows = slices.Compact(rows); len(rows) != 20 {
		t.Fatalf("%d distinct rows: %v", len(rows), rows)
	}
}

// TestTopicDeletedWhileRead: a topic deleted while read shows in the
// status; the reader goes on and reads the topic created again under the
// same name from its start (its offsets are new), with a warning.
func TestTopicDeletedWhileRead(t *testing.T) {
	_, addr := cluster(t, 1)
	p := producer(t, addr)
	produce(t, p, rec(0, `{"id": 1}`), rec(0, `{"id": 2}`), rec(0, `{"id": 3}`))
	s := mustOpen(t, cols(t, "id int"), map[string]string{"properties.bootstrap.server": addr, "topic": "t",
		"scan.partition.discovery.interval": "10ms"}, "JSON")
	ru := start(t, s, nil)
	ru.waitRows(3)
	adm := kadm.NewClient(p)
	if _, err := adm.DeleteTopics(context.Background(), "t"); err != nil {
		t.Fatal(err)
	}
	ru.waitStatus("retrying", func(st Status) bool { return st.State == "retrying" && strings.Contains(st.LastError, "t") })
	if _, err := adm.CreateTopic(context.Background(), 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	p = producer(t, addr)
	// More messages than the old topic had: none may be skipped.
	produce(t, p, rec(0, `{"id": 4}`), rec(0, `{"id": 5}`), rec(0, `{"id": 6}`), rec(0, `{"id": 7}`))
	ru.waitRows(7)
	rows, _, _, errs := ru.snapshot()
	if !slices.Equal(rows, []string{"1", "2", "3", "4", "5", "6", "7"}) {
		t.Fatalf("rows %v", rows)
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "created again") {
		t.Errorf("errors %v", errs)
	}
	t.Logf("status %+v", ru.r.Status())
}
