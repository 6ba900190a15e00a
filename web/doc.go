// Package web serves streamsqld's HTTP endpoints (streamsqld --http):
// Prometheus metrics at /metrics, a JSON API under /api/v1/, a dashboard
// at / from embedded assets (no CDN: it works offline) and Go's profiles
// under /debug/pprof/. See docs/observability.md.
//
// Every number comes from the counters the engine already keeps for its
// streamsql_* system views and from the dataflow's per-operator counters
// (dataflow.Job.Operators), read when a request comes: a scrape or a page
// load costs the dataflow nothing and never waits for it. Histograms
// (barrier latency, checkpoint duration) are fed by engine.Observer
// events.
//
// Ownership and concurrency: a Server is safe for concurrent use; its
// handlers run on net/http's goroutines. It owns its Prometheus registry
// (never the global one) and its mux (never http.DefaultServeMux).
package web
