package clients

import (
	"strings"
	"testing"
)

// pythonClient runs testdata/pyclient.py in one mode against streamsql and
// PostgreSQL and compares the transcripts.
func pythonClient(t *testing.T, mode, module, pkg string) {
	py := fileOrSkip(t, "/usr/bin/python3", "python3")
	if out, err := runQuiet(py, "-c", "import "+module); err != nil {
		t.Skipf("python module %s is not installed (apt-get install %s; .ci/run installs it): %s", module, pkg, out)
	}
	runPy := func(tg target) string {
		args := []string{"pyclient.py", mode, tg.dsn()}
		if tg.streamsql {
			args = append(args, "streamsql")
		}
		return run(t, nil, py, args...)
	}
	ours := runPy(streamsqlTarget(t))
	var pgOut string
	pg, live := postgresTarget(t)
	if live {
		pgOut = runPy(pg)
	}
	extra := compareTranscripts(t, mode, ours, pgOut, live, nil)
	if mode == "psycopg" {
		mustContain(t, "psycopg on SUBSCRIBE", extra, `^stream sub insert False 4$`, `^stream sub insert True 4$`, `^stream sub insert None 1$`)
	}
	if mode == "sqlalchemy" {
		mustContain(t, "SQLAlchemy on a source", extra, `^stream foreign tables \['src'\]$`,
			`^stream columns \[\('auction', 'BIGINT'\), \('bidder', 'BIGINT'\), \('price', 'BIGINT'\)\]$`)
	}
	if !strings.HasSuffix(strings.TrimSpace(ours), "done") {
		t.Errorf("the program did not finish:\n%s", ours)
	}
}

// TestPsycopg3: server-side parameters, prepared statements after 5
// executions, binary cursors, a named (server-side) cursor.
func TestPsycopg3(t *testing.T) { pythonClient(t, "psycopg", "psycopg", "python3-psycopg") }

// TestPsycopg2: client-side parameters, a named cursor.
func TestPsycopg2(t *testing.T) { pythonClient(t, "psycopg2", "psycopg2", "python3-psycopg2") }

// TestSQLAlchemy: reflection through the inspector (tables, views,
// columns, primary key, indexes, comments) over psycopg2.
func TestSQLAlchemy(t *testing.T) { pythonClient(t, "sqlalchemy", "sqlalchemy", "python3-sqlalchemy") }
