// Package clustertest starts the services a cluster test needs inside the
// test process, on loopback: an embedded etcd (go.etcd.io/etcd/server/v3/embed)
// and an S3-compatible object store (gofakes3 over an in-memory backend).
// Only tests import it, so streamsqld does not link the etcd server.
package clustertest

import (
	"fmt"
	"net"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"go.etcd.io/etcd/server/v3/embed"
)

// Etcd is a one-member etcd serving clients on a loopback port.
type Etcd struct {
	Endpoint string // host:port
	cfg      embed.Config
	e        *embed.Etcd // nil while stopped
}

// StartEtcd starts an etcd with its data in a temporary directory and
// short raft ticks (so that leases as short as 1 s are honoured). It is
// stopped when the test ends.
func StartEtcd(t testing.TB) *Etcd {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	cfg.LogLevel = "fatal" // its shutdown logs errors about closed listeners
	cfg.TickMs = 10
	cfg.ElectionMs = 100
	cfg.UnsafeNoFsync = true // a test's etcd holds nothing worth an fsync
	cp, pp := freePort(t), freePort(t)
	cu := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", cp)}
	pu := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", pp)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e := &Etcd{Endpoint: cu.Host, cfg: *cfg}
	e.start(t)
	t.Cleanup(func() {
		if e.e != nil {
			e.e.Close()
		}
	})
	return e
}

func (e *Etcd) start(t testing.TB) {
	t.Helper()
	cfg := e.cfg // a fresh copy: StartEtcd keeps and changes its Config
	s, err := embed.StartEtcd(&cfg)
	if err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	select {
	case <-s.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		s.Close()
		t.Fatal("etcd did not become ready within 60 s")
	}
	e.e = s
}

// Stop stops the server (for tests of an unreachable etcd); Restart
// starts it again on the same data and ports.
func (e *Etcd) Stop() {
	e.e.Close()
	e.e = nil
}

// Restart starts a stopped server again.
func (e *Etcd) Restart(t testing.TB) { e.start(t) }

// S3 is a fake S3 endpoint. Its Faults inject errors and stalls into
// the requests it serves.
type S3 struct {
	URL     string // http://127.0.0.1:port
	Backend *s3mem.Backend
	Faults  *Faults
	srv     *httptest.Server
}

// StartS3 serves an in-memory S3 on loopback with the bucket created.
// Any credentials are accepted. It is stopped when the test ends.
func StartS3(t testing.TB, bucket string) *S3 {
	t.Helper()
	b := s3mem.New()
	if err := b.CreateBucket(bucket); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	f := &Faults{next: gofakes3.New(b).Server()}
	srv := httptest.NewServer(f)
	t.Cleanup(func() {
		f.Set(FaultNone, "") // release stalled requests, or Close waits for them
		srv.Close()
	})
	return &S3{URL: srv.URL, Backend: b, Faults: f, srv: srv}
}

// Close stops serving (for tests of an unreachable store).
func (s *S3) Close() { s.srv.Close() }

// Env is the AWS environment a client of s needs.
func (s *S3) Env() []string {
	return []string{"AWS_ENDPOINT_URL=" + s.URL, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1"}
}

// SetEnv sets Env in this process for the rest of t (t.Setenv), so that
// an S3 client opened by the test reaches the store.
func (s *S3) SetEnv(t testing.TB) {
	t.Helper()
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
