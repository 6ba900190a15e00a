package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/streamsql/streamsql/cluster/dist"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/wire"
)

// exitDamaged is the exit status when a table log is damaged (see
// --recover-damaged); other start failures exit with 1.
const exitDamaged = 3

func main() {
	if len(os.Args) > 1 && os.Args[1] == "bench" { // bench.go
		os.Exit(benchMain(os.Args[2:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "kafka-dev" { // kafkadev.go
		os.Exit(kafkaDevMain(os.Args[2:], os.Stdout, os.Stderr))
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
		var d *storage.DamagedError
		if errors.As(err, &d) {
			os.Exit(exitDamaged)
		}
		os.Exit(1)
	}
}

// run serves until a signal, then closes connections and the engine.
func run(cfg config) error {
	logger := log.New(os.Stderr, "", log.LstdFlags)
	if cfg.scrubErr != nil {
		logger.Printf("warning: $STREAMSQL_PASSWORD stays readable in /proc/%d/environ to this OS user (%v); prefer --password-file", os.Getpid(), cfg.scrubErr)
	}
	if cfg.hugePages {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if err := startHugePages(ctx, hugeReserve); err != nil { // hugepages_linux.go
			logger.Printf("warning: %v", err)
		}
	}
	ecfg := engine.Config{DataDir: cfg.dataDir, Logf: logger.Printf, BarrierInterval: cfg.barrierInterval, StreamingParallelism: cfg.streamingParallelism,
		SubscribeBufferBytes: int64(cfg.subscribeBufferBytes), SubscribeMemoryLimit: int64(cfg.subscribeMemoryLimit),
		SubscribeSpillBytes: int64(cfg.subscribeSpillLimit), CheckpointInterval: cfg.checkpointInterval,
		ChangelogRetention: cfg.subscribeRetention, FileSourceDir: cfg.fileSourceDir, FileSinkDir: cfg.fileSinkDir,
		RecoverDamaged: cfg.recoverDamaged, ServerSettings: cfg.serverSettings(),
		MemoryLimit: cfg.memoryLimit, QueryMemoryLimit: cfg.queryMemoryLimit}
	for _, p := range []string{cfg.tlsKey, cfg.passwordFile} {
		if p != "" {
			ecfg.FileDenyPaths = append(ecfg.FileDenyPaths, p)
		}
	}
	ecfg.NoCheckpoints = cfg.checkpointInterval == 0
	ecfg.ViewRetryInterval = cfg.viewRetryInterval
	if cfg.viewRetryInterval == 0 {
		ecfg.ViewRetryInterval = -1 // never
	}
	if cfg.clock == "manual" {
		ecfg.Clock = engine.NewManualClock()
	}
	ecfg.RecoverViewsInBackground = true
	ecfg.RecoveryGate = testRecoveryGate()
	// Listen first: a client connecting while the tables' logs are
	// replayed waits in the listen queue instead of being refused; the
	// views recover in the background once the tables are open.
	l, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer l.Close()
	var runner *dist.Runner
	if cfg.cluster != nil { // cluster.go, cluster_views.go
		xsrv, xaddr, err := listenExchange(l.Addr(), cfg.cluster)
		if err != nil {
			return err
		}
		defer xsrv.Close()
		node, store, err := joinCluster(cfg.cluster, l.Addr(), xaddr, logger.Printf)
		if err != nil {
			return err
		}
		defer node.Close() // after the engine closed: leaves the cluster last
		runner = dist.NewRunner(node, xsrv, exchangeOptions(cfg.cluster.exchangeTimeout), store, logger.Printf)
		runner.UploadTimeout = cfg.cluster.ckptTimeout
		defer runner.Close()
		ecfg.Cluster = &clusterNode{n: node, r: runner, user: cfg.user, password: cfg.password, logf: logger.Printf,
			ckptDir: engine.CheckpointDir(cfg.dataDir), commitTimeout: cfg.cluster.ckptTimeout}
	}
	eng, err := engine.Open(ecfg)
	if err != nil {
		if errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("the data directory %s is not writable (%w); streamsqld keeps its tables, catalog and checkpoints there: make it writable, or give another with --data-dir", cfg.dataDir, err)
		}
		if errors.Is(err, syscall.ENOSPC) {
			return fmt.Errorf("the disk of the data directory %s is full (%w); free some space and start again", cfg.dataDir, err)
		}
		return fmt.Errorf("open %s: %w", cfg.dataDir, err)
	}
	if runner != nil && cfg.cluster.nodeSplits {
		runner.Splits = eng.Dataflow() // before the statement log is followed
	}
	if cfg.user != "" {
		if err := eng.EnsureSuperuser(cfg.user, cfg.password); err != nil {
			eng.Close()
			return fmt.Errorf("initial user %s: %w", cfg.user, err)
		}
	}
	opts, err := cfg.wireOptions(logger.Printf, eng)
	if err != nil {
		eng.Close()
		return err
	}
	host, port, _ := net.SplitHostPort(l.Addr().String())
	user := cfg.user
	if user == "" && cfg.auth == "password" {
		user = "<user>"
	} else if user == "" {
		user = "streamsql"
	}
	tlsNote := ""
	if opts.TLSConfig != nil {
		tlsNote = ", TLS on"
	}
	fmt.Printf("streamsqld listening on %s (data in %s, auth %s%s) — connect: psql -h %s -p %s -U %s streamsql\n",
		l.Addr(), cfg.dataDir, cfg.auth, tlsNote, host, port, user)

	if w := trustWarning(cfg.auth, l.Addr()); w != "" {
		logger.Print(w)
	}
	hs, err := startHTTP(cfg, eng, opts.TLSConfig, logger.Printf)
	if err != nil {
		eng.Close()
		return err
	}
	defer hs.close()
	srv := wire.NewServer(eng, opts)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(l) }()
	fctx, fcancel := context.WithCancel(context.Background())
	if runner != nil {
		ecfg.Cluster.(*clusterNode).setEngine(eng)                                // cluster_tables.go
		go followStatements(fctx, runner, eng, logger.Printf)                     // cluster_views.go
		go superviseViews(fctx, runner, eng, cfg.cluster.leaseTTL, logger.Printf) // cluster_restart.go
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	select {
	case s := <-sig:
		logger.Printf("received %s, shutting down", s)
	case err = <-serveErr:
	}
	signal.Stop(sig)
	fcancel()
	hs.close() // no scrape reads the engine while it closes
	srv.Close()
	if cerr := eng.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if errors.Is(err, wire.ErrServerClosed) {
		err = nil
	}
	return err
}

// testRecoveryGate is the engine's RecoveryGate for end-to-end tests:
// with $STREAMSQL_TEST_RECOVERY_GATE naming a FIFO, the views' recovery
// waits, once they are restored from the checkpoint and before their
// inputs are replayed, until a writer has opened and closed it. Not for
// production use.
func testRecoveryGate() func(closing <-chan struct{}) {
	path := os.Getenv("STREAMSQL_TEST_RECOVERY_GATE")
	if path == "" {
		return nil
	}
	return func(closing <-chan struct{}) {
		opened := make(chan struct{})
		go func() {
			defer close(opened)
			f, err := os.Open(path) // blocks until a writer opens the FIFO
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, f) // until it closes
			f.Close()
		}()
		select {
		case <-opened:
		case <-closing: // the goroutine stays blocked: the process is exiting
		}
	}
}
