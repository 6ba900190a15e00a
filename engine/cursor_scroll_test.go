package engine

import (
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// A cursor scrolling without SCROLL keeps no more than work_mem of rows:
// read forward past that, it reads forward only.
func TestImplicitScrollBounded(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	for _, q := range []string{
		"SET work_mem = '64kB'", "BEGIN",
		"DECLARE small CURSOR FOR SELECT g FROM generate_series(1, 10) g",
		"DECLARE big CURSOR FOR SELECT g FROM generate_series(1, 200000) g",
		"FETCH ALL small", "FETCH BACKWARD 1 small", "FETCH 100000 big",
	} {
		if _, _, err := run(t, s, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	c := s.cursors["big"]
	if c.store.n != 0 || c.storeBytes == 0 || c.scrollable() {
		t.Fatalf("big cursor keeps %d rows (%d bytes), scrollable %v", c.store.n, c.storeBytes, c.scrollable())
	}
	if rows, _, err := run(t, s, "FETCH BACKWARD 1 small"); err != nil || len(rows) != 1 || rows[0] != "9" {
		t.Fatalf("small cursor still scrolls: %v %v", rows, err)
	}
	if _, _, err := run(t, s, "FETCH BACKWARD 1 big"); pgerr.CodeOf(err) != pgerr.ObjectNotInPrerequisiteState {
		t.Fatalf("backward past work_mem: %v", err)
	}
}
