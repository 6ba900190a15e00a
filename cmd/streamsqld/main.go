package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/wire"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "bench" { // bench.go
		os.Exit(benchMain(os.Args[2:], os.Stdout, os.Stderr))
	}
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "streamsqld:", err)
		os.Exit(2)
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "streamsqld:", err)
		os.Exit(1)
	}
}

// run serves until a signal, then closes connections and the engine.
func run(cfg config) error {
	logger := log.New(os.Stderr, "", log.LstdFlags)
	opts, err := cfg.wireOptions(logger.Printf)
	if err != nil {
		return err
	}
	ecfg := engine.Config{DataDir: cfg.dataDir, Logf: logger.Printf, BarrierInterval: cfg.barrierInterval,
		SubscribeBufferRows: cfg.subscribeBufferRows}
	if cfg.clock == "manual" {
		ecfg.Clock = engine.NewManualClock()
	}
	eng, err := engine.Open(ecfg)
	if err != nil {
		return fmt.Errorf("open %s: %w", cfg.dataDir, err)
	}
	l, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		eng.Close()
		return fmt.Errorf("listen: %w", err)
	}
	host, port, _ := net.SplitHostPort(l.Addr().String())
	fmt.Printf("streamsqld listening on %s (data in %s) — connect: psql -h %s -p %s -U streamsql streamsql\n",
		l.Addr(), cfg.dataDir, host, port)

	srv := wire.NewServer(eng, opts)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(l) }()

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	select {
	case s := <-sig:
		logger.Printf("received %s, shutting down", s)
	case err = <-serveErr:
	}
	signal.Stop(sig)
	srv.Close()
	if cerr := eng.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if errors.Is(err, wire.ErrServerClosed) {
		err = nil
	}
	return err
}
