package e2e

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestPsql drives the real psql client: it creates a table with -c and
// checks that \dt and \d print what PostgreSQL 15's psql prints for it (up to
// column widths and the owner's name).
func TestPsql(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed (apt-get install postgresql-client)")
	}
	s := startServer(t, t.TempDir())
	host, port := splitAddr(s.addr)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, psql, "-X", "-v", "ON_ERROR_STOP=1",
		"-h", host, "-p", port, "-U", "streamsql", "-d", "streamsql",
		"-c", "CREATE TABLE t (id integer PRIMARY KEY, name text NOT NULL, score numeric(6,2) DEFAULT 0)",
		"-c", `\dt`,
		"-c", `\d t`)
	cmd.Env = append(os.Environ(), "PGPASSWORD=streamsql", "PGCONNECT_TIMEOUT=10", "PAGER=", "PSQLRC=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	lines := foldLines(string(out))
	// Each pattern must match a line (whitespace folded) in this order, as
	// in PostgreSQL 15's output.
	want := []string{
		`^CREATE TABLE$`,
		`^List of relations$`,
		`^Schema \| Name \| Type \| Owner$`,
		`^-+\+-+\+-+\+-+$`,
		`^public \| t \| table \| \S+$`,
		`^\(1 row\)$`,
		`^Table "public\.t"$`,
		`^Column \| Type \| Collation \| Nullable \| Default$`,
		`^-+\+-+\+-+\+-+\+-+$`,
		`^id \| integer \| \| not null \|$`,
		`^name \| text \| \| not null \|$`,
		`^score \| numeric\(6,2\) \| \| \| 0$`,
	}
	i := 0
	for _, l := range lines {
		if i < len(want) && regexp.MustCompile(want[i]).MatchString(l) {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("psql output lacks a line matching %q (after the earlier ones); output:\n%s", want[i], out)
	}
}

func splitAddr(addr string) (string, string) {
	k := strings.LastIndexByte(addr, ':')
	return addr[:k], addr[k+1:]
}

// foldLines splits text into lines with runs of whitespace folded to one
// space and the ends trimmed.
func foldLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		out = append(out, strings.Join(strings.Fields(l), " "))
	}
	return out
}
