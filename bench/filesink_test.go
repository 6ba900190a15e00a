package bench

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestQ10FileSink runs q10 into the file sink: every bid is one JSON line
// in its dt=.../hm=.../ directory, and no hidden file is left.
func TestQ10FileSink(t *testing.T) {
	dir := t.TempDir()
	res, err := Run(context.Background(), Options{Query: "q10", Events: 20000, FileSink: dir})
	if err != nil {
		t.Fatal(err)
	}
	var lines int64
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(dir, "q10"), p)
		parts := strings.Split(rel, string(filepath.Separator))
		if len(parts) != 3 || !strings.HasPrefix(parts[0], "dt=") || !strings.HasPrefix(parts[1], "hm=") || strings.HasPrefix(parts[2], ".") {
			t.Errorf("unexpected file %s", rel)
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			lines++
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if lines != res.Rows || lines != 20000*46/50 {
		t.Fatalf("%d lines in the files, %d rows sent, want %d", lines, res.Rows, 20000*46/50)
	}
}
