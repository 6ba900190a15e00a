package failpoint

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHit runs this test binary as a child with a failpoint armed: it
// dies by SIGKILL at the armed pass (a count, or once a file exists) and
// not before; an unarmed point does nothing.
func TestHit(t *testing.T) {
	if os.Getenv("FAILPOINT_CHILD") != "" {
		for i := 1; i <= 5; i++ {
			Hit("other", "pass %d", i)
			if i == 3 && os.Getenv("FAILPOINT_FILE") != "" {
				os.WriteFile(os.Getenv("FAILPOINT_FILE"), nil, 0o644)
			}
			Hit("p", "pass %d", i)
		}
		os.Exit(0)
	}
	file := filepath.Join(t.TempDir(), "now")
	for _, c := range []struct{ env, want string }{
		{"p:2", "failpoint p hit (pass 2): kill -9"},
		{"p", "failpoint p hit (pass 1): kill -9"},
		{"p@" + file, "failpoint p hit (pass 3): kill -9"},
		{"q", ""},
	} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestHit$")
		cmd.Env = append(os.Environ(), "FAILPOINT_CHILD=1", Env+"="+c.env, "FAILPOINT_FILE="+file)
		out, err := cmd.CombinedOutput()
		os.Remove(file)
		if c.want == "" {
			if err != nil {
				t.Fatalf("%s: %v\n%s", c.env, err, out)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "killed") || !strings.Contains(string(out), c.want) || strings.Count(string(out), "failpoint") != 1 {
			t.Fatalf("%s: %v, output:\n%s", c.env, err, out)
		}
	}
}
