package clients

import (
	"regexp"
	"strings"
	"testing"
)

// TestPsqlDescribe runs testdata/psql_describe.sql (tables, a view, a
// materialized view, another schema, SQL functions; \dn \dt \dv \dm \ds \d \d+
// \df \df+ \di \dx \sv \sf and \d of each) through the real psql against streamsql and
// PostgreSQL and compares the outputs, up to the owner's name, column
// widths, relation sizes and the text of view definitions (see
// docs/catalog.md). \l and the describe commands on a source are
// streamsql's own and checked apart.
func TestPsqlDescribe(t *testing.T) {
	psql := lookPath(t, "psql", "postgresql-client")
	runPsql := func(tg target, args ...string) string {
		return run(t, []string{"PGPASSWORD=" + tg.password}, psql,
			append([]string{"-X", "-h", tg.host, "-p", tg.port, "-U", tg.user, "-d", tg.db}, args...)...)
	}
	ss := streamsqlTarget(t)
	ours := runPsql(ss, "-f", "psql_describe.sql")
	var pgOut string
	pg, live := postgresTarget(t)
	if live {
		pgOut = runPsql(pg, "-f", "psql_describe.sql")
	}
	compareTranscripts(t, "psql", ours, pgOut, live, normPsql)

	// streamsql only: the databases, and a source as a foreign table.
	out := runPsql(ss, "-c", `\l`,
		"-c", "CREATE SOURCE src WITH (connector = 'nexmark', table = 'bid', events_per_second = '10')",
		"-c", `\d src`, "-c", `\det`, "-c", `\dE`, "-c", `\d+ src`, "-c", `\det+`, "-c", `\des+`, "-c", `\dew+`,
		"-c", `\dL`, "-c", `\dd`, "-c", `\dc`, "-c", `\dO`, "-c", `\do`, "-c", `\dx+`, "-c", `\dT`, "-c", `\dp`, "-c", `\dS+`)
	if strings.Contains(out, "ERROR") {
		t.Errorf("psql describe commands fail:\n%s", out)
	}
	mustContain(t, "psql on streamsql", foldLines(out),
		`^streamsql \| streamsql \| UTF8 \| C.UTF-8 \| C.UTF-8 \| \| libc \|$`,
		`^Foreign table "public.src"$`,
		`^Column \| Type \| Collation \| Nullable \| Default \| FDW options$`,
		`^auction \| bigint \| \| \| \|$`,
		`^Server: streamsql$`,
		`^FDW options: \(connector 'nexmark', events_per_second '10', "table" 'bid'\)$`,
		`^public \| src \| streamsql$`,
		`^public \| src \| foreign table \| streamsql$`,
		`^auction \| bigint \| \| \| \| \| plain \| \|$`,
		`^public \| src \| streamsql \| \(connector 'nexmark', events_per_second '10', "table" 'bid'\) \|$`,
		`^streamsql \| streamsql \| streamsql \| \| \| \| \|$`,
		`^plpgsql \| streamsql \| t \|$`)
}

var (
	sizeRe  = regexp.MustCompile(`\b\d+ (bytes|kB|MB)\b`)
	dashRe  = regexp.MustCompile(`-+`)
	ownerRe = regexp.MustCompile(`\b(postgres|streamsql)\b`)
)

// normPsql folds what may differ between the two servers' psql output.
func normPsql(s string) string {
	var out []string
	inDef := false
	for _, l := range foldLines(s) {
		switch {
		case strings.HasPrefix(l, "CREATE OR REPLACE VIEW"):
			out = append(out, l)
			return strings.Join(out, "\n") // \sv comes last: its body is the view's text
		case l == "View definition:":
			inDef = true
			out = append(out, l)
			continue
		case inDef && (l == "" || strings.HasPrefix(l, "Access method:")):
			inDef = false
		case inDef:
			continue
		}
		l = ownerRe.ReplaceAllString(l, "OWNER")
		l = sizeRe.ReplaceAllString(l, "SIZE")
		l = dashRe.ReplaceAllString(l, "-")
		if l == "SELECT 0" { // CREATE MATERIALIZED VIEW's tag in PostgreSQL
			l = "CREATE MATERIALIZED VIEW"
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// foldLines splits text into lines with runs of blanks folded to one space
// and the ends trimmed.
func foldLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		out = append(out, strings.Join(strings.Fields(l), " "))
	}
	return out
}
