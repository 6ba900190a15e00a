// Package kafka is the Kafka connector: a source (partitions assigned by
// the engine, offsets in checkpoints, read_committed) and a sink
// (exactly-once through one transaction per checkpoint epoch), both over
// github.com/twmb/franz-go. Options shared by both (brokers, security) are
// parsed by ParseClient; users' documentation is docs/connectors.md and
// docs/sinks.md.
package kafka
