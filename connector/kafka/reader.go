package kafka

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/connector/internal/decode"
	"github.com/streamsql/streamsql/connector/internal/position"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BatchRows is the most rows a Reader puts in one batch. Every batch holds
// the messages of one partition (Partition).
const BatchRows = 4096

// Fetch limits: a reader buffers at most fetchMaxBytes per fetch request
// and maxFetches fetches that its Run loop has not taken yet (the fetcher
// stops fetching while they wait), so a blocked emit keeps memory flat.
const (
	fetchMaxBytes     = 8 << 20
	fetchMaxPartBytes = 1 << 20
	maxFetches        = 2
)

// retry backoff while the brokers cannot be reached at the start.
const (
	backoffMin = 100 * time.Millisecond
	backoffMax = 5 * time.Second
)

// payloadPrefix is how much of a bad message's value its error shows;
// maxErrorText bounds the error's own text (which may quote a value).
const (
	payloadPrefix = 64
	maxErrorText  = 256
)

// ReaderOptions are a Reader's settings from the runtime.
type ReaderOptions struct {
	// Errors, if not nil, is called on the Run goroutine with each skipped
	// message's error (naming the partition and offset and showing a
	// prefix of the payload), and with a warning when the broker reports
	// that messages were lost before they were read (retention).
	Errors func(err error)
	// Progress: the caller takes emit(nil) as "the position moved without
	// rows" (connector.ReaderOptions.Progress); Run sends one after a
	// fetch that moved the position past transaction markers, aborted or
	// bad messages only, so a FLUSH waiting for InputEnd can end.
	Progress bool
	// Split and Splits make the reader reader Split of Splits readers of
	// the source (Splits <= 1: the only one): it reads the partitions p
	// with p mod Splits == Split, at the start and as discovered; one
	// that has none is idle (connector.Partitioned: an empty list).
	Split, Splits int
}

// Reader reads a Source's topic (connector.Reader, connector.Positioner).
// It is owned by the goroutine that calls Seek and then Run, once; Status
// may be called from any goroutine.
type Reader struct {
	src  *Source
	opts ReaderOptions

	// next is the next offset to read in each partition whose offset is
	// known (resolved at the start, from the position, or read): messages
	// before it were emitted or skipped as bad. Run goroutine only.
	next     map[int32]int64
	resolved bool         // next holds every partition the reader started with
	moved    bool         // next moved since the last emit, without rows
	last     int32        // the partition of the last batch emitted
	topicID  kadm.TopicID // the topic's id when last listed (zero: not known)

	row     *decode.Row
	batch   *decode.Batch
	buffers *decompressBuffers // recycled decompression buffers
	avro    avroReader         // ENCODE AVRO's plans by schema id

	mu     sync.Mutex // guards state, listed and admin
	state  Status
	listed bool        // state.Partitions holds every partition read
	admin  *kgo.Client // Run's client for listings (InputEnd); nil when not running
}

// Status is what a Reader reports about itself (streamsql_sources).
type Status struct {
	Topic      string
	State      string            // starting, waiting for topic, running, retrying
	LastError  string            // the last failure of the reader (brokers, fetches)
	Partitions []PartitionStatus // by partition
}

// PartitionStatus is one partition's progress.
type PartitionStatus struct {
	Partition     int32
	Offset        int64 // the next offset to read; -1 while not known
	HighWatermark int64 // the broker's last stable offset at the last fetch; -1 while not known
	Rows, BadRows int64
	LastError     string // the last message of the partition skipped, and why
}

// Lag is how many offsets the partition is behind its high watermark
// (-1 while not known). Transaction markers count as offsets.
func (p PartitionStatus) Lag() int64 {
	if p.Offset < 0 || p.HighWatermark < 0 {
		return -1
	}
	return max(p.HighWatermark-p.Offset, 0)
}

