package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The development broker listens where told, creates the --topic topics
// with their partitions, and refuses bad flags naming them.
func TestKafkaDev(t *testing.T) {
	var topics topicList
	for _, v := range []string{"m:4", "x"} {
		if err := topics.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	cl, err := startKafkaDev("127.0.0.1:0", 2, topics)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c, err := kgo.NewClient(kgo.SeedBrokers(cl.ListenAddrs()[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	td, err := kadm.NewClient(c).ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(td["m"].Partitions); n != 4 {
		t.Errorf("topic m has %d partitions, want 4", n)
	}
	if n := len(td["x"].Partitions); n != 2 {
		t.Errorf("topic x has %d partitions, want the default 2", n)
	}
	for _, bad := range [][]string{{"--topic", "m:0"}, {"--partitions", "0"}, {"--listen", "nohost"}, {"extra"}} {
		var out, errb bytes.Buffer
		if code := kafkaDevMain(bad, &out, &errb); code == 0 || errb.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q", bad, code, errb.String())
		} else if !strings.Contains(errb.String(), strings.TrimPrefix(bad[0], "--")) && bad[0] != "--partitions" {
			t.Errorf("%v: the error does not name it: %q", bad, errb.String())
		}
	}
}
