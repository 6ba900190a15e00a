package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/pgerr"
)

// This file is the exactly-once sink's progress topic: the record each
// transaction carries (which epoch, which part of it), reading the last
// committed one back (read_committed), and creating the topics.

// progress is what a transaction of writer w of a sink committed: part
// Part (0-based) of Parts of epoch Epoch. Its key is progressKey.
type progress struct {
	Sink   string `json:"sink"`
	Writer int    `json:"writer"`
	Epoch  uint64 `json:"epoch"`
	Part   int    `json:"part"`
	Parts  int    `json:"parts"`
}

// done says whether the epoch e's part k is committed by p.
func (p progress) done(e uint64, k int) bool {
	return p.Epoch > e || (p.Epoch == e && p.Part >= k)
}

func progressKey(c *sinkConfig, writer int) []byte {
	return fmt.Appendf(nil, "%s/%d", c.txnPrefix, writer)
}

func progressRecord(c *sinkConfig, writer int, p progress) *kgo.Record {
	v, _ := json.Marshal(p)
	return &kgo.Record{Topic: c.progressTopic, Key: progressKey(c, writer), Value: v}
}

// progressReader reads the progress topic's committed records for one
// key, remembering where it stopped in each partition so that the next
// read only reads what was added.
type progressReader struct {
	cl   *kgo.Client
	c    *sinkConfig
	key  string
	next map[int32]int64 // next offset to read per partition
	last map[int32]progress
	st   *statusBox // shows a long wait; may be nil
}

func newProgressReader(cl *kgo.Client, c *sinkConfig, writer int) *progressReader {
	return &progressReader{cl: cl, c: c, key: string(progressKey(c, writer)),
		next: map[int32]int64{}, last: map[int32]progress{}}
}

// read returns the last committed progress of the key (ok false when there
// is none), reading every partition up to its last stable offset.
func (r *progressReader) read(ctx context.Context) (p progress, ok bool, err error) {
	tm, err := topicMeta(ctx, r.cl, r.c.progressTopic)
	if err != nil {
		return p, false, err
	}
	for _, pt := range tm.Partitions {
		if err := kerr.ErrorForCode(pt.ErrorCode); err != nil {
			return p, false, fmt.Errorf("progress topic %s partition %d: %w", r.c.progressTopic, pt.Partition, err)
		}
		if err := r.readPartition(ctx, r.c.progressTopic, tm.TopicID, pt.Partition, pt.Leader); err != nil {
			return p, false, err
		}
	}
	// A key lives in one partition; if the topic gained partitions it
	// may have records in two: the later epoch wins.
	for _, q := range r.last {
		if !ok || q.done(p.Epoch, p.Part) {
			p, ok = q, true
		}
	}
	return p, ok, nil
}