// NewReader returns a reader of s that starts as scan.startup.mode says.
func (s *Source) NewReader(o ReaderOptions) *Reader {
	return &Reader{src: s, opts: o, next: map[int32]int64{}, row: s.dec.NewRow(), batch: s.dec.NewBatch(), buffers: &decompressBuffers{},
		state: Status{Topic: s.topic, State: "starting"}}
}

// Seek makes Run start at pos, a Position of a reader of the same source
// (nil: as scan.startup.mode says): each partition in pos at its offset,
// partitions not in it (added to the topic since) at their start. Call it
// before Run. A malformed position is an XX001 error.
func (r *Reader) Seek(pos []byte) error {
	if pos == nil {
		r.next, r.resolved = map[int32]int64{}, false
		return nil
	}
	m, err := position.DecodeOffsets(pos)
	if err != nil {
		return err
	}
	for p := range m {
		if !r.mine(p) {
			delete(m, p) // another reader's (a position of another split)
		}
	}
	r.next, r.resolved = m, true
	return nil
}

// Position is the reader's position after the last batch it passed to
// emit (connector.Positioner): the next offset of each partition. Before
// a reader without a position has resolved its startup offsets it is nil
// (a reader resumed there starts as scan.startup.mode says). Call it on
// the Run goroutine, from emit or after Run returned.
func (r *Reader) Position() []byte {
	if !r.resolved {
		return nil
	}
	return position.EncodeOffsets(r.next)
}

// Partition is the partition of the batch being emitted (call it from
// emit).
func (r *Reader) Partition() int32 { return r.last }

// Partitions are the partitions the reader reads (connector.Partitioned):
// nil until it has listed them at the start, then each partition before
// its first batch. Safe from any goroutine.
func (r *Reader) Partitions() []int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.listed {
		return nil
	}
	ps := make([]int32, len(r.state.Partitions))
	for i, p := range r.state.Partitions {
		ps[i] = p.Partition
	}
	return ps
}

// Status returns a copy of the reader's status; safe from any goroutine.
func (r *Reader) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.state
	s.Partitions = append([]PartitionStatus(nil), s.Partitions...)
	return s
}

// setState records the reader's state and, when err is not nil, its error.
func (r *Reader) setState(state string, err error) {
	r.mu.Lock()
	r.state.State = state
	if err != nil {
		r.state.LastError = err.Error()
	}
	r.mu.Unlock()
}

// part returns the status of partition p, adding it; r.mu is held.
func (r *Reader) part(p int32) *PartitionStatus {
	ps := r.state.Partitions
	i := sort.Search(len(ps), func(i int) bool { return ps[i].Partition >= p })
	if i == len(ps) || ps[i].Partition != p {
		ps = append(ps, PartitionStatus{})
		copy(ps[i+1:], ps[i:])
		ps[i] = PartitionStatus{Partition: p, Offset: -1, HighWatermark: -1}
		r.state.Partitions = ps
	}
	return &ps[i]
}

// Run reads the topic until ctx is canceled (it returns ctx.Err()) or emit
// fails (it returns emit's error). It never gives up on Kafka: brokers
// that cannot be reached, a missing topic or failing fetches are retried
// (franz-go backs off), shown in Status, and reading resumes by itself.
func (r *Reader) Run(ctx context.Context, emit func(arrow.RecordBatch) error) error {
	adminCl, err := kgo.NewClient(r.src.client.Opts()...)
	if err != nil {
		return pgerr.Wrap(err, pgerr.InvalidParameterValue, "kafka: %v", err)
	}
	defer adminCl.Close()
	adm := kadm.NewClient(adminCl)
	for {
		parts, err := r.waitPartitions(ctx, adminCl)
		if err != nil {
			return err
		}
		if err := r.resolve(ctx, adm, parts); err != nil {
			return err
		}
		if err := r.session(ctx, adminCl, adm, parts, emit); err != errTopicGone {
			return err
		}
		// The topic was deleted (and perhaps created again: a new topic
		// id the consumer does not follow): start over with a new one.
		if err := sleep(ctx, sessionPause); err != nil {
			return err
		}
	}
}

// sessionPause is the pause before a reader whose topic went away starts
// consuming again.
const sessionPause = time.Second

