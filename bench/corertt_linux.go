package bench

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// CoreRoundTrip measures how long one cache line takes to go from one CPU
// to another and back (docs/benchmarks.md, "The host's core placement"):
// two threads, pinned to the first two CPUs the process may run on, hand
// a counter to each other rounds times by spinning on it. It reports the
// mean round trip, and false when the process may run on fewer than two
// CPUs, a thread could not be pinned, or the rounds took over a second
// (a CPU taken away by the host). On a virtual machine the figure shows
// where the host placed the two vCPUs: on cores that share a cache (about
// 100 ns here) or apart (about 400 ns), which decides what every exchange
// of rows between the cores costs.
//
// It runs on two threads of its own, which end with it (a goroutine that
// exits locked to its thread takes the thread with it, pinning and all).
func CoreRoundTrip(rounds int) (time.Duration, bool) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil || set.Count() < 2 || runtime.GOMAXPROCS(0) < 2 {
		return 0, false
	}
	var cpus []int
	for c := 0; len(cpus) < 2; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	var (
		turn     atomic.Int64 // even: the first thread's turn, odd: the second's
		abort    atomic.Bool
		ready    sync.WaitGroup
		done     sync.WaitGroup
		start    = make(chan struct{})
		pinFails atomic.Int32
	)
	deadline := time.Now().Add(time.Second)
	player := func(cpu int, parity int64) {
		defer done.Done()
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		var one unix.CPUSet
		one.Set(cpu)
		if unix.SchedSetaffinity(0, &one) != nil {
			pinFails.Add(1)
			abort.Store(true)
		}
		ready.Done()
		<-start
		for i := int64(0); i < int64(rounds); i++ {
			want := 2*i + parity
			for spins := 0; turn.Load() != want; spins++ {
				if spins&0xfff == 0 && (abort.Load() || time.Now().After(deadline)) {
					abort.Store(true)
					return
				}
			}
			turn.Store(want + 1)
		}
	}
	ready.Add(2)
	done.Add(2)
	go player(cpus[0], 0)
	go player(cpus[1], 1)
	ready.Wait()
	t0 := time.Now()
	close(start)
	done.Wait()
	took := time.Since(t0)
	if abort.Load() || pinFails.Load() > 0 || rounds <= 0 {
		return 0, false
	}
	return took / time.Duration(rounds), true
}