// It reads up to the partition's high watermark as of its first fetch,
// waiting while the last stable offset is below it: every progress record
// appended before the read began is then decided (a transaction's commit
// markers are written after EndTxn returns, and another writer's open
// transaction holds back the last stable offset until it ends), so a
// commit of ours is never missed.
func (r *progressReader) readPartition(ctx context.Context, topic string, id [16]byte, part, leader int32) error {
	target := int64(-1)
	wait := 5 * time.Millisecond
	for {
		off := r.next[part]
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.MaxWaitMillis, req.MinBytes = 0, 0
		req.MaxBytes = 16 << 20
		req.IsolationLevel = 1 // read_committed
		req.SessionEpoch = -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, id
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = part, off, 8<<20
		rp.CurrentLeaderEpoch, rp.LogStartOffset = -1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		kresp, err := r.cl.Broker(int(leader)).Request(ctx, req)
		if err != nil {
			return err
		}
		resp := kresp.(*kmsg.FetchResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return fmt.Errorf("progress topic fetch: %w", err)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return fmt.Errorf("progress topic fetch: unexpected response shape")
		}
		prp := &resp.Topics[0].Partitions[0]
		if err := kerr.ErrorForCode(prp.ErrorCode); err != nil {
			if errors.Is(err, kerr.OffsetOutOfRange) && prp.LogStartOffset > off {
				r.next[part] = prp.LogStartOffset // compacted or retained away
				continue
			}
			if errors.Is(err, kerr.OffsetOutOfRange) && off > 0 {
				// The topic was recreated: read it again from its start.
				r.next[part] = 0
				delete(r.last, part)
				continue
			}
			return fmt.Errorf("progress topic %s partition %d: %w", topic, part, err)
		}
		if target < 0 {
			target = prp.HighWatermark
		}
		if off >= target {
			return nil
		}
		if off >= prp.LastStableOffset {
			if r.st != nil && wait > 100*time.Millisecond {
				r.st.update(func(s *sink.Status) {
					s.Status = fmt.Sprintf("retrying: waiting for a transaction open in %s partition %d to end", topic, part)
				})
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
			wait = min(2*wait, time.Second)
			continue
		}
		fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
			Offset: off, IsolationLevel: kgo.ReadCommitted(), Topic: topic, Partition: part,
		}, prp, kgo.DefaultDecompressor(), nil)
		if fp.Err != nil {
			return fmt.Errorf("progress topic %s partition %d: %w", topic, part, fp.Err)
		}
		for _, rec := range fp.Records {
			if string(rec.Key) != r.key || rec.Offset >= prp.LastStableOffset {
				continue
			}
			var p progress
			if err := json.Unmarshal(rec.Value, &p); err != nil {
				return fmt.Errorf("progress topic %s partition %d offset %d: %w", topic, part, rec.Offset, err)
			}
			r.last[part] = p
		}
		if next <= off {
			return fmt.Errorf("progress topic %s partition %d: no progress reading at offset %d", topic, part, off)
		}
		if next > prp.LastStableOffset {
			next = prp.LastStableOffset
		}
		r.next[part] = next
	}
}

// ensureTopics checks that the sink's topic (and for exactly-once its
// progress topic) exist, creating what is missing: the topic when
// sink.topic.create allows, the progress topic always (compacted, one
// partition). An error that waiting cannot fix is a pgerr error naming
// the topic.
func ensureTopics(ctx context.Context, cl *kgo.Client, c *sinkConfig) error {
	adm := kadm.NewClient(cl)
	topics := []string{c.topic}
	if c.exactlyOnce {
		topics = append(topics, c.progressTopic)
	}
	for _, t := range topics {
		_, err := topicMeta(ctx, cl, t)
		if err == nil {
			continue
		}
		if !errors.Is(err, kerr.UnknownTopicOrPartition) {
			if errors.Is(err, kerr.TopicAuthorizationFailed) {
				return pgerr.New(pgerr.InsufficientPrivilege, "kafka sink: not allowed to use topic %q: %v", t, err)
			}
			return fmt.Errorf("topic %s: %w", t, err)
		}
		var resp kadm.CreateTopicResponse
		if t == c.topic {
			if !c.createTopic {
				return pgerr.New(pgerr.UndefinedObject, "kafka sink: topic %q does not exist", t).
					WithHint("Create it, or leave sink.topic.create at true to let the sink create it.")
			}
			resp, err = adm.CreateTopic(ctx, c.partitions, c.replication, nil, t)
		} else {
			policy := "compact"
			resp, err = adm.CreateTopic(ctx, 1, c.replication, map[string]*string{"cleanup.policy": &policy}, t)
		}
		if err == nil {
			err = resp.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			if ke := (*kerr.Error)(nil); !errors.As(err, &ke) || ke.Retriable {
				return fmt.Errorf("creating topic %s: %w", t, err) // retried
			}
			return pgerr.New(pgerr.InvalidParameterValue, "kafka sink: cannot create topic %q: %v", t, err)
		}
	}
	return nil
}

// topicMeta asks the brokers for topic's metadata, bypassing the client's
// cache (a topic just created must be seen at once).
func topicMeta(ctx context.Context, cl *kgo.Client, topic string) (kmsg.MetadataResponseTopic, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return kmsg.MetadataResponseTopic{}, err
	}
	for _, t := range resp.Topics {
		if t.Topic != nil && *t.Topic == topic {
			return t, kerr.ErrorForCode(t.ErrorCode)
		}
	}
	return kmsg.MetadataResponseTopic{}, kerr.UnknownTopicOrPartition
}
