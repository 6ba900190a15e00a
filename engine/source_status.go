package engine

import (
	"context"
	"sort"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/types"
)

// sourceReaders are the running source readers that report their
// progress (connector.Reporter), for streamsql_sources. Safe for
// concurrent use.
type sourceReaders struct {
	mu sync.Mutex
	m  map[*sourceReader]struct{}
}

// sourceReader is one running reader of a source for a view.
type sourceReader struct {
	job, source uint32
	rep         connector.Reporter
	mu          sync.Mutex
	marks       []dataflow.PartMark // the partitions' watermarks at the last barrier
}

// add lists e until the returned function is called.
func (rs *sourceReaders) add(e *sourceReader) (remove func()) {
	rs.mu.Lock()
	if rs.m == nil {
		rs.m = map[*sourceReader]struct{}{}
	}
	rs.m[e] = struct{}{}
	rs.mu.Unlock()
	return func() {
		rs.mu.Lock()
		delete(rs.m, e)
		rs.mu.Unlock()
	}
}

// track makes sr's reader listed while its Run runs, with the
// partitions' watermarks the runtime reports at each barrier.
func (rs *sourceReaders) track(sr *dataflow.SourceReader, job, source uint32, rep connector.Reporter) {
	e := &sourceReader{job: job, source: source, rep: rep}
	run := sr.Run
	sr.Run = func(ctx context.Context, emit func(arrow.RecordBatch) error) error {
		defer rs.add(e)()
		return run(ctx, emit)
	}
	sr.Marks = func(m []dataflow.PartMark) {
		e.mu.Lock()
		e.marks = m
		e.mu.Unlock()
	}
}

// sourceStatus lists the tracked readers' partitions (streamsql_sources),
// by source, view and partition.
func (e *Engine) sourceStatus() []catalog.SourceStatus {
	e.readers.mu.Lock()
	readers := make([]*sourceReader, 0, len(e.readers.m))
	for r := range e.readers.m {
		readers = append(readers, r)
	}
	e.readers.mu.Unlock()
	name := func(oid uint32) string {
		if r := e.cat.Relation(oid); r != nil {
			return r.Name
		}
		return ""
	}
	var out []catalog.SourceStatus
	for _, r := range readers {
		rep := r.rep.Report()
		r.mu.Lock()
		marks := map[int32]dataflow.PartMark{}
		for _, m := range r.marks {
			marks[m.Partition] = m
		}
		r.mu.Unlock()
		src, view := name(r.source), name(r.job)
		for _, p := range rep.Partitions {
			m := marks[p.Partition]
			lastErr := p.LastError // a skipped message of the partition, else the reader's failure
			if lastErr == "" {
				lastErr = rep.LastError
			}
			out = append(out, catalog.SourceStatus{Source: src, View: view, Partition: p.Partition,
				Offset: p.Offset, HighWatermark: p.HighWatermark, Lag: p.Lag,
				Watermark: types.TimestampValue(m.WM), HasWatermark: m.Has, Idle: m.Idle,
				Rows: p.Rows, BadRows: p.BadRows, LastError: lastErr, Status: rep.State})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		if a.View != b.View {
			return a.View < b.View
		}
		return a.Partition < b.Partition
	})
	return out
}
