package dataflow

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/connector"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// Routed generators (docs/contributing/parallel.md, "Routed
// generators"). A hash exchange that reads a split source's readers
// directly (no fused operator between them) and routes by one or two
// bigint columns asks the readers to route their rows themselves: the job
// notes a stream.Routing for the scan (noteRoutes, routeScan) before it
// opens any reader (a resuming job's too: prepareResume), openScan opens
// its readers through RoutedInputs with a connector.Route,
// and a reader that can route (connector.PartsReader: the nexmark
// generator's bid auction, bidder, price and auction id) emits each step
// as one batch per instance. readSource sends each part as a Chunk whose
// Part names the routing, and the exchange sends it to its instance as
// it is (no hashing, no gather). Readers that cannot route read as
// before, and their chunks are routed by the exchange.
//
// Ownership: a part is a batch of its own, built by the reader for one
// instance; once sent it belongs to that instance's consumers and is
// never changed (as every Chunk).

// RoutedInputs is implemented by Inputs whose source readers can route
// their rows (the engine's, the benchmark's).
type RoutedInputs interface {
	// OpenSourceRouted is ColumnInputs.OpenSourceColumns with a routing
	// for the reader (nil: none); the reader routes when its
	// SourceReader has RunParts.
	OpenSourceRouted(job, oid uint32, cols []int, route *connector.Route, pos []byte, split, splits int, onError func(error)) (SourceReader, error)
}

// isJoin reports whether op is a join, whose inputs are not routed at
// the source: measured, q7's interval join at two instances cost more
// CPU with routed bids (1.99 -> 2.29 and 2.15 -> 2.41 CPU-s, medians of
// 3-4 alternated runs; docs/benchmarks.md, sixth stop), q4's and q9's
// no less; the cause is not found (a routed step spans twice the event
// time of an unrouted batch, so watermarks reach the join in larger
// steps).
func isJoin(op stream.Node) bool {
	switch op.(type) {
	case *stream.HashJoin: // (interval and window joins too)
		return true
	}
	return false
}

// scanRoute is the routing a source scan's readers are asked for: col is
// the routed column of the scan's output.
type scanRoute struct {
	rt  *stream.Routing
	col int
	// two: routed by col and col2 (Routing.Owner2)
	two  bool
	col2 int
}

// noteRoutes decides, before any reader opens, which split source scans
// under n route their rows for the hash exchange above them (routeScan):
// a resuming job opens its readers before its operators start
// (prepareResume), and they route as a new job's do. rt.mu is held.
func (j *Job) noteRoutes(n stream.Node) {
	if p, ok := n.(*stream.Parallel); ok && j.routable(p) {
		for i, in := range p.Input.Inputs() {
			j.routeScan(in, p.Keys[i], p.KeyTypes, p.N)
		}
	}
	for _, in := range n.Inputs() {
		j.noteRoutes(in)
	}
}

// routable reports whether p's inputs may be routed by their readers: p
// runs as instances here behind hash exchanges (not placed on the nodes:
// nodesplits.go) and is no join.
func (j *Job) routable(p *stream.Parallel) bool {
	if p.N < 2 || p.Local || p.NoShuffle || isJoin(p.Input) || len(p.Keys) != len(p.Input.Inputs()) {
		return false
	}
	return j.splitPlacement() == nil || !j.rt.placed(p)
}

// routeOf is the routing noted (noteRoutes) for the readers under in, an
// input of p with keys keys; nil when they do not route.
func (j *Job) routeOf(p *stream.Parallel, in stream.Node, keys []int) *stream.Routing {
	if !j.routable(p) || len(keys) == 0 {
		return nil
	}
	if s, _ := scanColumn(in, keys[0]); s != nil {
		return j.routes[s].rt
	}
	return nil
}

// routeScan notes the routing that the readers of in, an input of a hash
// exchange by keys (of types ts) among n instances, build their batches
// for (openScan, routeOf); none when in is not a split source scan, the
// key is not one or two bigint columns, or the inputs cannot route.
func (j *Job) routeScan(in stream.Node, keys []int, ts []types.T, n int) {
	if n < 2 || len(keys) < 1 || len(keys) > 2 || len(ts) != len(keys) {
		return
	}
	for _, t := range ts {
		if t.Kind != types.Int8 {
			return
		}
	}
	s, col := scanColumn(in, keys[0])
	if s == nil || s.Kind != stream.ScanSource || j.sharing(s) { // a shared read is not routed (share.go)
		return
	}
	sr := scanRoute{col: col}
	if len(keys) == 2 {
		s2, col2 := scanColumn(in, keys[1])
		if s2 != s {
			return
		}
		sr.two, sr.col2 = true, col2
	}
	if j.rt.readersOf(s) < 2 {
		return
	}
	if _, ok := j.rt.in.(RoutedInputs); !ok {
		return
	}
	if _, dup := j.routes[s]; dup { // one scan read by two exchanges: route by neither
		j.routes[s] = scanRoute{}
		return
	}
	if j.routes == nil {
		j.routes = map[*stream.Scan]scanRoute{}
	}
	sr.rt = stream.NewRouting(n)
	j.routes[s] = sr
}

// scanColumn follows column col of in's output down through fused
// Projects (a plain column reference) and Filters (which pass a
// routed chunk's Part on: they keep its rows or some of them) to the
// scan under them; nil when in is not such a chain over a scan.
func scanColumn(in stream.Node, col int) (*stream.Scan, int) {
	for {
		switch x := in.(type) {
		case *stream.Scan:
			return x, col
		case *stream.Project:
			ref, ok := x.Exprs[col].(*expr.ColRef)
			if !ok {
				return nil, 0
			}
			in, col = x.Input, ref.Idx
		case *stream.Filter:
			in = x.Input
		default:
			return nil, 0
		}
	}
}

// openRouted opens reader i of k of scan s at pos with the routing noted
// for s, or reports false when there is none.
func (j *Job) openRouted(s *stream.Scan, pos []byte, i, k int) (sourceRun, bool, error) {
	sr, ok := j.routes[s]
	ri, ok2 := j.rt.in.(RoutedInputs)
	if !ok || sr.rt == nil || !ok2 || k < 2 {
		return sourceRun{}, false, nil
	}
	col, col2 := sr.col, sr.col2
	if s.Read != nil {
		col = s.Read[col]
		if sr.two {
			col2 = s.Read[col2]
		}
	}
	route := &connector.Route{Col: col, N: sr.rt.N, Owner: sr.rt.Owner}
	if sr.two {
		route.Col2, route.Owner2 = col2, sr.rt.Owner2
	}
	r, err := ri.OpenSourceRouted(j.spec.ID, s.Rel, s.Read, route, pos, i, k, j.rowError)
	if err != nil {
		return sourceRun{}, true, err
	}
	src := readerRun(r, pos, true)
	if r.RunParts != nil {
		src.runParts, src.route = r.RunParts, sr.rt
	}
	return src, true, nil
}

// sendParts sends a routed reader's step (sendNew for parts): each part
// as a chunk for its instance, then the watermark after all of them. A
// part's chunk carries recycle (nil: none), so that its consumer can give
// its buffers back; nothing here reads a part once it is sent.
func (j *Job) sendParts(out chan<- stream.Message, parts []arrow.RecordBatch, rt *stream.Routing, recycle func(arrow.RecordBatch), w *wmTracker) bool {
	for k, rec := range parts {
		if !j.sendOwned(out, rec, rt.Part(k), recycle, w) {
			return false
		}
	}
	return j.sendWM(out, w)
}
