package streamprop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// shrink looks for a shorter sequence on which views still fail
// (STREAMPROP_SHRINK=1): it keeps only those views and the views they read,
// then removes ever smaller runs of the other steps (writes, checks,
// restarts) while the failure persists, replaying each candidate on a fresh
// server. Epoch boundaries fall where timing puts them, so a failure that
// depends on them may not replay every time; the result is logged and
// written to $TMPDIR/streamprop-<seed>-min.sql.
func shrink(ctx context.Context, t *testing.T, cfg runConfig, steps []step, views []string) {
	needed := map[string]bool{}
	var need func(string)
	need = func(name string) {
		needed[name] = true
		for _, d := range corpusView(name).deps() {
			need(d)
		}
	}
	for _, v := range views {
		need(v)
	}
	// fixed steps stay; the others may go.
	var cur []step
	var fixed []bool
	for _, s := range steps {
		if s.kind == stepCreate || s.kind == stepDrop {
			if needed[s.view] {
				cur, fixed = append(cur, s), append(fixed, true)
			}
			continue
		}
		cur, fixed = append(cur, s), append(fixed, false)
	}
	cur, fixed = append(cur, step{kind: stepCheck}), append(fixed, true)
	deadline := time.Now().Add(3 * time.Minute)
	tries := 0
	fails := func(c []step) bool {
		tries++
		_, err := play(ctx, t, cfg, c, needed)
		var m *mismatchError
		return errors.As(err, &m)
	}
	if !fails(cur) {
		t.Logf("shrink: views %v alone do not fail again; not shrunk", views)
		return
	}
	for chunk := len(cur) / 2; chunk >= 1 && time.Now().Before(deadline); {
		removed := false
		for i := 0; i < len(cur) && time.Now().Before(deadline); {
			j := min(i+chunk, len(cur))
			var cand []step
			var candFixed []bool
			for k := range cur {
				if k >= i && k < j && !fixed[k] {
					continue
				}
				cand, candFixed = append(cand, cur[k]), append(candFixed, fixed[k])
			}
			if len(cand) < len(cur) && fails(cand) {
				cur, fixed, removed = cand, candFixed, true
				continue // the same position now holds the next steps
			}
			i = j
		}
		if !removed {
			chunk /= 2
		}
	}
	r, err := play(ctx, t, cfg, cur, needed)
	path := filepath.Join(os.TempDir(), fmt.Sprintf("streamprop-%d-min.sql", cfg.seed))
	if werr := os.WriteFile(path, []byte(r.script.String()), 0o644); werr != nil {
		path = "(not written: " + werr.Error() + ")"
	}
	t.Logf("shrink: %d steps after %d replays (%s); last replay: %v\n%s", len(cur), tries, path, err, r.script.String())
}
