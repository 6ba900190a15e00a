package main

import (
	"fmt"
	"testing"
)

// TestComponents: jobs split into the sets connected by reads, each in
// OID order; a view reading two upstream views joins their sets.
func TestComponents(t *testing.T) {
	reads := map[uint32][]uint32{
		5: {1},    // 1 <- 5
		6: {2},    // 2 <- 6
		7: {5, 6}, // joins {1 5} and {2 6}
		8: {3},    // 3 <- 8
	}
	for _, c := range []struct {
		jobs []uint32
		want string
	}{
		{[]uint32{1, 2, 3, 4, 5, 6, 7, 8}, "[[1 2 5 6 7] [3 8] [4]]"},
		{[]uint32{1, 2, 3, 4, 5, 6, 8}, "[[1 5] [2 6] [3 8] [4]]"},
		{[]uint32{4}, "[[4]]"},
	} {
		if got := fmt.Sprint(components(c.jobs, reads)); got != c.want {
			t.Errorf("components(%v) = %s, want %s", c.jobs, got, c.want)
		}
	}
}
