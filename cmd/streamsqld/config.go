package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/wire"
)

// config is streamsqld's command line.
type config struct {
	listen  string
	dataDir string
	// auth is "trust" (any user name connects, no password) or "password"
	// (stored roles prove their password with SCRAM-SHA-256 or MD5).
	auth string
	// user and password name the initial superuser, created (or given the
	// password) at start; from $STREAMSQL_USER / $STREAMSQL_PASSWORD too.
	user     string
	password string
	tlsCert  string // PEM certificate chain; with tlsKey enables TLS
	tlsKey   string
	// tlsSelfSigned generates (once) a self-signed certificate in the data
	// directory and serves TLS with it.
	tlsSelfSigned bool
	// barrierInterval is the streaming epoch length.
	barrierInterval time.Duration
	// checkpointInterval is the time between checkpoints (0: none).
	checkpointInterval time.Duration
	// subscribeBufferRows bounds a subscriber's unread rows.
	subscribeBufferRows int
	// subscribeRetention is how long views keep their changes for
	// SUBSCRIBE ... WITH (since = ...).
	subscribeRetention time.Duration
	// clock is "wall" or "manual" (processing time that only ADVANCE CLOCK moves).
	clock string
	// memoryLimit and queryMemoryLimit bound batch queries' memory, in
	// bytes (engine.Config.MemoryLimit, QueryMemoryLimit: 0 default, <0 none).
	memoryLimit, queryMemoryLimit int64
}

// parseFlags reads the command line; errors and -h output go to stderr.
// The initial user and password may also come from the environment
// ($STREAMSQL_USER, $STREAMSQL_PASSWORD: kept out of ps).
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("streamsqld", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.listen, "listen", "127.0.0.1:5433", "address to accept PostgreSQL connections on")
	fs.StringVar(&cfg.dataDir, "data-dir", "./streamsql-data", "directory holding the catalog and table data")
	fs.StringVar(&cfg.auth, "auth", "",
		"client authentication: trust (any user, no password; the quick-start default) or password (SCRAM-SHA-256 or MD5 against stored roles; the default when a password is given)")
	fs.StringVar(&cfg.user, "user", os.Getenv("STREAMSQL_USER"),
		"initial superuser, created at start if missing (default $STREAMSQL_USER, or streamsql when a password is given)")
	fs.StringVar(&cfg.password, "password", os.Getenv("STREAMSQL_PASSWORD"),
		"password of the initial superuser, set at every start (default $STREAMSQL_PASSWORD)")
	fs.StringVar(&cfg.tlsCert, "tls-cert", "", "PEM certificate file; with --tls-key, clients may use TLS")
	fs.StringVar(&cfg.tlsKey, "tls-key", "", "PEM private key file for --tls-cert")
	fs.BoolVar(&cfg.tlsSelfSigned, "tls-self-signed", false,
		"serve TLS with a self-signed certificate generated once into the data directory (server.crt, server.key; give server.crt to clients as their root certificate)")
	fs.DurationVar(&cfg.barrierInterval, "barrier-interval", 100*time.Millisecond,
		"how often streaming epochs end: views and subscribers see changes at most this late")
	fs.DurationVar(&cfg.checkpointInterval, "checkpoint-interval", time.Second,
		"how often the views' state is checkpointed into the data directory (0: never; a restart then rebuilds views from their inputs)")
	fs.IntVar(&cfg.subscribeBufferRows, "subscribe-buffer-rows", 1_000_000,
		"rows a SUBSCRIBE client may leave unread in memory: past that a subscriber of a materialized view reads on from the view's changelog on disk, any other subscription ends with an error")
	fs.DurationVar(&cfg.subscribeRetention, "subscribe-retention", time.Hour,
		"how long a materialized view keeps the changes it sent to subscribers, so that a client can resume with SUBSCRIBE ... WITH (since = ...) (kept on disk while a client subscribes, and this long after)")
	fs.StringVar(&cfg.clock, "clock", "wall",
		"processing-time clock of the streaming runtime: wall, or manual (starts at 2024-01-01 00:00:00 UTC and moves only by ADVANCE CLOCK; for tests)")
	memLimit := fs.String("memory-limit", "auto",
		"memory all running queries together may hold (sort, hash aggregation and hash join state, window input, recursive CTEs, values being built; sorts past work_mem spill to <data-dir>/tmp instead), e.g. 16GB; auto is 75% of the machine's or cgroup's memory, unlimited turns the limit off; a statement that would pass it fails with SQLSTATE 53200 and the server goes on")
	queryLimit := fs.String("query-memory-limit", "1GB",
		"memory one statement may hold, e.g. 512MB (unlimited: only --memory-limit); SET statement_mem_limit can lower it for a session")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	var err error
	if cfg.memoryLimit, err = parseSize("--memory-limit", *memLimit); err != nil {
		return cfg, err
	}
	if cfg.queryMemoryLimit, err = parseSize("--query-memory-limit", *queryLimit); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if cfg.barrierInterval <= 0 {
		return cfg, fmt.Errorf("--barrier-interval must be positive")
	}
	if cfg.checkpointInterval < 0 {
		return cfg, fmt.Errorf("--checkpoint-interval must not be negative")
	}
	if cfg.subscribeRetention <= 0 {
		return cfg, fmt.Errorf("--subscribe-retention must be positive")
	}
	if cfg.subscribeBufferRows <= 0 {
		return cfg, fmt.Errorf("--subscribe-buffer-rows must be positive")
	}
	if cfg.clock != "wall" && cfg.clock != "manual" {
		return cfg, fmt.Errorf("--clock must be wall or manual, not %q", cfg.clock)
	}
	if (cfg.tlsCert == "") != (cfg.tlsKey == "") {
		return cfg, fmt.Errorf("--tls-cert and --tls-key go together")
	}
	if cfg.tlsCert != "" && cfg.tlsSelfSigned {
		return cfg, fmt.Errorf("--tls-self-signed and --tls-cert exclude each other")
	}
	if cfg.password != "" && cfg.user == "" {
		cfg.user = "streamsql"
	}
	switch cfg.auth {
	case "":
		cfg.auth = "trust"
		if cfg.password != "" {
			cfg.auth = "password"
		}
	case "trust", "password":
	default:
		return cfg, fmt.Errorf("--auth must be trust or password, not %q", cfg.auth)
	}
	return cfg, nil
}

