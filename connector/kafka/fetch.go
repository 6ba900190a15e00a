package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetcher reads one topic's partitions for a reader session with plain
// Fetch requests (read_committed, no fetch session), franz-go's client
// providing the broker connections, version negotiation and metadata.
//
// Its run goroutine owns the partitions' fetch offsets and leaders: it
// sends at most one request at a time to each leader, for all the
// partitions that leader has that are not already in a request; each
// request's goroutine reads the response's batches (CRC, decompression,
// aborted transactions: readBatches), and run passes each request's
// partitions to the reader through out, whose capacity (maxFetches) is
// what is buffered beyond the requests in flight: a reader that does not
// take them stops the fetching (backpressure).
type fetcher struct {
	cl     *kgo.Client
	adm    *kadm.Client
	topic  string
	id     [16]byte // the topic's id (from metadata)
	dec    kgo.Decompressor
	pool   *decompressBuffers
	status func(state string, err error) // the reader's state

	out chan fetched         // to the reader
	add chan map[int32]int64 // partitions added while running (offset < 0: the start)
}

// fetched is what one request brought (parts), or the end of the
// fetcher's run (err: errTopicGone).
type fetched struct {
	parts []*partitionFetch
	err   error
}

// fetchWait is how long a broker holds a fetch that finds nothing new.
const fetchWait = 5 * time.Second

// offsetStart asks for a partition's start (the log start offset).
const offsetStart = -2

func newFetcher(cl *kgo.Client, adm *kadm.Client, topic string, pool *decompressBuffers, status func(string, error)) *fetcher {
	return &fetcher{cl: cl, adm: adm, topic: topic, pool: pool, status: status,
		dec: kgo.DefaultDecompressor(pool),
		out: make(chan fetched, maxFetches), add: make(chan map[int32]int64)}
}

// fetchPart is a partition's fetch state (run goroutine only).
type fetchPart struct {
	next   int64 // the next offset to fetch (offsetStart: resolve it)
	leader int32 // -1: not known
	epoch  int32 // the leader's epoch (-1: not known)
	busy   bool  // in a request
}

// reqDone is a request's outcome: its partitions (by partition), each
// with what it read or the error the broker gave for it, or err for the
// whole request.
type reqDone struct {
	parts []int32
	got   []*partitionFetch // nil where errs has the partition's error
	errs  []error
	err   error
}

// run fetches the partitions of start (each at its offset) until ctx
// ends; it ends early, sending errTopicGone, when the brokers no longer
// know the topic or it has another id.
func (f *fetcher) run(ctx context.Context, start map[int32]int64) {
	parts := map[int32]*fetchPart{}
	for p, o := range start {
		parts[p] = &fetchPart{next: o, leader: -1, epoch: -1}
	}
	done := make(chan reqDone, 64)
	inflight := 0
	needMeta, needOffsets := true, true
	var retry <-chan time.Time // a pause after errors
	wait := backoffMin
	fail := func(err error) {
		if ctx.Err() == nil {
			f.status("retrying", err)
		}
		retry = time.After(wait)
		wait = min(2*wait, backoffMax)
	}
	for {
		if retry == nil && needMeta {
			switch err := f.metadata(ctx, parts); {
			case errors.Is(err, errTopicGone):
				select {
				case f.out <- fetched{err: errTopicGone}:
				case <-ctx.Done():
				}
				return
			case err != nil:
				fail(err)
			default:
				needMeta = false
			}
		}
		if retry == nil && needOffsets {
			if err := f.resolveStarts(ctx, parts); err != nil {
				fail(err)
			} else {
				needOffsets = false
			}
		}
		if retry == nil && !needMeta && !needOffsets {
			inflight += f.launch(ctx, parts, done)
		}
		select {
		case <-ctx.Done():
			return
		case <-retry:
			retry = nil
		case add := <-f.add:
			for p, o := range add {
				if parts[p] == nil {
					parts[p] = &fetchPart{next: o, leader: -1, epoch: -1}
				}
			}
			needMeta, needOffsets = true, true
		case d := <-done:
			inflight--
			var got []*partitionFetch
			for i, p := range d.parts {
				fp := parts[p]
				fp.busy = false
				if d.err != nil {
					continue
				}
				if err := d.errs[i]; err != nil {
					switch {
					case errors.Is(err, kerr.OffsetOutOfRange):
						pf, rerr := f.outOfRange(ctx, p, fp.next)
						if rerr != nil {
							fail(rerr)
							continue
						}
						fp.next = pf.next
						got = append(got, pf)
					case errors.Is(err, errCorruptBatch):
						fail(fmt.Errorf("kafka topic %q, partition %d: %w", f.topic, p, err))
					default:
						needMeta = true
						fail(fmt.Errorf("kafka topic %q, partition %d: %w", f.topic, p, err))
					}
					continue
				}
				pf := d.got[i]
				fp.next = pf.next
				got = append(got, pf)
			}
			if d.err != nil {
				needMeta = true
				fail(fmt.Errorf("kafka topic %q: fetching: %w", f.topic, d.err))
			} else if retry == nil {
				wait = backoffMin
				f.status("running", nil)
			}
			if len(got) > 0 {
				select {
				case f.out <- fetched{parts: got}:
				case <-ctx.Done():
					return
				}
			}
		}
	}
}

