package bench

import (
	"runtime/metrics"
	"sync"
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the process's peak resident set size in bytes (Linux reports
// ru_maxrss in KiB).
func peakRSS() uint64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return uint64(ru.Maxrss) * 1024
}

const (
	heapObjects = "/memory/classes/heap/objects:bytes"
	heapLive    = "/gc/heap/live:bytes"
)

func readMetric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// liveHeap is the heap marked live by the last GC.
func liveHeap() uint64 { return readMetric(heapLive) }

// heapSampleEvery is how often startHeapSampler looks at the heap; reading
// the metric does not stop the world.
const heapSampleEvery = 2 * time.Millisecond

// startHeapSampler samples the heap's object bytes until the returned stop
// function is called; stop returns the highest sample.
func startHeapSampler() (stop func() uint64) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var peak uint64
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(heapSampleEvery)
		defer t.Stop()
		s := []metrics.Sample{{Name: heapObjects}}
		for {
			metrics.Read(s)
			if s[0].Value.Kind() == metrics.KindUint64 {
				peak = max(peak, s[0].Value.Uint64())
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return func() uint64 {
		once.Do(func() { close(done); wg.Wait() })
		return peak
	}
}
