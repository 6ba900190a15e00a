package kafka

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/pgerr"
)

// This file parses a kafka sink's options (docs/sinks.md, "kafka", lists them)
// and registers the connector. Design: docs/contributing/sinks-kafka.md.

func init() { sink.Register("kafka", openSink) }

// Defaults of the sink options.
const (
	defaultProgressTopic = "__streamsql_sink_progress"
	defaultMaxEpochBytes = 64 << 20
	defaultTxnTimeout    = 60 * time.Second
	// poolSize is the number of transactional ids (and producers) an
	// exactly-once writer uses: the epoch being written, the epoch waiting
	// for its checkpoint to become durable, and one spare. It is fixed:
	// recovery fences exactly these ids.
	poolSize = 3
	// A producer holds at most this many records (bytes) not yet
	// acknowledged; a writer whose producer is full waits (backpressure)
	// and says so in its Status.
	maxBufRecords = 1 << 18
	maxBufBytes   = 64 << 20
)

// sinkKeys are the sink's own option keys (ParseClient reads the
// connection's). primary_key and force_append_only are read by CREATE
// SINK itself (the key reaches us as Spec.Key).
var sinkKeys = []string{
	"topic", "sink.delivery-guarantee", "sink.progress.topic",
	"sink.transactional-id-prefix", "sink.max-epoch-bytes",
	"sink.topic.create", "sink.topic.partitions", "sink.topic.replication-factor",
	"properties.transaction.timeout.ms", "properties.compression.type",
	"primary_key", "force_append_only",
	// ENCODE AVRO (encode.Parse refuses them with another encoding).
	"schema.registry", "schema.registry.username", "schema.registry.password",
}

// sinkConfig is a kafka sink's parsed options; immutable, it is the
// sink.Sink the registry hands out.
type sinkConfig struct {
	name          string
	client        Client
	topic         string
	exactlyOnce   bool
	progressTopic string
	txnPrefix     string // transactional ids are <txnPrefix>-<writer>-<slot>
	maxEpochBytes int
	txnTimeout    time.Duration
	createTopic   bool
	partitions    int32 // -1: the broker's default
	replication   int16 // -1: the broker's default
	extra         []kgo.Opt
	newEncoder    func() recordEncoder
}

