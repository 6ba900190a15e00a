//go:build linux

package bench

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestCoreRoundTrip(t *testing.T) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil || set.Count() < 2 || runtime.GOMAXPROCS(0) < 2 {
		if d, ok := CoreRoundTrip(1000); ok {
			t.Fatalf("one CPU: measured %v", d)
		}
		t.Skip("needs two CPUs")
	}
	d, ok := CoreRoundTrip(20_000)
	if !ok {
		t.Fatal("no round trip measured on two CPUs")
	}
	// A cache line's round trip between two cores is tens to hundreds of
	// nanoseconds; a microsecond or more would mean the threads shared a
	// CPU (the pinning failed) and took turns by preemption.
	if d <= 0 || d >= 20*time.Microsecond {
		t.Fatalf("round trip %v", d)
	}
	t.Logf("round trip %v", d)
}
