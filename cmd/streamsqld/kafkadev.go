package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

// kafkaDevUsage is the kafka-dev subcommand's synopsis.
const kafkaDevUsage = `usage: streamsqld kafka-dev [--listen 127.0.0.1:9092] [--partitions 4] [--topic name[:partitions]]...

Runs a DEVELOPMENT Kafka broker in this process (franz-go's kfake): the
Kafka protocol with topics, transactions (read_committed), consumer groups
and compaction, kept in memory only. Everything is lost when it stops; it
is for trying streamsql's Kafka source and sinks and for tests, never for
data you want to keep. It advertises the --listen address to clients, so
give an address they can reach. When it listens it prints
"kafka-dev: listening on host:port" (the port chosen if you gave 0).
It stops on SIGINT or SIGTERM.

flags:
`

// kafkaDevMain runs `streamsqld kafka-dev ...` until a signal and returns
// the exit status.
func kafkaDevMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("streamsqld kafka-dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:9092", "host:port to listen on and advertise (port 0: any free port)")
	parts := fs.Int("partitions", 1, "partitions of a topic created without a count (by a client's CreateTopics or auto-creation)")
	var topics topicList
	fs.Var(&topics, "topic", "create this topic at start, as name or name:partitions (repeatable)")
	fs.Usage = func() {
		fmt.Fprint(stderr, kafkaDevUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "streamsqld kafka-dev: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *parts < 1 {
		fmt.Fprintln(stderr, "streamsqld kafka-dev: --partitions must be at least 1")
		return 2
	}
	cl, err := startKafkaDev(*listen, *parts, topics)
	if err != nil {
		fmt.Fprintln(stderr, "streamsqld kafka-dev:", err)
		return 1
	}
	defer cl.Close()
	fmt.Fprintf(stdout, "kafka-dev: listening on %s (development broker: in memory, nothing is kept when it stops)\n", cl.ListenAddrs()[0])
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	return 0
}

// startKafkaDev starts a one-broker kfake cluster listening on listen.
func startKafkaDev(listen string, parts int, topics topicList) (*kfake.Cluster, error) {
	if _, _, err := net.SplitHostPort(listen); err != nil {
		return nil, fmt.Errorf("--listen %q: %w", listen, err)
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.DefaultNumPartitions(parts),
		kfake.AllowAutoTopicCreation(),
		// kfake asks for 127.0.0.1:<port>; listen where we were told.
		kfake.ListenFn(func(network, _ string) (net.Listener, error) { return net.Listen(network, listen) }),
	}
	for _, t := range topics {
		opts = append(opts, kfake.SeedTopics(t.parts, t.name))
	}
	cl, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", listen, err)
	}
	return cl, nil
}

// topicList is the repeatable --topic name[:partitions] flag.
type topicList []struct {
	name  string
	parts int32
}

func (l *topicList) String() string {
	var s []string
	for _, t := range *l {
		s = append(s, fmt.Sprintf("%s:%d", t.name, t.parts))
	}
	return strings.Join(s, ",")
}

func (l *topicList) Set(v string) error {
	name, n, hasN := strings.Cut(v, ":")
	p := int64(-1) // the broker's default
	if hasN {
		var err error
		if p, err = strconv.ParseInt(n, 10, 32); err != nil || p < 1 {
			return fmt.Errorf("partitions of topic %q must be a positive integer, not %q", name, n)
		}
	}
	if name == "" {
		return fmt.Errorf("empty topic name")
	}
	*l = append(*l, struct {
		name  string
		parts int32
	}{name, int32(p)})
	return nil
}