// errTopicGone ends a session whose topic the brokers no longer know.
var errTopicGone = errors.New("kafka: the topic is gone")

// session consumes parts, each at its offset in r.next (at its start if
// none), until ctx ends, emit fails or the topic is gone (errTopicGone).
func (r *Reader) session(ctx context.Context, admCl *kgo.Client, adm *kadm.Client, parts []int32, emit func(arrow.RecordBatch) error) error {
	known := map[int32]bool{}
	start := map[int32]int64{}
	for _, p := range parts {
		known[p] = true
		if o, ok := r.next[p]; ok {
			start[p] = o
		} else {
			start[p] = offsetStart
		}
	}
	r.mu.Lock()
	for _, p := range parts {
		if o, ok := r.next[p]; ok {
			r.part(p).Offset = o
		} else {
			r.part(p)
		}
	}
	r.listed = true
	r.mu.Unlock()
	cl, err := kgo.NewClient(r.src.client.Opts()...)
	if err != nil {
		return pgerr.Wrap(err, pgerr.InvalidParameterValue, "kafka: %v", err)
	}
	defer cl.Close()
	f := newFetcher(cl, adm, r.src.topic, r.buffers, r.setState)
	f.id = r.topicID // a topic created again since it was listed is another topic
	bg, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		f.run(bg, start)
	}()
	go func() {
		defer wg.Done()
		r.background(bg, admCl, adm, f, known)
	}()
	defer wg.Wait()
	defer stop()
	r.setState("running", nil)
	if r.moved && r.opts.Progress { // the startup offsets were resolved: report them
		r.moved = false
		if err := emit(nil); err != nil {
			return err
		}
	}
	for {
		var got fetched
		select {
		case got = <-f.out:
		case <-ctx.Done():
			return ctx.Err()
		}
		if got.err != nil {
			return got.err
		}
		for i, pf := range got.parts {
			if pf.warn != nil {
				if r.opts.Errors != nil {
					r.opts.Errors(pf.warn)
				}
				r.setState("running", pf.warn)
			}
			err := r.partition(ctx, pf, emit)
			pf.release(r.buffers)
			if err != nil {
				for _, rest := range got.parts[i+1:] {
					rest.release(r.buffers)
				}
				return err
			}
		}
		if r.moved && r.opts.Progress {
			r.moved = false
			if err := emit(nil); err != nil {
				return err
			}
		}
	}
}

