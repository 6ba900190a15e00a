package clustertest

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Fault is what Faults does to a matching request.
type Fault int

const (
	// FaultNone passes every request to the store.
	FaultNone Fault = iota
	// FaultFail answers a matching request with 500 InternalError without
	// storing anything.
	FaultFail
	// FaultStall holds a matching request, unanswered and not stored, until
	// the fault is changed (then it is passed to the store, as a slow
	// request would be) or the client gives up on it (then nothing is
	// stored).
	FaultStall
	// FaultFailAfterFirst passes the first matching request for each
	// path and answers every later one with 500 InternalError: the
	// first reader of an object gets it, the next ones do not.
	FaultFailAfterFirst
	// FaultStallAfterFirst passes the first matching request for each
	// path and stalls every later one (as FaultStall): the first reader
	// of an object gets it, the next ones wait.
	FaultStallAfterFirst
)

// Faults is an http.Handler in front of the fake S3 that injects a
// fault into the requests of one method (PUT unless SetMethod says
// otherwise) whose path contains a given string, as the test sets it;
// other requests pass. Safe for concurrent use.
type Faults struct {
	next http.Handler

	mu      sync.Mutex
	fault   Fault
	method  string
	match   string
	release chan struct{}   // closed when a stall ends
	seen    map[string]bool // FaultFailAfterFirst: paths served once

	hit atomic.Int64 // requests that met a fault

	latency       atomic.Int64           // nanoseconds a request waits first (SetLatency)
	latencyMethod atomic.Pointer[string] // of this method only, when set
}

// SetLatency makes every request of method ("": any) wait d before it is
// served (0: none), as a cloud store's round trip does.
func (f *Faults) SetLatency(method string, d time.Duration) {
	f.latencyMethod.Store(&method)
	f.latency.Store(int64(d))
}

// Set makes PUTs whose URL path contains match meet fault from now on
// (FaultNone: none); stalled requests are released.
func (f *Faults) Set(fault Fault, match string) { f.SetMethod(http.MethodPut, fault, match) }

// SetMethod is Set for the requests of method (http.MethodGet: reads).
func (f *Faults) SetMethod(method string, fault Fault, match string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.release != nil {
		close(f.release)
		f.release = nil
	}
	f.fault, f.method, f.match, f.seen = fault, method, match, map[string]bool{}
	if fault == FaultStall || fault == FaultStallAfterFirst {
		f.release = make(chan struct{})
	}
}

// Hits is how many requests met a fault so far.
func (f *Faults) Hits() int64 { return f.hit.Load() }

// ServeHTTP implements http.Handler.
func (f *Faults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if d := time.Duration(f.latency.Load()); d > 0 && (*f.latencyMethod.Load() == "" || *f.latencyMethod.Load() == r.Method) {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	f.mu.Lock()
	fault, method, match, release := f.fault, f.method, f.match, f.release
	first := false
	if (fault == FaultFailAfterFirst || fault == FaultStallAfterFirst) && r.Method == method && strings.Contains(r.URL.Path, match) {
		first = !f.seen[r.URL.Path]
		f.seen[r.URL.Path] = true
	}
	f.mu.Unlock()
	if fault == FaultNone || r.Method != method || !strings.Contains(r.URL.Path, match) || first {
		f.next.ServeHTTP(w, r)
		return
	}
	f.hit.Add(1)
	switch fault {
	case FaultFail, FaultFailAfterFirst:
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>injected by the test</Message></Error>`))
	case FaultStall, FaultStallAfterFirst:
		select {
		case <-release:
			f.next.ServeHTTP(w, r)
		case <-r.Context().Done(): // the client gave up: nothing stored
		}
	}
}