// launch sends a request to each leader that has partitions not in a
// request; it returns how many it sent.
func (f *fetcher) launch(ctx context.Context, parts map[int32]*fetchPart, done chan<- reqDone) int {
	byLeader := map[int32][]int32{}
	for p, fp := range parts {
		if !fp.busy && fp.leader >= 0 && fp.next >= 0 {
			byLeader[fp.leader] = append(byLeader[fp.leader], p)
		}
	}
	for leader, ps := range byLeader {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.MaxWaitMillis = int32(fetchWait / time.Millisecond)
		req.MinBytes = 1
		req.MaxBytes = fetchMaxBytes
		req.IsolationLevel = 1 // read_committed
		req.SessionEpoch = -1  // no fetch session: every request is whole
		t := kmsg.NewFetchRequestTopic()
		t.Topic, t.TopicID = f.topic, f.id
		from := make([]int64, len(ps))
		for i, p := range ps {
			fp := parts[p]
			fp.busy = true
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.FetchOffset, rp.CurrentLeaderEpoch = p, fp.next, fp.epoch
			rp.LogStartOffset, rp.PartitionMaxBytes = -1, fetchMaxPartBytes
			t.Partitions = append(t.Partitions, rp)
			from[i] = fp.next
		}
		req.Topics = append(req.Topics, t)
		go func() { done <- f.request(ctx, leader, req, ps, from) }()
	}
	return len(byLeader)
}

// request sends req to leader and reads what it brought for ps (fetched
// from the offsets from).
func (f *fetcher) request(ctx context.Context, leader int32, req *kmsg.FetchRequest, ps []int32, from []int64) reqDone {
	d := reqDone{parts: ps, got: make([]*partitionFetch, len(ps)), errs: make([]error, len(ps))}
	kr, err := f.cl.Broker(int(leader)).Request(ctx, req)
	if err != nil {
		d.err = err
		return d
	}
	resp := kr.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		d.err = err
		return d
	}
	for i := range d.errs {
		d.errs[i] = kerr.UnknownTopicOrPartition // unless the response has it
	}
	for ti := range resp.Topics {
		rt := &resp.Topics[ti]
		if rt.Topic != f.topic && rt.TopicID != f.id {
			continue
		}
		for pi := range rt.Partitions {
			rp := &rt.Partitions[pi]
			for i, p := range ps {
				if p != rp.Partition {
					continue
				}
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					d.errs[i] = err
					break
				}
				pf, err := readBatches(f.topic, rp, from[i], f.dec)
				if err != nil && len(pf.batches) == 0 && len(pf.legacy) == 0 {
					pf.release(f.pool)
					d.errs[i] = err
					break
				}
				// batches before a corrupt one are read; the corrupt one is
				// fetched again (and reported then, if it is corrupt again)
				d.got[i], d.errs[i] = pf, nil
				break
			}
		}
	}
	return d
}

