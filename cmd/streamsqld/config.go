package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/streamsql/streamsql/wire"
)

// config is streamsqld's command line.
type config struct {
	listen  string
	dataDir string
	tlsCert string // PEM certificate chain; with tlsKey enables TLS
	tlsKey  string
	// password, when set, is required from every user (SCRAM-SHA-256).
	password string
	// barrierInterval is the streaming epoch length.
	barrierInterval time.Duration
	// subscribeBufferRows bounds a subscriber's unread rows.
	subscribeBufferRows int
	// clock is "wall" or "manual" (processing time that only ADVANCE CLOCK moves).
	clock string
}

// parseFlags reads the command line; errors and -h output go to stderr.
// The password may also come from $STREAMSQLD_PASSWORD (kept out of ps).
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("streamsqld", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.listen, "listen", "127.0.0.1:5433", "address to accept PostgreSQL connections on")
	fs.StringVar(&cfg.dataDir, "data-dir", "./streamsql-data", "directory holding the catalog and table data")
	fs.StringVar(&cfg.tlsCert, "tls-cert", "", "PEM certificate file; with --tls-key, clients may use TLS")
	fs.StringVar(&cfg.tlsKey, "tls-key", "", "PEM private key file for --tls-cert")
	fs.StringVar(&cfg.password, "password", os.Getenv("STREAMSQLD_PASSWORD"),
		"password every user must give (SCRAM-SHA-256); empty accepts everyone (default $STREAMSQLD_PASSWORD)")
	fs.DurationVar(&cfg.barrierInterval, "barrier-interval", 100*time.Millisecond,
		"how often streaming epochs end: views and subscribers see changes at most this late")
	fs.IntVar(&cfg.subscribeBufferRows, "subscribe-buffer-rows", 1_000_000,
		"rows a SUBSCRIBE client may leave unread before its subscription ends with an error")
	fs.StringVar(&cfg.clock, "clock", "wall",
		"processing-time clock of the streaming runtime: wall, or manual (starts at 2024-01-01 00:00:00 UTC and moves only by ADVANCE CLOCK; for tests)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if cfg.barrierInterval <= 0 {
		return cfg, fmt.Errorf("--barrier-interval must be positive")
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
	return cfg, nil
}

// wireOptions turns the configuration into the server's options.
func (cfg config) wireOptions(logf func(string, ...any)) (wire.Options, error) {
	opts := wire.Options{Logf: logf}
	if cfg.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.tlsCert, cfg.tlsKey)
		if err != nil {
			return opts, fmt.Errorf("load TLS certificate: %w", err)
		}
		opts.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if pw := cfg.password; pw != "" {
		opts.Passwords = func(string) (string, bool) { return pw, true }
	}
	return opts, nil
}
