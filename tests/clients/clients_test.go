package clients

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/streamsql/streamsql/tests/harness"
)

var update = flag.Bool("update", false, "rewrite testdata/*.pg.txt from a live PostgreSQL 15")

// target is a server to point a client at.
type target struct {
	host, port, user, password, db string
	streamsql                      bool
}

// dsn is a libpq key=value connection string.
func (t target) dsn() string {
	return fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=%s sslmode=disable connect_timeout=10",
		t.host, t.port, t.user, t.password, t.db)
}

// url is a postgres:// URL (pgx).
func (t target) url() string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(t.user, t.password), Host: net.JoinHostPort(t.host, t.port),
		Path: "/" + t.db, RawQuery: "sslmode=disable&connect_timeout=10"}
	return u.String()
}

// jdbc is a pgjdbc URL (user and password are passed apart).
func (t target) jdbc() string {
	return fmt.Sprintf("jdbc:postgresql://%s/%s?sslmode=disable", net.JoinHostPort(t.host, t.port), t.db)
}

// streamsqlTarget starts an in-process streamsql for the test.
func streamsqlTarget(t *testing.T) target {
	t.Helper()
	s := harness.Start(t, t.TempDir())
	host, port, _ := net.SplitHostPort(s.Addr())
	return target{host: host, port: port, user: "streamsql", password: "streamsql", db: "streamsql", streamsql: true}
}

// pgAdminURL is the PostgreSQL 15 the transcripts are compared with.
func pgAdminURL() string {
	if u := os.Getenv("STREAMSQL_PG_DSN"); u != "" {
		return u
	}
	return "postgres://postgres:postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// postgresTarget creates a scratch database on PostgreSQL, dropped when the
// test ends; ok is false when PostgreSQL is not reachable.
func postgresTarget(t *testing.T) (target, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cfg, err := pgx.ParseConfig(pgAdminURL())
	if err != nil {
		t.Fatalf("STREAMSQL_PG_DSN: %v", err)
	}
	admin, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Logf("no PostgreSQL to compare with (%v): using the recorded transcripts", err)
		return target{}, false
	}
	db := strings.ToLower(fmt.Sprintf("clients_%s_%d", regexp.MustCompile(`\W+`).ReplaceAllString(t.Name(), "_"), os.Getpid()))
	admin.Exec(ctx, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)")
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		admin.Close(ctx)
		t.Fatalf("PostgreSQL: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		admin.Exec(ctx, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)")
		admin.Close(ctx)
	})
	return target{host: cfg.Host, port: fmt.Sprint(cfg.Port), user: cfg.User, password: cfg.Password, db: db}, true
}

// run runs a client program and returns what it printed.
func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = "testdata"
	cmd.Env = append(append(os.Environ(), "TZ=UTC", "PGTZ=UTC", "PAGER=", "PSQLRC=/dev/null"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// lookPath finds a client program or skips the test.
func lookPath(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed (apt-get install %s; .ci/run installs it)", name, pkg)
	}
	return p
}

// fileOrSkip returns path if it exists, else skips the test.
func fileOrSkip(t *testing.T, path, pkg string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s is not installed (apt-get install %s; .ci/run installs it)", path, pkg)
	}
	return path
}

// compareTranscripts checks that a client's transcript against streamsql
// (ours) equals its transcript against PostgreSQL: pgOut when PostgreSQL
// was reachable (live), else the one recorded in testdata/<name>.pg.txt.
// norm is applied to both sides. Lines starting with "stream" are
// streamsql-only and returned for the caller to check; lines starting with
// FAIL fail the test.
func compareTranscripts(t *testing.T, name, ours, pgOut string, live bool, norm func(string) string) []string {
	t.Helper()
	golden := filepath.Join("testdata", name+".pg.txt")
	if live && *update {
		if err := os.WriteFile(golden, []byte(pgOut), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !live {
		b, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("no PostgreSQL and no recorded transcript: %v", err)
		}
		pgOut = string(b)
	}
	if norm == nil {
		norm = func(s string) string { return s }
	}
	var kept, extra []string
	for _, l := range strings.Split(ours, "\n") {
		switch {
		case strings.HasPrefix(l, "FAIL"):
			t.Errorf("%s against streamsql: %s", name, l)
		case strings.HasPrefix(l, "stream"):
			extra = append(extra, l)
		default:
			kept = append(kept, l)
		}
	}
	if strings.Contains(pgOut, "\nFAIL") {
		t.Errorf("%s fails against PostgreSQL itself:\n%s", name, pgOut)
	}
	got, want := norm(strings.Join(kept, "\n")), norm(pgOut)
	if got != want {
		t.Errorf("%s: streamsql's transcript differs from PostgreSQL's:\n%s", name, lineDiff(want, got))
	}
	return extra
}

// lineDiff lists the lines that differ, PostgreSQL's (-) against ours (+),
// after the common prefix and before the common suffix.
func lineDiff(want, got string) string {
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	j, k := len(a), len(b)
	for j > i && k > i && a[j-1] == b[k-1] {
		j--
		k--
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "from line %d:\n", i+1)
	for _, l := range a[i:j] {
		sb.WriteString("- " + l + "\n")
	}
	for _, l := range b[i:k] {
		sb.WriteString("+ " + l + "\n")
	}
	return sb.String()
}

// mustContain checks that each pattern matches one of lines.
func mustContain(t *testing.T, what string, lines []string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		re := regexp.MustCompile(p)
		found := false
		for _, l := range lines {
			found = found || re.MatchString(l)
		}
		if !found {
			t.Errorf("%s: no line matches %q in:\n%s", what, p, strings.Join(lines, "\n"))
		}
	}
}

// runQuiet runs a command and returns its output and error.
func runQuiet(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}
