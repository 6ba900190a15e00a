package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadOnlyDataDir: a server started on a data directory it cannot
// write (here a read-only mount: file permissions do not stop root) exits
// at once with a message that says so and what to do, after its data was
// written by an earlier run; made writable again, the data is all there.
// Needs root (or CAP_SYS_ADMIN) to mount a tmpfs; skips without. (A
// directory that stops being writable under a running server behaves as a
// full disk: tests/e2e/fulldisk_test.go.)
func TestReadOnlyDataDir(t *testing.T) {
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root or CAP_SYS_ADMIN): %v: %s", err, strings.TrimSpace(string(out)))
	}
	remount := func(mode string) {
		t.Helper()
		if out, err := exec.Command("mount", "-o", "remount,"+mode, mnt).CombinedOutput(); err != nil {
			t.Fatalf("remount %s: %v: %s", mode, err, out)
		}
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	dir := filepath.Join(mnt, "data")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := startServer(t, dir)
	c := s.connect(ctx)
	execAll(t, ctx, c, "CREATE TABLE t (id int)", "INSERT INTO t VALUES (1), (2)",
		"CREATE MATERIALIZED VIEW v AS SELECT count(*) AS n FROM t", "FLUSH", "CHECKPOINT")
	c.Close(ctx)
	s.kill()

	remount("ro")
	cmd := exec.CommandContext(ctx, binary, "--data-dir", dir, "--listen", "127.0.0.1:0")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("streamsqld started on a read-only data directory: %s", out)
	}
	if msg := string(out); !strings.Contains(msg, "is not writable") || !strings.Contains(msg, "--data-dir") {
		t.Fatalf("streamsqld on a read-only data directory said %q", msg)
	}
	t.Logf("on a read-only data directory: %s", strings.TrimSpace(string(out)))

	remount("rw")
	s = startServer(t, dir)
	c = s.connect(ctx)
	var n int64
	if err := c.QueryRow(ctx, "SELECT n FROM v").Scan(&n); err != nil || n != 2 {
		t.Fatalf("view after the read-only episode: %d, %v", n, err)
	}
}