func openSink(spec sink.Spec) (sink.Sink, error) {
	opts := spec.Options
	used := map[string]bool{}
	cl, err := ParseClient(opts, used)
	if err != nil {
		return nil, err
	}
	for _, k := range sinkKeys {
		if _, ok := opts[k]; ok {
			used[k] = true
		}
	}
	var unknown []string
	for k := range opts {
		if !used[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, pgerr.New(pgerr.InvalidParameterValue, "unknown kafka sink option %q", unknown[0]).
			WithHint("Options: %s.", strings.Join(append(append([]string(nil), ClientKeys...), sinkKeys...), ", "))
	}
	c := &sinkConfig{
		name: spec.Name, client: cl, topic: strings.TrimSpace(opts["topic"]),
		exactlyOnce: true, progressTopic: defaultProgressTopic,
		txnPrefix:     fmt.Sprintf("streamsql-%s-%d", spec.Name, spec.ID),
		maxEpochBytes: defaultMaxEpochBytes, txnTimeout: defaultTxnTimeout,
		createTopic: true, partitions: -1, replication: -1,
	}
	if c.topic == "" {
		return nil, pgerr.New(pgerr.InvalidParameterValue, "the kafka sink needs topic")
	}
	if v, ok := opts["sink.delivery-guarantee"]; ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "exactly-once", "exactly_once":
		case "at-least-once", "at_least_once":
			c.exactlyOnce = false
		default:
			return nil, pgerr.New(pgerr.InvalidParameterValue, "sink.delivery-guarantee must be 'exactly-once' or 'at-least-once', not %q", v)
		}
	}
	if v, ok := opts["sink.progress.topic"]; ok {
		if c.progressTopic = strings.TrimSpace(v); c.progressTopic == "" {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "sink.progress.topic is empty")
		}
	}
	if v, ok := opts["sink.transactional-id-prefix"]; ok {
		if c.txnPrefix = strings.TrimSpace(v); c.txnPrefix == "" {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "sink.transactional-id-prefix is empty")
		}
	}
	if c.topic == c.progressTopic {
		return nil, pgerr.New(pgerr.InvalidParameterValue, "topic and sink.progress.topic must differ (both are %q)", c.topic)
	}
	if c.maxEpochBytes, err = intOption(opts, "sink.max-epoch-bytes", c.maxEpochBytes, 1024, 1<<40); err != nil {
		return nil, err
	}
	ms, err := intOption(opts, "properties.transaction.timeout.ms", int(c.txnTimeout/time.Millisecond), 1000, 3600_000)
	if err != nil {
		return nil, err
	}
	c.txnTimeout = time.Duration(ms) * time.Millisecond
	if v, ok := opts["sink.topic.create"]; ok {
		if c.createTopic, err = strconv.ParseBool(strings.TrimSpace(v)); err != nil {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "sink.topic.create must be true or false, not %q", v)
		}
	}
	p, err := intOption(opts, "sink.topic.partitions", -1, 1, 1<<20)
	if err != nil {
		return nil, err
	}
	c.partitions = int32(p)
	r, err := intOption(opts, "sink.topic.replication-factor", -1, 1, 32)
	if err != nil {
		return nil, err
	}
	c.replication = int16(r)
	if v, ok := opts["properties.compression.type"]; ok {
		var codec kgo.CompressionCodec
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "none":
			codec = kgo.NoCompression()
		case "gzip":
			codec = kgo.GzipCompression()
		case "snappy":
			codec = kgo.SnappyCompression()
		case "lz4":
			codec = kgo.Lz4Compression()
		case "zstd":
			codec = kgo.ZstdCompression()
		default:
			return nil, pgerr.New(pgerr.InvalidParameterValue, "unknown properties.compression.type %q", v).
				WithHint("Use none, gzip, snappy, lz4 or zstd.")
		}
		c.extra = append(c.extra, kgo.ProducerBatchCompression(codec))
	}
	if c.newEncoder, err = newRecordEncoder(spec); err != nil {
		return nil, err
	}
	return c, nil
}

// intOption reads an integer option in [lo, hi], def when absent.
func intOption(opts map[string]string, key string, def, lo, hi int) (int, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < lo || n > hi {
		return 0, pgerr.New(pgerr.InvalidParameterValue, "%s must be an integer between %d and %d, not %q", key, lo, hi, v)
	}
	return n, nil
}

// NewWriter opens writer number writer for a fresh start.
func (c *sinkConfig) NewWriter(ctx context.Context, writer int) (sink.Writer, error) {
	if !c.exactlyOnce {
		return newALOWriter(ctx, c, writer)
	}
	return openTxnWriter(ctx, c, writer, 0, nil, false)
}

// Recover opens writer number writer after a restart from checkpoint epoch.
func (c *sinkConfig) Recover(ctx context.Context, writer int, epoch uint64, pending []byte) (sink.Writer, error) {
	if !c.exactlyOnce {
		// At-least-once flushed everything before the checkpoint: the
		// replay after it may repeat rows, which that guarantee allows.
		return newALOWriter(ctx, c, writer)
	}
	return openTxnWriter(ctx, c, writer, epoch, pending, true)
}

// producerOpts are the options every producer of the sink uses.
func (c *sinkConfig) producerOpts(h *errHook) []kgo.Opt {
	o := c.client.Opts()
	o = append(o, kgo.DefaultProduceTopic(c.topic), kgo.WithHooks(h),
		kgo.MaxBufferedRecords(maxBufRecords), kgo.MaxBufferedBytes(maxBufBytes), kgo.ProducerLinger(0),
		// Retry within a second of Kafka coming back: kgo's default
		// backoff grows to 2.5 s, and its metadata refresh after an
		// error waits for metadata at least 5 s old.
		kgo.RetryBackoffFn(func(tries int) time.Duration {
			return min(50*time.Millisecond<<min(tries, 5), time.Second)
		}),
		kgo.MetadataMinAge(500*time.Millisecond))
	return append(o, c.extra...)
}
