package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/connector/internal/decode"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// StartupMode is where a reader without a position starts in each
// partition that exists when it starts (scan.startup.mode).
type StartupMode uint8

// Startup modes.
const (
	Earliest  StartupMode = iota // the oldest offset kept
	Latest                       // the end: only messages produced later
	Timestamp                    // the first message at or after a time
)

// Format is how a message's value is decoded.
type Format uint8

// Formats.
const (
	JSON Format = iota // one JSON object per message
	CSV                // one CSV record per message
	Avro               // Confluent-framed Avro with a schema registry (avro.go)
)

// Meta is a Kafka metadata column added by INCLUDE.
type Meta uint8

// Metadata columns.
const (
	MetaPartition Meta = iota + 1 // integer
	MetaOffset                    // bigint
	MetaTimestamp                 // timestamptz: the message's timestamp
	MetaKey                       // bytea: the message's key (NULL if none)
)

var metas = []struct {
	what string
	def  string // default column name
	t    types.T
}{
	MetaPartition: {"partition", "_kafka_partition", types.TInt4},
	MetaOffset:    {"offset", "_kafka_offset", types.TInt8},
	MetaTimestamp: {"timestamp", "_kafka_timestamp", types.TTimestampTZ},
	MetaKey:       {"key", "_kafka_key", types.TBytea},
}

// IncludeColumn is the column "INCLUDE what [AS name]" adds (name "" for
// the default name), and the WITH option that records it
// ("include.<what>" = the column's name), which Open reads. An unknown
// what is a 22023 error.
func IncludeColumn(what, name string) (col types.Column, optKey string, err error) {
	for _, m := range metas[1:] {
		if m.what == what {
			if name == "" {
				name = m.def
			}
			return types.Column{Name: name, Type: m.t}, "include." + what, nil
		}
	}
	return types.Column{}, "", pgerr.New(pgerr.InvalidParameterValue, "a kafka source cannot INCLUDE %s", what).
		WithHint("INCLUDE partition, offset, timestamp or key.")
}

// TombstoneColumn is the boolean column a FORMAT UPSERT ENCODE JSON
// source adds after all others (Columns): false for a message with a
// value (its columns decoded from the value, as FORMAT JSON), true for a
// tombstone (a message without a value), whose declared columns are
// decoded from the message's key when it is a JSON object (else NULL) and
// whose INCLUDE columns are set as usual. The table reading it upserts or
// deletes by its primary key.
const TombstoneColumn = "_kafka_tombstone"

// DefaultDiscoveryInterval is scan.partition.discovery.interval when not
// given: how often a reader looks for partitions added to its topic.
const DefaultDiscoveryInterval = 30 * time.Second

// Source is a validated Kafka source (connector.Source): immutable, safe
// for concurrent use. Its readers are Resumable at per-partition offsets.
type Source struct {
	client    Client
	topic     string
	mode      StartupMode
	startMs   int64 // Timestamp mode: milliseconds since 1970
	discovery time.Duration
	group     string // group to commit offsets to for monitoring ("": none)
	wait      bool   // scan.topic.wait: a missing topic is waited for
	format    Format
	upsert    bool        // FORMAT UPSERT ENCODE JSON: tombstones are rows too (TombstoneColumn)
	debezium  bool        // FORMAT DEBEZIUM ENCODE JSON (also upsert): debezium.go
	avro      *avroSource // ENCODE AVRO: the schema registry (avro.go)
	cols      []types.Column
	dec       *decode.Schema
	meta      []metaCol // INCLUDE columns
}

type metaCol struct {
	col  int
	kind Meta
}

// Topic is the topic read.
func (s *Source) Topic() string { return s.topic }

// Columns are the source's columns: the declared ones, then the INCLUDE ones.
func (s *Source) Columns() []types.Column { return s.cols }

// Keys are the option keys Open reads besides ClientKeys and include.*.
var Keys = []string{"topic", "scan.startup.mode", "scan.startup.timestamp.millis",
	"scan.partition.discovery.interval", "group.id.prefix", "scan.topic.wait"}

