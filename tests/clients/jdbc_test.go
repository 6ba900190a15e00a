package clients

import (
	"strings"
	"testing"
)

// TestPgjdbc runs testdata/ClientTest.java with pgjdbc 42: prepared
// statements that turn server-side and binary after 5 executions, fetchSize
// through a named portal, DatabaseMetaData (getSchemas, getTables,
// getColumns, getPrimaryKeys, getIndexInfo, getTypeInfo) and errors; on
// streamsql a source in the metadata and SUBSCRIBE read through fetchSize.
func TestPgjdbc(t *testing.T) {
	java := lookPath(t, "java", "default-jdk-headless")
	jar := fileOrSkip(t, "/usr/share/java/postgresql.jar", "libpostgresql-jdbc-java")
	runJava := func(tg target) string {
		args := []string{"-cp", jar, "ClientTest.java", tg.jdbc(), tg.user, tg.password}
		if tg.streamsql {
			args = append(args, "streamsql")
		}
		return run(t, nil, java, args...)
	}
	ours := runJava(streamsqlTarget(t))
	var pgOut string
	pg, live := postgresTarget(t)
	if live {
		pgOut = runJava(pg)
	}
	extra := compareTranscripts(t, "jdbc", ours, pgOut, live, nil)
	mustContain(t, "pgjdbc on a source", extra,
		`^streamtable TABLE_NAME=src TABLE_TYPE=FOREIGN TABLE$`,
		`^streamcolumn COLUMN_NAME=auction TYPE_NAME=int8$`,
		// SUBSCRIBE through a fetchSize cursor: the view's rows, then an update.
		`^streamsub insert f 4$`, `^streamsub insert t 4$`,
		`^streamsub update_before t 4$`, `^streamsub update_after t 5$`)
	if !strings.HasSuffix(strings.TrimSpace(ours), "done") {
		t.Errorf("the program did not finish:\n%s", ours)
	}
}
