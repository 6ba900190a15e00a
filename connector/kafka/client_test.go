package kafka

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestParseClientErrors(t *testing.T) {
	for _, tc := range []map[string]string{
		{},
		{"properties.bootstrap.server": " , "},
		{"properties.bootstrap.server": "a:1", "properties.bootstrap.servers": "b:1"},
		{"properties.bootstrap.server": "a:1", "properties.security.protocol": "bogus"},
		{"properties.bootstrap.server": "a:1", "properties.sasl.username": "u"},
		{"properties.bootstrap.server": "a:1", "properties.security.protocol": "SASL_PLAINTEXT", "properties.sasl.username": "u"},
		{"properties.bootstrap.server": "a:1", "properties.security.protocol": "SASL_PLAINTEXT", "properties.sasl.username": "u", "properties.sasl.password": "p", "properties.sasl.mechanism": "GSSAPI"},
		{"properties.bootstrap.server": "a:1", "properties.ssl.ca.location": "/nonexistent"},
	} {
		if _, err := ParseClient(tc, map[string]bool{}); err == nil {
			t.Errorf("%v: no error", tc)
		}
	}
}

func TestParseClientConnects(t *testing.T) {
	cl, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	used := map[string]bool{}
	c, err := ParseClient(map[string]string{"properties.bootstrap.servers": cl.ListenAddrs()[0], "topic": "t"}, used)
	if err != nil {
		t.Fatal(err)
	}
	if !used["properties.bootstrap.servers"] || used["topic"] {
		t.Fatalf("used = %v", used)
	}
	k, err := kgo.NewClient(c.Opts()...)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	md, err := kadm.NewClient(k).ListTopics(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(md["t"].Partitions); n != 2 {
		t.Fatalf("partitions = %d, want 2", n)
	}
}
