package cluster

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	got, err := ParseTarget("etcd://h1:2379,h2/streamsql/prod/")
	if err != nil {
		t.Fatal(err)
	}
	want := Target{Endpoints: []string{"h1:2379", "h2:2379"}, Prefix: "/streamsql/prod"}
	if !reflect.DeepEqual(got, want) || got.String() != "etcd://h1:2379,h2:2379/streamsql/prod" {
		t.Fatalf("got %+v (%s)", got, got)
	}
	for in, msg := range map[string]string{
		"http://h:2379/p":     "must start with etcd://",
		"etcd://h:2379":       "needs a key prefix",
		"etcd://h:2379/":      "needs a key prefix",
		"etcd://h,,g/p":       "empty host",
		"etcd://u@h:2379/p":   "credentials",
		"etcd://h:2379/p?x=1": "query",
	} {
		if _, err := ParseTarget(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseTarget(%q) err = %v, want %q", in, err, msg)
		}
	}
}

func TestParseCheckpointURL(t *testing.T) {
	got, err := ParseCheckpointURL("s3://bkt/a/b/")
	if err != nil || got != (CheckpointURL{Bucket: "bkt", Prefix: "a/b"}) || got.String() != "s3://bkt/a/b" {
		t.Fatalf("got %+v, %v", got, err)
	}
	if got, err := ParseCheckpointURL("s3://bkt"); err != nil || got.Prefix != "" {
		t.Fatalf("got %+v, %v", got, err)
	}
	for in, msg := range map[string]string{
		"gs://b/p":     `scheme "gs" is not supported`,
		"file:///tmp":  `scheme "file"`,
		"s3:///p":      "must be s3://bucket/prefix",
		"s3://b/p?x=1": "must be s3://bucket/prefix",
	} {
		if _, err := ParseCheckpointURL(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseCheckpointURL(%q) err = %v, want %q", in, err, msg)
		}
	}
}

func TestValidNodeID(t *testing.T) {
	for _, ok := range []string{"n1", "node-2", "a.b_c", "7"} {
		if err := ValidNodeID(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-a", "a/b", "a b", strings.Repeat("x", 64)} {
		if err := ValidNodeID(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