// Open validates a Kafka source: cols are the relation's columns (the
// INCLUDE columns among them, named by the include.* options), opts the
// WITH options except connector (keys lower case), format the FORMAT clause
// ("JSON", "CSV", "PLAIN ENCODE JSON", "PLAIN ENCODE CSV", "PLAIN ENCODE
// AVRO", or UPSERT / DEBEZIUM ENCODE JSON, UPSERT ENCODE AVRO). Bad or
// unknown options are 22023 errors naming the option. It does not connect:
// see Check.
func Open(cols []types.Column, opts map[string]string, format string) (*Source, error) {
	used := map[string]bool{}
	cl, err := ParseClient(opts, used)
	if err != nil {
		return nil, err
	}
	s := &Source{client: cl, discovery: DefaultDiscoveryInterval, cols: cols}
	get := func(k string) (string, bool) {
		v, ok := opts[k]
		if ok {
			used[k] = true
		}
		return strings.TrimSpace(v), ok
	}
	if s.topic, _ = get("topic"); s.topic == "" {
		return nil, pgerr.New(pgerr.InvalidParameterValue, `a kafka source needs the option "topic"`)
	}
	mode, hasMode := get("scan.startup.mode")
	switch strings.ToLower(mode) {
	case "", "earliest", "earliest-offset":
	case "latest", "latest-offset":
		s.mode = Latest
	case "timestamp":
		s.mode = Timestamp
	default:
		return nil, bad("scan.startup.mode", mode, "must be earliest, latest or timestamp")
	}
	if ms, ok := get("scan.startup.timestamp.millis"); ok {
		if hasMode && s.mode != Timestamp {
			return nil, bad("scan.startup.timestamp.millis", ms, "needs scan.startup.mode timestamp")
		}
		if s.startMs, err = strconv.ParseInt(ms, 10, 64); err != nil || s.startMs < 0 {
			return nil, bad("scan.startup.timestamp.millis", ms, "must be milliseconds since 1970")
		}
		s.mode = Timestamp
	} else if s.mode == Timestamp {
		return nil, pgerr.New(pgerr.InvalidParameterValue, "scan.startup.mode timestamp needs scan.startup.timestamp.millis")
	}
	if v, ok := get("scan.partition.discovery.interval"); ok {
		if s.discovery, err = parseDuration(v); err != nil || s.discovery < 0 {
			return nil, bad("scan.partition.discovery.interval", v, "must be a duration ('30s', or milliseconds); 0 turns discovery off")
		}
	}
	if v, ok := get("group.id.prefix"); ok {
		if v == "" {
			return nil, bad("group.id.prefix", v, "must not be empty")
		}
		s.group = v + "-" + s.topic
	}
	if v, ok := get("scan.topic.wait"); ok {
		if s.wait, err = strconv.ParseBool(v); err != nil {
			return nil, bad("scan.topic.wait", v, "must be true or false")
		}
	}
	switch strings.ToUpper(strings.Join(strings.Fields(format), " ")) {
	case "", "JSON", "PLAIN ENCODE JSON":
	case "CSV", "PLAIN ENCODE CSV":
		s.format = CSV
	case "UPSERT ENCODE JSON":
		// Only a table with a primary key reads it (the engine refuses it
		// on a source): see TombstoneColumn.
		s.upsert = true
	case "DEBEZIUM ENCODE JSON":
		// As UPSERT, each event read by debeziumMessage.
		s.upsert, s.debezium = true, true
	case "PLAIN ENCODE AVRO", "AVRO":
		s.format = Avro
	case "UPSERT ENCODE AVRO":
		s.format, s.upsert = Avro, true
	case "DEBEZIUM ENCODE AVRO":
		s.format, s.upsert, s.debezium = Avro, true, true
	default:
		return nil, pgerr.New(pgerr.InvalidParameterValue, "a kafka source cannot read FORMAT %s", format).
			WithHint("Use FORMAT JSON (= FORMAT PLAIN ENCODE JSON), FORMAT PLAIN ENCODE CSV, FORMAT PLAIN ENCODE AVRO (schema.registry = '...'), or (tables with a primary key) FORMAT UPSERT ENCODE JSON | AVRO or FORMAT DEBEZIUM ENCODE JSON.")
	}
	if s.format == Avro {
		if s.avro, err = openAvro(opts, used); err != nil {
			return nil, err
		}
	}
	isMeta := make([]bool, len(cols))
	for m := MetaPartition; m <= MetaKey; m++ {
		key := "include." + metas[m].what
		name, ok := opts[key]
		if !ok {
			continue
		}
		used[key] = true
		i := columnIndex(cols, name)
		if i < 0 || !cols[i].Type.Equal(metas[m].t) || isMeta[i] {
			return nil, pgerr.New(pgerr.InvalidTableDefinition, "INCLUDE %s needs a column %q of type %s", metas[m].what, name, metas[m].t)
		}
		isMeta[i] = true
		s.meta = append(s.meta, metaCol{col: i, kind: m})
	}
	// The metadata columns come last (the engine appends them), so the
	// decoded ones are a prefix.
	decoded := len(cols) - len(s.meta)
	for i := decoded; i < len(cols); i++ {
		if !isMeta[i] {
			return nil, pgerr.Internal("kafka: INCLUDE column %q is not among the last columns", cols[i].Name)
		}
	}
	if decoded == 0 {
		return nil, pgerr.New(pgerr.InvalidTableDefinition, "a kafka source needs declared columns").
			WithHint("For example: CREATE SOURCE s (host text, cpu double precision, ts timestamptz) WITH (connector = 'kafka', ...) FORMAT JSON.")
	}
	if s.upsert {
		s.cols = append(slices.Clone(cols), types.Column{Name: TombstoneColumn, Type: types.TBool})
	}
	s.dec = decode.NewSchema(s.cols, decoded)
	keys := make([]string, 0, len(opts))
	for k := range opts {
		if !used[k] {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		sort.Strings(keys)
		return nil, pgerr.New(pgerr.InvalidParameterValue, "unrecognized kafka option %q", keys[0]).
			WithHint("Options are %s and %s; ENCODE AVRO adds schema.registry, schema.registry.username and schema.registry.password.", strings.Join(Keys, ", "), strings.Join(ClientKeys, ", "))
	}
	return s, nil
}

func columnIndex(cols []types.Column, name string) int {
	for i, c := range cols {
		if c.Name == name {
			return i
		}
	}
	return -1
}

func bad(k, v, why string) error {
	return pgerr.New(pgerr.InvalidParameterValue, "invalid value for kafka option %q: %q", k, v).WithDetail("%s", why)
}

// parseDuration reads a Go duration ("30s") or a number of milliseconds.
func parseDuration(v string) (time.Duration, error) {
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Duration(ms) * time.Millisecond, nil
	}
	return time.ParseDuration(v)
}