// passwordSource looks up stored passwords (*engine.Engine).
type passwordSource interface {
	LoginPassword(user string) (stored string, ok bool)
	PasswordRoles() int
}

// wireOptions turns the configuration into the server's options; roles
// answers password lookups under --auth password.
func (cfg config) wireOptions(logf func(string, ...any), roles passwordSource) (wire.Options, error) {
	opts := wire.Options{Logf: logf}
	certFile, keyFile := cfg.tlsCert, cfg.tlsKey
	if cfg.tlsSelfSigned {
		var err error
		if certFile, keyFile, err = selfSignedCert(cfg.dataDir, cfg.listen); err != nil {
			return opts, err
		}
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return opts, fmt.Errorf("load TLS certificate: %w", err)
		}
		opts.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if cfg.auth == "password" {
		if roles.PasswordRoles() == 0 {
			return opts, fmt.Errorf("--auth password: no role has a password; give --user and --password (or $STREAMSQL_USER and $STREAMSQL_PASSWORD), or create users with CREATE USER ... PASSWORD under --auth trust first")
		}
		opts.Passwords = roles.LoginPassword
	}
	return opts, nil
}

// parseSize reads a memory size: a number of bytes, or a number with a unit
// (kB, MB, GB, TB or KiB, MiB, GiB, TiB; powers of 1024 as in PostgreSQL);
// "auto" is 0 (the engine's default) and "unlimited" is -1.
func parseSize(flagName, v string) (int64, error) {
	s := strings.TrimSpace(v)
	switch strings.ToLower(s) {
	case "auto":
		return 0, nil
	case "unlimited":
		return -1, nil
	}
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	num, err := strconv.ParseFloat(s[:i], 64)
	mult := float64(-1)
	switch strings.ToLower(strings.TrimSpace(s[i:])) {
	case "", "b":
		mult = 1
	case "kb", "kib", "k":
		mult = 1 << 10
	case "mb", "mib", "m":
		mult = 1 << 20
	case "gb", "gib", "g":
		mult = 1 << 30
	case "tb", "tib", "t":
		mult = 1 << 40
	}
	if err != nil || mult < 0 || num*mult < 1<<20 || num*mult > 1<<60 {
		return 0, fmt.Errorf("%s must be a size of at least 1MB such as 512MB or 4GB, auto or unlimited, not %q", flagName, v)
	}
	return int64(num * mult), nil
}
