package cluster

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Target is a parsed --cluster value: etcd endpoints and the key prefix
// under which this cluster's keys live.
type Target struct {
	// Endpoints are etcd client addresses, host:port.
	Endpoints []string
	// Prefix starts with "/" and does not end with one ("/streamsql").
	Prefix string
}

// ParseTarget parses "etcd://host:2379[,host:2379...]/prefix". The prefix
// is required (several clusters may share one etcd); a host without a
// port gets 2379.
func ParseTarget(s string) (Target, error) {
	var t Target
	rest, ok := strings.CutPrefix(s, "etcd://")
	if !ok {
		return t, fmt.Errorf("--cluster %q: must start with etcd:// (etcd://host:2379[,host:2379]/prefix)", s)
	}
	hosts, prefix, ok := strings.Cut(rest, "/")
	if !ok || strings.Trim(prefix, "/") == "" {
		return t, fmt.Errorf("--cluster %q: needs a key prefix after the hosts (etcd://host:2379/prefix)", s)
	}
	if strings.ContainsAny(prefix, "?#") {
		return t, fmt.Errorf("--cluster %q: query and fragment are not supported", s)
	}
	for _, h := range strings.Split(hosts, ",") {
		if h == "" {
			return t, fmt.Errorf("--cluster %q: empty host", s)
		}
		host, port, err := net.SplitHostPort(h)
		if err != nil {
			host, port = h, "2379"
		}
		if host == "" || strings.ContainsAny(host, "@") {
			return t, fmt.Errorf("--cluster %q: bad host %q (credentials in the URL are not supported)", s, h)
		}
		t.Endpoints = append(t.Endpoints, net.JoinHostPort(host, port))
	}
	t.Prefix = "/" + strings.Trim(prefix, "/")
	return t, nil
}

// String renders t as a --cluster value.
func (t Target) String() string {
	return "etcd://" + strings.Join(t.Endpoints, ",") + t.Prefix
}

// CheckpointURL is a parsed --checkpoint-url: an S3 bucket and a key
// prefix (without leading or trailing "/"; may be empty).
type CheckpointURL struct {
	Bucket, Prefix string
}

// ParseCheckpointURL parses "s3://bucket[/prefix]". Other schemes are
// refused by name.
func ParseCheckpointURL(s string) (CheckpointURL, error) {
	var c CheckpointURL
	u, err := url.Parse(s)
	if err != nil {
		return c, fmt.Errorf("--checkpoint-url %q: %w", s, err)
	}
	if u.Scheme != "s3" {
		return c, fmt.Errorf("--checkpoint-url %q: scheme %q is not supported (only s3://bucket/prefix; the endpoint and credentials come from AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION)", s, u.Scheme)
	}
	if u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return c, fmt.Errorf("--checkpoint-url %q: must be s3://bucket/prefix", s)
	}
	c.Bucket, c.Prefix = u.Host, strings.Trim(u.Path, "/")
	return c, nil
}

// String renders c as a --checkpoint-url value.
func (c CheckpointURL) String() string {
	if c.Prefix == "" {
		return "s3://" + c.Bucket
	}
	return "s3://" + c.Bucket + "/" + c.Prefix
}

// ValidNodeID reports whether id may name a node: 1 to 63 characters of
// letters, digits, '-', '_' and '.', starting with a letter or digit (it
// is a key segment in etcd and in object names).
func ValidNodeID(id string) error {
	if id == "" || len(id) > 63 {
		return fmt.Errorf("--node-id %q: must be 1 to 63 characters", id)
	}
	for i, r := range id {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !alnum && (i == 0 || (r != '-' && r != '_' && r != '.')) {
			return fmt.Errorf("--node-id %q: only letters, digits, '-', '_' and '.' (starting with a letter or digit)", id)
		}
	}
	return nil
}