// Check connects to the brokers and checks that the topic exists (unless
// scan.topic.wait is set): CREATE SOURCE calls it, so a typo fails there
// rather than in a reader. A missing topic is a 42704 error; brokers that
// cannot be reached within ctx's deadline are an 08000 error.
func (s *Source) Check(ctx context.Context) error {
	if err := s.checkRegistry(ctx); err != nil {
		return err
	}
	if s.wait {
		return nil
	}
	cl, err := kgo.NewClient(s.client.Opts()...)
	if err != nil {
		return pgerr.Wrap(err, pgerr.ConnectionException, "kafka: %v", err)
	}
	defer cl.Close()
	_, err = partitions(ctx, cl, s.topic)
	return err
}

// errNoTopic is the error of a topic that does not exist.
func errNoTopic(topic string) error {
	return pgerr.New(pgerr.UndefinedObject, "kafka topic %q does not exist", topic).
		WithHint("Create the topic first, or add scan.topic.wait = 'true' to wait for it.")
}

// partitions lists the topic's partitions, sorted: a 42704 error when the
// topic does not exist, an 08000 one when the brokers cannot be asked.
func partitions(ctx context.Context, cl *kgo.Client, topic string) ([]int32, error) {
	ps, _, err := partitionsID(ctx, cl, topic)
	return ps, err
}

// partitionsID is partitions with the topic's id (zero if the brokers
// have none). It asks the brokers (franz-go's cached metadata could still
// show a topic deleted and created again under its old id).
func partitionsID(ctx context.Context, cl *kgo.Client, topic string) ([]int32, kadm.TopicID, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, kadm.TopicID{}, pgerr.Wrap(err, pgerr.ConnectionException, "kafka: could not reach the brokers: %v", err)
	}
	if len(resp.Topics) != 1 {
		return nil, kadm.TopicID{}, errNoTopic(topic)
	}
	td := &resp.Topics[0]
	err = kerr.ErrorForCode(td.ErrorCode)
	if errors.Is(err, kerr.UnknownTopicOrPartition) {
		return nil, kadm.TopicID{}, errNoTopic(topic)
	}
	if err != nil {
		return nil, kadm.TopicID{}, pgerr.Wrap(err, pgerr.ConnectionException, "kafka topic %q: %v", topic, err)
	}
	ps := make([]int32, len(td.Partitions))
	for i, p := range td.Partitions {
		ps[i] = p.Partition
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps, kadm.TopicID(td.TopicID), nil
}

// describe names a record for error messages.
func describe(topic string, p int32, off int64) string {
	return fmt.Sprintf("kafka topic %q, partition %d, offset %d", topic, p, off)
}