// InputEnd implements connector.Ender: the position the reader reaches
// once it has read every partition of the topic that is its own (Split) to its last stable offset
// of now (transaction markers included); partitions with nothing to read
// are left out, and nil means nothing to wait for. It asks the brokers
// with a client of its own, so it works while the reader is starting; an
// error when they cannot be asked or the topic does not exist.
func (r *Reader) InputEnd(ctx context.Context) ([]byte, error) {
	cl, err := kgo.NewClient(r.src.client.Opts()...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	parts, err := partitions(ctx, cl, r.src.topic)
	if err != nil {
		return nil, err
	}
	parts = r.own(parts) // the reader's share: the others' readers wait for theirs
	starts, ends, err := listBounds(ctx, kadm.NewClient(cl), r.src.topic)
	if err != nil {
		return nil, err
	}
	end := map[int32]int64{}
	for _, p := range parts {
		s, _ := starts.Lookup(r.src.topic, p)
		e, ok := ends.Lookup(r.src.topic, p)
		if ok && e.Offset > max(s.Offset, 0) {
			end[p] = e.Offset
		}
	}
	if len(end) == 0 {
		return nil, nil
	}
	return position.EncodeOffsets(end), nil
}

// waitPartitions lists the topic's partitions, retrying with backoff while
// the brokers cannot be reached or the topic does not exist.
func (r *Reader) waitPartitions(ctx context.Context, cl *kgo.Client) ([]int32, error) {
	wait := backoffMin
	for {
		ps, id, err := partitionsID(ctx, cl, r.src.topic)
		if err == nil {
			r.checkID(id)
			return r.own(ps), nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		state := "retrying"
		if pgerr.CodeOf(err) == pgerr.UndefinedObject {
			state = "waiting for topic"
			r.mu.Lock()
			r.listed = true // no partitions: idle (Partitions)
			r.mu.Unlock()
		}
		r.setState(state, err)
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
		wait = min(2*wait, backoffMax)
	}
}

// checkID notes the topic's id; when it changed since the reader last
// listed the topic (deleted and created again while read), the offsets
// read belong to the old topic: every partition is read from its start,
// and a warning reported.
func (r *Reader) checkID(id kadm.TopicID) {
	if id == (kadm.TopicID{}) {
		return
	}
	if r.topicID != (kadm.TopicID{}) && id != r.topicID {
		r.next = map[int32]int64{}
		if r.opts.Errors != nil {
			r.opts.Errors(pgerr.New(pgerr.Warning, "kafka topic %q was created again while read: reading it from its start", r.src.topic))
		}
	}
	r.topicID = id
}

// resolve gives every partition in parts that has no offset yet the one
// scan.startup.mode says (a reader without a position), retrying with
// backoff. Partitions added to the topic later start at their start.
func (r *Reader) resolve(ctx context.Context, adm *kadm.Client, parts []int32) error {
	if r.resolved {
		return nil
	}
	wait := backoffMin
	for {
		var l kadm.ListedOffsets
		var err error
		switch r.src.mode {
		case Earliest:
			l, err = adm.ListStartOffsets(ctx, r.src.topic)
		case Latest:
			l, err = adm.ListCommittedOffsets(ctx, r.src.topic)
		case Timestamp:
			l, err = adm.ListOffsetsAfterMilli(ctx, r.src.startMs, r.src.topic)
		}
		if err == nil {
			err = l.Error()
		}
		var end kadm.ListedOffsets
		if err == nil && r.src.mode == Timestamp {
			// No message at or after the time: the partition's end.
			end, err = adm.ListCommittedOffsets(ctx, r.src.topic)
			if err == nil {
				err = end.Error()
			}
		}
		if err == nil {
			for _, p := range parts {
				o, ok := l.Lookup(r.src.topic, p)
				if !ok || o.Offset < 0 {
					if o, ok = end.Lookup(r.src.topic, p); !ok {
						o.Offset = 0
					}
				}
				r.next[p] = max(o.Offset, 0)
			}
			r.resolved, r.moved = true, true
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.setState("retrying", fmt.Errorf("kafka: listing the offsets of topic %q: %w", r.src.topic, err))
		if err := sleep(ctx, wait); err != nil {
			return err
		}
		wait = min(2*wait, backoffMax)
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// background discovers partitions added to the topic (every
// scan.partition.discovery.interval) and commits the offsets read to
// group.id.prefix's group, for monitoring only (every commitInterval),
// until ctx is canceled. known are the partitions consumed at the start.
func (r *Reader) background(ctx context.Context, admCl *kgo.Client, adm *kadm.Client, f *fetcher, known map[int32]bool) {
	var disc, commit <-chan time.Time
	if r.src.discovery > 0 {
		t := time.NewTicker(r.src.discovery)
		defer t.Stop()
		disc = t.C
	}
	if r.src.group != "" {
		t := time.NewTicker(commitInterval)
		defer t.Stop()
		commit = t.C
	}
	var committed map[int32]int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-disc:
			ps, err := partitions(ctx, admCl, r.src.topic)
			if err != nil {
				if ctx.Err() == nil {
					r.setState("retrying", err)
				}
				continue
			}
			r.mu.Lock()
			if r.state.State == "retrying" { // the brokers answer again
				r.state.State = "running"
			}
			r.mu.Unlock()
			var added []int32
			add := map[int32]int64{}
			for _, p := range r.own(ps) {
				if !known[p] {
					known[p] = true
					added = append(added, p)
					add[p] = offsetStart
				}
			}
			if len(added) == 0 {
				continue
			}
			// A partition enters r.next with its first message; one missing
			// from a position starts at its start, as here.
			r.mu.Lock()
			for _, p := range added {
				r.part(p)
			}
			r.mu.Unlock()
			select {
			case f.add <- add:
			case <-ctx.Done():
				return
			}
		case <-commit:
			committed = r.commit(ctx, adm, committed)
		}
	}
}

// commitInterval is how often offsets are committed for monitoring (a
// variable for tests).
var commitInterval = 5 * time.Second

// commit commits the offsets read since the last commit (prev) to the
// monitoring group; it returns what is committed now.
func (r *Reader) commit(ctx context.Context, adm *kadm.Client, prev map[int32]int64) map[int32]int64 {
	st := r.Status()
	os := kadm.Offsets{}
	now := map[int32]int64{}
	for _, p := range st.Partitions {
		if p.Offset < 0 {
			continue
		}
		now[p.Partition] = p.Offset
		if prev[p.Partition] != p.Offset {
			os.Add(kadm.Offset{Topic: r.src.topic, Partition: p.Partition, At: p.Offset, LeaderEpoch: -1})
		}
	}
	if len(os) == 0 {
		return prev
	}
	res, err := adm.CommitOffsets(ctx, r.src.group, os)
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		if ctx.Err() == nil {
			r.setState("running", fmt.Errorf("kafka: committing offsets to group %q (monitoring only): %w", r.src.group, err))
		}
		return prev
	}
	return now
}

// partition decodes one partition's fetched messages into batches of up
// to BatchRows rows and emits them.
func (r *Reader) partition(ctx context.Context, pf *partitionFetch, emit func(arrow.RecordBatch) error) error {
	p := pf.partition
	var rows, bad int64
	next := int64(-1) // the offset after the last message decoded (r.next[p] is set from it before an emit)
	flush := func() error {
		if next >= 0 {
			if r.next[p] != next {
				r.moved = true
			}
			r.next[p] = next
		}
		if r.batch.Len() == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		r.last = p
		r.moved = false // the position emit reports covers every partition
		return emit(r.batch.Take())
	}
	var ferr error
	msg := message{Partition: p}
	each := func(offset, ts int64, key, value []byte) bool {
		if offset < pf.from { // a batch that starts before the offset asked for
			return true
		}
		msg.Offset, msg.Timestamp, msg.Key, msg.Value = offset, ts, key, value
		col, err := r.decode(ctx, &msg)
		if errors.Is(err, errStopped) {
			ferr = ctx.Err() // not read: the message is not skipped
			return false
		}
		next = offset + 1
		if err != nil {
			bad++
			r.bad(&msg, col, err)
			return true
		}
		if err := r.batch.Add(r.row); err != nil {
			ferr = fmt.Errorf("kafka connector: %w", err)
			return false
		}
		rows++
		if r.batch.Len() >= BatchRows {
			if err := flush(); err != nil {
				ferr = err
				return false
			}
		}
		return true
	}
	for _, b := range pf.batches {
		if err := eachRecord(b, each); err != nil && ferr == nil {
			// The batch passed its CRC, so the broker sent what a producer
			// wrote: its unreadable rest is counted as one bad message.
			bad++
			msg.Offset, msg.Key, msg.Value = max(next, b.baseOffset), nil, nil
			r.bad(&msg, -1, pgerr.Wrap(err, pgerr.DataCorrupted, "a record batch does not parse: %v", err))
		}
		if ferr != nil {
			return ferr
		}
	}
	for _, m := range pf.legacy {
		if !each(m.Offset, m.Timestamp, m.Key, m.Value) {
			return ferr
		}
	}
	next = max(next, pf.next) // aborted batches and markers are read too
	if err := flush(); err != nil {
		return err
	}
	r.mu.Lock()
	ps := r.part(p)
	if o, ok := r.next[p]; ok {
		ps.Offset = o
	}
	if pf.hwm >= 0 {
		ps.HighWatermark = pf.lso
		if ps.HighWatermark < 0 {
			ps.HighWatermark = pf.hwm
		}
	}
	ps.Rows += rows
	ps.BadRows += bad
	r.mu.Unlock()
	return nil
}

// decode reads one message into r.row; on error col is the column at
// fault, or -1.
func (r *Reader) decode(ctx context.Context, rec *message) (int, error) {
	var col int
	var err error
	value, key := rec.Value, rec.Key
	tombstone := value == nil
	decoded := false
	switch {
	case r.src.debezium && r.src.format == Avro && value != nil:
		// A delete's "before" row holds the key columns: a tombstone.
		if tombstone, col, err = r.decodeDebeziumAvro(ctx, value); err != nil {
			return col, err
		}
		decoded = true
	case r.src.debezium && r.src.format == Avro: // Debezium's tombstone after a delete: the Avro key
	case r.src.debezium: // a delete event is a tombstone whose key is "before"
		if value, key, tombstone, err = debeziumMessage(rec.Key, rec.Value); err != nil {
			return -1, err
		}
	}
	switch {
	case decoded:
	case tombstone && !r.src.upsert:
		return -1, pgerr.New(pgerr.InvalidTextRepresentation, "the message has no value (a tombstone)")
	case tombstone:
		// The key's columns from the key, when it is a JSON object (an
		// Avro record for ENCODE AVRO); the INCLUDE key column (below)
		// otherwise.
		if r.src.format == Avro {
			if _, err := r.decodeAvro(ctx, key); errors.Is(err, errStopped) {
				return -1, err
			} else if err != nil || key == nil {
				r.row.Clear()
			}
		} else if _, err := r.row.JSON(key); err != nil || key == nil {
			r.row.JSON([]byte("{}")) // all NULL
		}
	case r.src.format == Avro:
		col, err = r.decodeAvro(ctx, value)
	case r.src.format == JSON:
		col, err = r.row.JSON(value)
	default:
		v := value
		for len(v) > 0 && (v[len(v)-1] == '\n' || v[len(v)-1] == '\r') {
			v = v[:len(v)-1]
		}
		col, err = r.row.CSV(v, ',')
	}
	if err != nil {
		return col, err
	}
	for _, m := range r.src.meta {
		switch m.kind {
		case MetaPartition:
			r.row.SetInt(m.col, int64(rec.Partition))
		case MetaOffset:
			r.row.SetInt(m.col, rec.Offset)
		case MetaTimestamp:
			r.row.SetValue(m.col, types.TimestampValue(rec.Timestamp*1000))
		case MetaKey:
			if rec.Key == nil {
				r.row.SetNull(m.col)
			} else {
				r.row.SetValue(m.col, rec.Key)
			}
		}
	}
	if r.src.upsert {
		r.row.SetValue(len(r.src.cols)-1, tombstone)
	}
	return -1, nil
}

// bad reports a skipped message; col is -1 for the whole message.
func (r *Reader) bad(rec *message, col int, err error) {
	where := describe(r.src.topic, rec.Partition, rec.Offset)
	if col >= 0 {
		where += ", column " + r.src.cols[col].Name
	}
	msg := err.Error()
	if len(msg) > maxErrorText { // a huge value quoted by its type's input
		msg = strings.ToValidUTF8(msg[:maxErrorText], "") + "..."
	}
	e := &pgerr.Error{Code: pgerr.CodeOf(err), Message: where + ": " + msg, Cause: err}
	if pe := pgerr.As(err); pe != nil {
		e.Hint = pe.Hint
	}
	v := rec.Value
	if len(v) > payloadPrefix {
		e.Detail = fmt.Sprintf("The message (%d bytes) starts with %q.", len(v), v[:payloadPrefix])
	} else {
		e.Detail = fmt.Sprintf("The message is %q.", v)
	}
	r.mu.Lock()
	r.part(rec.Partition).LastError = e.Message // streamsql_sources.last_error of its partition
	r.mu.Unlock()
	if r.opts.Errors != nil {
		r.opts.Errors(e)
	}
}
