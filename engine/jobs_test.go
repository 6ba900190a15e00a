package engine

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/pgerr"
)

// TestBackfillProgress: CREATE MATERIALIZED VIEW over a table with rows
// sends progress NOTICEs while it backfills when streaming_progress_notices
// is on (rows done never above the total, never going back) and one when
// done; meanwhile SHOW JOBS and streamsql_jobs list the backfill and the
// view's status is backfilling; afterwards no job is listed.
func TestBackfillProgress(t *testing.T) {
	old := progressEvery
	progressEvery = time.Millisecond
	defer func() { progressEvery = old }()
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE t (k int, v int)")
	const total = 400000
	mustRun(t, s, "INSERT INTO t SELECT g % 1000, g FROM generate_series(1, "+strconv.Itoa(total)+") g")
	mustRun(t, s, "SET streaming_progress_notices = on")

	var mu sync.Mutex
	var notices []string
	ctx := WithNotices(context.Background(), func(n *pgerr.Error) {
		mu.Lock()
		notices = append(notices, n.Message)
		mu.Unlock()
	})
	// Another session watches the jobs while the view is created.
	watch, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	seen := make(chan []string, 1)
	go func() {
		var got []string
		defer func() { seen <- got }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			rows, _, err := run(t, watch, "SHOW JOBS")
			if err != nil {
				got = append(got, "error: "+err.Error())
				return
			}
			if len(rows) > 0 {
				st, _, err1 := run(t, watch, "SELECT status FROM streamsql_views WHERE viewname = 'mv'")
				sys, _, err2 := run(t, watch, "SELECT name, rows_total FROM streamsql_jobs")
				if err1 != nil || err2 != nil {
					got = append(got, fmt.Sprintf("error: %v %v", err1, err2))
					return
				}
				got = append(got, rows[0]+" status="+strings.Join(st, ",")+" sys="+strings.Join(sys, ","))
			}
		}
	}()
	p := prepare(t, s, "CREATE MATERIALIZED VIEW mv AS SELECT k, sum(v) AS s FROM t GROUP BY k")
	if _, err := s.Execute(ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	close(stop)
	jobs := <-seen

	mu.Lock()
	defer mu.Unlock()
	if len(notices) == 0 || notices[len(notices)-1] != "materialized view mv: backfill done, 400000 rows in "+strings.TrimPrefix(notices[len(notices)-1], "materialized view mv: backfill done, 400000 rows in ") ||
		!strings.Contains(notices[len(notices)-1], "backfill done, 400000 rows in ") {
		t.Fatalf("notices: %q", notices)
	}
	re := regexp.MustCompile(`^materialized view mv: backfill (\d+) of 400000 rows \(\d+\.\d%\), \S+ elapsed`)
	last := int64(-1)
	for _, n := range notices[:len(notices)-1] {
		m := re.FindStringSubmatch(n)
		if m == nil {
			t.Fatalf("progress notice %q", n)
		}
		d, _ := strconv.ParseInt(m[1], 10, 64)
		if d < last || d > total {
			t.Errorf("rows done %d after %d (total %d)", d, last, total)
		}
		last = d
	}
	t.Logf("%d progress notices; jobs seen: %d", len(notices)-1, len(jobs))
	sysSeen, backfilling := len(jobs) == 0, len(jobs) == 0
	for _, j := range jobs {
		f := strings.Split(j, "|")
		// The view's status and streamsql_jobs are read after SHOW JOBS:
		// the backfill may have ended meanwhile.
		if len(f) < 8 || f[0] != "mv" || f[1] != "materialized view" || f[2] != "backfill" || f[4] != "400000" ||
			!strings.Contains(j, "status=backfilling") && !strings.Contains(j, "status=running") {
			t.Errorf("SHOW JOBS row %q", j)
		}
		sysSeen = sysSeen || strings.Contains(j, "sys=mv|400000")
		backfilling = backfilling || strings.Contains(j, "status=backfilling")
	}
	if !backfilling {
		t.Errorf("the view's status never said backfilling: %q", jobs)
	}
	if !sysSeen {
		t.Errorf("streamsql_jobs never listed the backfill SHOW JOBS listed: %q", jobs)
	}
	if rows := mustRun(t, s, "SHOW JOBS"); len(rows) != 0 {
		t.Errorf("jobs after the backfill: %q", rows)
	}
	if rows := mustRun(t, s, "SELECT status FROM streamsql_views WHERE viewname = 'mv'"); len(rows) != 1 || rows[0] != "running" {
		t.Errorf("status after the backfill: %q", rows)
	}
	// Off (the default): no notices.
	notices = nil
	mustRun(t, s, "SET streaming_progress_notices = off")
	mu.Unlock()
	p = prepare(t, s, "CREATE MATERIALIZED VIEW mv2 AS SELECT k FROM t WHERE v < 10")
	if _, err := s.Execute(ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(notices) != 0 {
		t.Errorf("notices with the setting off: %q", notices)
	}
}
