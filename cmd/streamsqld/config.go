package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/planner"
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
	// passwordFile holds the password instead (read once at start).
	passwordFile string
	// scrubErr is why $STREAMSQL_PASSWORD could not be blanked out of
	// /proc/self/environ (nil: it was, or was not set).
	scrubErr error
	// fileSourceDir confines file sources to one directory ("" any).
	fileSourceDir string
	// fileSinkDir confines file sinks to one directory ("" any).
	fileSinkDir string
	tlsCert     string // PEM certificate chain; with tlsKey enables TLS
	tlsKey      string
	// tlsSelfSigned generates (once) a self-signed certificate in the data
	// directory and serves TLS with it.
	tlsSelfSigned bool
	// barrierInterval is the streaming epoch length.
	barrierInterval time.Duration
	// streamingParallelism is streaming_parallelism's default (0: GOMAXPROCS).
	streamingParallelism int
	// checkpointInterval is the time between checkpoints (0: none).
	checkpointInterval time.Duration
	// viewRetryInterval is how often failed views whose sources open
	// again are restarted (0: never by themselves).
	viewRetryInterval time.Duration
	// subscribeBufferBytes bounds one subscriber's unread changes in
	// memory, subscribeMemoryLimit all subscribers' together,
	// subscribeSpillLimit one subscriber's spill file.
	subscribeBufferBytes byteSize
	subscribeMemoryLimit byteSize
	subscribeSpillLimit  byteSize
	// subscribeRetention is how long views keep their changes for
	// SUBSCRIBE ... WITH (since = ...).
	subscribeRetention time.Duration
	// clock is "wall" or "manual" (processing time that only ADVANCE CLOCK moves).
	clock string
	// memoryLimit and queryMemoryLimit bound batch queries' memory, in
	// bytes (engine.Config.MemoryLimit, QueryMemoryLimit: 0 default, <0 none).
	memoryLimit, queryMemoryLimit int64
	// hugePages advises the Go heap as transparent huge pages
	// (hugepages_linux.go).
	hugePages bool
	// recoverDamaged starts despite damaged table logs (moving the
	// damaged parts aside into <data-dir>/damaged).
	recoverDamaged bool
	// maxConnections, superuserReserved and authTimeout are PostgreSQL's
	// max_connections, superuser_reserved_connections and
	// authentication_timeout; requireTLS refuses plaintext connections.
	maxConnections    int
	superuserReserved int
	authTimeout       time.Duration
	requireTLS        bool
	// hbaFile holds pg_hba.conf-like rules (wire.ParseHBA); auth is then "hba".
	hbaFile string
	// httpAddr is where the HTTP endpoints listen (package web; "": off);
	// httpDefault says it was not given (a busy default port is then
	// only a warning).
	httpAddr    string
	httpDefault bool
	// cluster is set by --cluster (cluster.go): this server is a node of
	// a cluster; nil without.
	cluster *clusterConfig
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
	fs.StringVar(&cfg.password, "password", "",
		"password of the initial superuser, set at every start (default $STREAMSQL_PASSWORD, removed from the environment once read; the flag shows in ps: prefer --password-file)")
	fs.StringVar(&cfg.passwordFile, "password-file", "",
		"file holding the initial superuser's password (one line; read once at start; must not be readable by group or others)")
	fs.StringVar(&cfg.fileSourceDir, "file-source-dir", "",
		"the only directory file sources may read from, for every user, after resolving links (default: any regular file the server can read, for superusers and members of pg_read_server_files; never the data directory, /proc, /sys or /dev)")
	fs.StringVar(&cfg.fileSinkDir, "file-sink-dir", "",
		"the only directory file sinks may write into, for every user, after resolving links (default: any directory the server can write, for superusers and members of pg_write_server_files; never the data directory, /proc, /sys or /dev)")
	fs.StringVar(&cfg.tlsCert, "tls-cert", "", "PEM certificate file; with --tls-key, clients may use TLS")
	fs.StringVar(&cfg.tlsKey, "tls-key", "", "PEM private key file for --tls-cert")
	fs.BoolVar(&cfg.tlsSelfSigned, "tls-self-signed", false,
		"serve TLS with a self-signed certificate generated once into the data directory (server.crt, server.key; give server.crt to clients as their root certificate)")
	fs.DurationVar(&cfg.barrierInterval, "barrier-interval", 100*time.Millisecond,
		"how often streaming epochs end: views and subscribers see changes at most this late")
	fs.IntVar(&cfg.streamingParallelism, "streaming-parallelism", 0,
		"instances of each keyed operator (aggregation, windowed aggregation, join) of a new materialized view or sink: the default of SET streaming_parallelism (0: GOMAXPROCS, the cores the process may use); a view that does not SET it spreads this over its stateful operators, max(1, N / their number) instances each (docs/streaming.md, Parallelism)")
	fs.DurationVar(&cfg.checkpointInterval, "checkpoint-interval", time.Second,
		"how often the views' state is checkpointed into the data directory (0: never; a restart then rebuilds views from their inputs)")
	fs.DurationVar(&cfg.viewRetryInterval, "view-retry-interval", 10*time.Second,
		"how often a failed materialized view whose sources can be opened again is restarted by itself, rebuilt from its inputs (0: never; ALTER MATERIALIZED VIEW v RESUME restarts it)")
	cfg.subscribeBufferBytes, cfg.subscribeMemoryLimit, cfg.subscribeSpillLimit = 32<<20, 256<<20, 1<<30
	fs.Var(&cfg.subscribeBufferBytes, "subscribe-buffer-bytes",
		"changes one SUBSCRIBE client may leave unread in memory (B, kB, MB, GB): past that a subscriber of a materialized view reads on from the view's changelog on disk, one of a table or query spills its changes to a file under <data-dir>/tmp/subscribe")
	fs.Var(&cfg.subscribeMemoryLimit, "subscribe-memory-limit",
		"unread changes of all SUBSCRIBE clients together in memory: a subscriber whose next changes would pass it goes to its changelog or spills, as for --subscribe-buffer-bytes")
	fs.Var(&cfg.subscribeSpillLimit, "subscribe-spill-limit",
		"changes one SUBSCRIBE client of a table or query may leave unread in its spill file on disk: past that its subscription ends with an error (53400)")
	var removedRows string
	fs.StringVar(&removedRows, "subscribe-buffer-rows", "",
		"removed: subscribers are bounded in bytes (--subscribe-buffer-bytes); giving it is an error")
	fs.DurationVar(&cfg.subscribeRetention, "subscribe-retention", time.Hour,
		"how long a materialized view keeps the changes it sent to subscribers, so that a client can resume with SUBSCRIBE ... WITH (since = ...) (kept on disk while a client subscribes, and this long after)")
	fs.StringVar(&cfg.clock, "clock", "wall",
		"processing-time clock of the streaming runtime: wall, or manual (starts at 2024-01-01 00:00:00 UTC and moves only by ADVANCE CLOCK; for tests)")
	memLimit := fs.String("memory-limit", "auto",
		"memory all running queries together may hold (sort, hash aggregation and hash join state, window input, recursive CTEs, values being built; sorts past work_mem spill to <data-dir>/tmp instead), e.g. 16GB; auto is 75% of the machine's or cgroup's memory, unlimited turns the limit off; a statement that would pass it fails with SQLSTATE 53200 and the server goes on")
	queryLimit := fs.String("query-memory-limit", "1GB",
		"memory one statement may hold, e.g. 512MB (unlimited: only --memory-limit); SET statement_mem_limit can lower it for a session")
	fs.BoolVar(&cfg.hugePages, "huge-pages", true,
		"ask the kernel for 2 MiB transparent huge pages for the Go heap (when /sys/kernel/mm/transparent_hugepage/enabled is madvise): far fewer page faults as views' state grows, at the cost of a resident set that may not shrink back; --huge-pages=false turns it off (see docs/streaming.md, section Huge pages)")
	fs.BoolVar(&cfg.recoverDamaged, "recover-damaged", false,
		"start even though a table's log is damaged (a checksum failure with valid data after it, or a log shorter than a checkpoint recorded): keep the rows before the damage and move the rest of the file into <data-dir>/damaged/<file>.<offset> (never deleted); without it streamsqld refuses to start and names the file and offset")
	fs.IntVar(&cfg.maxConnections, "max-connections", wire.DefaultMaxConnections,
		"most client connections at once, counted from accept (authenticating ones too); more get FATAL 53300 (SHOW max_connections)")
	fs.IntVar(&cfg.superuserReserved, "superuser-reserved-connections", 3,
		"connection slots of --max-connections only superusers may take (SHOW superuser_reserved_connections)")
	fs.DurationVar(&cfg.authTimeout, "authentication-timeout", wire.DefaultAuthenticationTimeout,
		"a connection that has not completed its startup and authentication by then is closed (1s to 10m; SHOW authentication_timeout)")
	fs.BoolVar(&cfg.requireTLS, "require-tls", false,
		"refuse connections that do not use TLS (FATAL 28000); needs --tls-cert/--tls-key or --tls-self-signed")
	fs.StringVar(&cfg.hbaFile, "hba-file", "",
		"pg_hba.conf-like rules, one a line: host|hostssl|hostnossl database user address trust|reject|md5|scram-sha-256; the first match decides, no match is refused (replaces --auth; see docs/security.md)")
	fs.StringVar(&cfg.httpAddr, "http", "127.0.0.1:5434",
		"address of the HTTP endpoints: the dashboard at /, Prometheus metrics at /metrics, JSON under /api/v1/, profiles under /debug/pprof/ ('' turns them off); with --auth password or --hba-file they ask for a role's password (HTTP basic, over TLS when TLS is configured); with --auth trust only a loopback address is accepted (see docs/observability.md)")
	cl := clusterFlags(fs) // cluster.go
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	cfg.httpDefault = true
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "http" {
			cfg.httpDefault = false
		}
	})
	var err error
	if cfg.memoryLimit, err = parseSize("--memory-limit", *memLimit); err != nil {
		return cfg, err
	}
	if cfg.queryMemoryLimit, err = parseSize("--query-memory-limit", *queryLimit); err != nil {
		return cfg, err
	}
	if err := cfg.readPassword(); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if cfg.barrierInterval <= 0 {
		return cfg, fmt.Errorf("--barrier-interval must be positive")
	}
	if cfg.streamingParallelism < 0 || cfg.streamingParallelism > planner.MaxParallelism {
		return cfg, fmt.Errorf("--streaming-parallelism must be between 1 and %d (0: GOMAXPROCS), not %d", planner.MaxParallelism, cfg.streamingParallelism)
	}
	if cfg.checkpointInterval < 0 {
		return cfg, fmt.Errorf("--checkpoint-interval must not be negative")
	}
	if cfg.viewRetryInterval < 0 {
		return cfg, fmt.Errorf("--view-retry-interval must not be negative")
	}
	if cfg.subscribeRetention <= 0 {
		return cfg, fmt.Errorf("--subscribe-retention must be positive")
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if given["subscribe-buffer-rows"] {
		return cfg, fmt.Errorf("--subscribe-buffer-rows was removed: a subscriber's unread changes are bounded in bytes; use --subscribe-buffer-bytes (default 32MB) and --subscribe-memory-limit (default 256MB)")
	}
	for name, v := range map[string]byteSize{"subscribe-buffer-bytes": cfg.subscribeBufferBytes, "subscribe-memory-limit": cfg.subscribeMemoryLimit, "subscribe-spill-limit": cfg.subscribeSpillLimit} {
		if v <= 0 {
			return cfg, fmt.Errorf("--%s must be positive", name)
		}
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
	if cfg.fileSourceDir != "" {
		if fi, err := os.Stat(cfg.fileSourceDir); err != nil || !fi.IsDir() {
			return cfg, fmt.Errorf("--file-source-dir %s is not a directory", cfg.fileSourceDir)
		}
	}
	if cfg.fileSinkDir != "" {
		if fi, err := os.Stat(cfg.fileSinkDir); err != nil || !fi.IsDir() {
			return cfg, fmt.Errorf("--file-sink-dir %s is not a directory", cfg.fileSinkDir)
		}
	}
	if cfg.maxConnections < 1 || cfg.maxConnections > 262143 {
		return cfg, fmt.Errorf("--max-connections must be between 1 and 262143, not %d", cfg.maxConnections)
	}
	if cfg.superuserReserved < 0 || cfg.superuserReserved >= cfg.maxConnections {
		return cfg, fmt.Errorf("--superuser-reserved-connections (%d) must be at least 0 and less than --max-connections (%d)", cfg.superuserReserved, cfg.maxConnections)
	}
	if cfg.authTimeout < time.Second || cfg.authTimeout > 10*time.Minute {
		return cfg, fmt.Errorf("--authentication-timeout must be between 1s and 10m, not %s", cfg.authTimeout)
	}
	if cfg.requireTLS && cfg.tlsCert == "" && !cfg.tlsSelfSigned {
		return cfg, fmt.Errorf("--require-tls needs a certificate: give --tls-cert and --tls-key, or --tls-self-signed")
	}
	if cfg.password != "" && cfg.user == "" {
		cfg.user = "streamsql"
	}
	if cfg.cluster, err = cl.parse(given); err != nil {
		return cfg, err
	}
	if cfg.hbaFile != "" {
		if cfg.auth != "" {
			return cfg, fmt.Errorf("--hba-file and --auth exclude each other: the file's rules choose the method")
		}
		cfg.auth = "hba"
	}
	switch cfg.auth {
	case "hba":
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

// readPassword settles the initial password: --password, else
// --password-file, else $STREAMSQL_PASSWORD. The variable is removed from
// the process's environment once read and, on Linux, its value blanked out
// of the starting environment that /proc/<pid>/environ shows (scrubEnv);
// it was there until then, and stays in the environment of the process
// that started the server: --password-file is the recommended way.
func (cfg *config) readPassword() error {
	env, fromEnv := os.LookupEnv("STREAMSQL_PASSWORD")
	env = strings.Clone(env) // the value lives in the block scrubEnv overwrites
	os.Unsetenv("STREAMSQL_PASSWORD")
	if fromEnv {
		cfg.scrubErr = scrubEnv("STREAMSQL_PASSWORD")
	}
	switch {
	case cfg.password != "" && cfg.passwordFile != "":
		return fmt.Errorf("--password and --password-file exclude each other")
	case cfg.passwordFile != "":
		pw, err := readPasswordFile(cfg.passwordFile)
		if err != nil {
			return err
		}
		cfg.password = pw
	case cfg.password == "" && fromEnv:
		cfg.password = env
	}
	return nil
}

// readPasswordFile reads a password file: the first line, without its
// line ending. Like PostgreSQL's key file, it is refused when group or
// others may read or write it.
func readPasswordFile(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("--password-file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("--password-file %s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("--password-file %s has group or world access (%#o); permissions should be u=rw (0600) or less", path, fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--password-file: %w", err)
	}
	pw := string(data)
	if i := strings.IndexAny(pw, "\r\n"); i >= 0 {
		pw = pw[:i]
	}
	if pw == "" {
		return "", fmt.Errorf("--password-file %s is empty", path)
	}
	return pw, nil
}

// passwordSource looks up stored passwords (*engine.Engine).
type passwordSource interface {
	LoginPassword(user string) (stored string, ok bool)
	PasswordRoles() int
}

// wireOptions turns the configuration into the server's options; roles
// answers password lookups under --auth password.
func (cfg config) wireOptions(logf func(string, ...any), roles passwordSource) (wire.Options, error) {
	opts := wire.Options{Logf: logf, MaxConnections: cfg.maxConnections,
		SuperuserReservedConnections: cfg.superuserReserved, AuthenticationTimeout: cfg.authTimeout,
		RequireTLS: cfg.requireTLS}
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
	if cfg.hbaFile != "" {
		f, err := os.Open(cfg.hbaFile)
		if err != nil {
			return opts, fmt.Errorf("--hba-file: %w", err)
		}
		defer f.Close()
		if opts.HBA, err = wire.ParseHBA(f); err != nil {
			return opts, fmt.Errorf("--hba-file %s: %w", cfg.hbaFile, err)
		}
		if wire.NeedsPasswords(opts.HBA) && roles.PasswordRoles() == 0 {
			return opts, fmt.Errorf("--hba-file %s asks for passwords but no role has one; give --user and --password (or $STREAMSQL_USER and $STREAMSQL_PASSWORD)", cfg.hbaFile)
		}
		opts.Passwords = roles.LoginPassword
	}
	if cfg.auth == "password" {
		if roles.PasswordRoles() == 0 {
			return opts, fmt.Errorf("--auth password: no role has a password; give --user and --password (or $STREAMSQL_USER and $STREAMSQL_PASSWORD), or create users with CREATE USER ... PASSWORD under --auth trust first")
		}
		opts.Passwords = roles.LoginPassword
	}
	return opts, nil
}

// serverSettings are the values SHOW reports for the connection settings.
func (cfg config) serverSettings() map[string]string {
	return map[string]string{
		"max_connections":                strconv.Itoa(cfg.maxConnections),
		"superuser_reserved_connections": strconv.Itoa(cfg.superuserReserved),
		"authentication_timeout":         pgDuration(cfg.authTimeout),
	}
}

// pgDuration prints a duration as SHOW does for a setting in seconds
// ("1min", "90s").
func pgDuration(d time.Duration) string {
	sec := int64(d / time.Second)
	switch {
	case sec%3600 == 0:
		return strconv.FormatInt(sec/3600, 10) + "h"
	case sec%60 == 0:
		return strconv.FormatInt(sec/60, 10) + "min"
	}
	return strconv.FormatInt(sec, 10) + "s"
}

// trustWarning is the line logged at start when any user name gets in
// without a password from other machines; "" when auth is not trust or
// the listener is on a loopback address.
func trustWarning(auth string, addr net.Addr) string {
	if auth != "trust" {
		return ""
	}
	if ta, ok := addr.(*net.TCPAddr); ok && ta.IP.IsLoopback() {
		return ""
	}
	return fmt.Sprintf("WARNING: --auth trust on %s, which is not a loopback address: anyone who can reach it connects as any user, superusers included, without a password; use --auth password (and --require-tls), or --listen 127.0.0.1:PORT", addr)
}