// metadata asks the brokers for the topic's partition leaders; it
// returns errTopicGone when they no longer know the topic, or know it
// under another id.
func (f *fetcher) metadata(ctx context.Context, parts map[int32]*fetchPart) error {
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(f.topic)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, f.cl)
	if err != nil {
		return fmt.Errorf("kafka topic %q: metadata: %w", f.topic, err)
	}
	if len(resp.Topics) != 1 {
		return fmt.Errorf("kafka topic %q: metadata: %d topics in the answer", f.topic, len(resp.Topics))
	}
	rt := &resp.Topics[0]
	switch err := kerr.ErrorForCode(rt.ErrorCode); {
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.UnknownTopicID):
		return errTopicGone
	case err != nil:
		return fmt.Errorf("kafka topic %q: metadata: %w", f.topic, err)
	}
	if f.id != ([16]byte{}) && rt.TopicID != ([16]byte{}) && rt.TopicID != f.id {
		return errTopicGone // created again: the reader starts over
	}
	f.id = rt.TopicID
	for _, fp := range parts {
		fp.leader = -1
	}
	for _, mp := range rt.Partitions {
		if fp := parts[mp.Partition]; fp != nil && mp.Leader >= 0 && kerr.ErrorForCode(mp.ErrorCode) == nil {
			fp.leader, fp.epoch = mp.Leader, mp.LeaderEpoch
		}
	}
	for p, fp := range parts {
		if fp.leader < 0 {
			return fmt.Errorf("kafka topic %q, partition %d: no leader", f.topic, p)
		}
	}
	return nil
}

// resolveStarts gives the partitions at offsetStart their log start
// offset.
func (f *fetcher) resolveStarts(ctx context.Context, parts map[int32]*fetchPart) error {
	var need bool
	for _, fp := range parts {
		need = need || fp.next < 0
	}
	if !need {
		return nil
	}
	l, err := f.adm.ListStartOffsets(ctx, f.topic)
	if err == nil {
		err = l.Error()
	}
	if err != nil {
		return fmt.Errorf("kafka: listing the offsets of topic %q: %w", f.topic, err)
	}
	for p, fp := range parts {
		if fp.next < 0 {
			o, ok := l.Lookup(f.topic, p)
			if !ok {
				return fmt.Errorf("kafka: topic %q has no start offset for partition %d", f.topic, p)
			}
			fp.next = max(o.Offset, 0)
		}
	}
	return nil
}

// outOfRange handles a fetch of partition p at offset next that the
// broker says is out of range: the messages before the log's start were
// deleted (retention) before they were read, or the log was cut below
// next. Reading goes on at the start or the end, with a warning that
// messages were lost.
func (f *fetcher) outOfRange(ctx context.Context, p int32, next int64) (*partitionFetch, error) {
	starts, ends, err := listBounds(ctx, f.adm, f.topic)
	if err != nil {
		return nil, err
	}
	s, _ := starts.Lookup(f.topic, p)
	e, _ := ends.Lookup(f.topic, p)
	to := next
	switch {
	case next < s.Offset:
		to = s.Offset
	case next > e.Offset:
		to = e.Offset
	}
	if to == next { // the offsets listed say it is in range: ask again later
		return nil, fmt.Errorf("kafka topic %q, partition %d: offset %d: %w", f.topic, p, next, kerr.OffsetOutOfRange)
	}
	pf := &partitionFetch{partition: p, from: to, next: to, hwm: -1, lso: -1}
	{
		pf.warn = pgerr.New(pgerr.Warning, "kafka topic %q, partition %d: offset %d is out of the log's range [%d, %d] (messages were deleted before they were read, or the log was cut); reading on at %d",
			f.topic, p, next, s.Offset, e.Offset, to)
	}
	return pf, nil
}

// listBounds lists the topic's partitions' log start offsets and last
// stable offsets (what a read_committed reader can reach).
func listBounds(ctx context.Context, adm *kadm.Client, topic string) (starts, ends kadm.ListedOffsets, err error) {
	starts, err = adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err == nil {
		ends, err = adm.ListCommittedOffsets(ctx, topic)
		if err == nil {
			err = ends.Error()
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("kafka: listing the offsets of topic %q: %w", topic, err)
	}
	return starts, ends, nil
}
