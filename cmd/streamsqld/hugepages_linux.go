//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// Huge pages for the Go heap (--huge-pages on).
//
// A streaming view's state grows into fresh memory, and every 4 KiB page of
// it costs a page fault when first touched: on virtual machines a fault is
// several microseconds, a third of the CPU of q18, q19 and q20 at one core.
// With transparent huge pages in "madvise" mode (the kernel's
// /sys/kernel/mm/transparent_hugepage/enabled, a common default) a region
// gets 2 MiB pages only when the process asks with madvise(MADV_HUGEPAGE),
// and the Go runtime does not ask for its heap since Go 1.21.1. This asks:
//
//   - at start, the heap is grown by reserve bytes (one transient
//     allocation, never touched, so no page is faulted), that range is
//     advised, and the allocation is dropped and returned to the runtime
//     (debug.FreeOSMemory). The runtime allocates from the lowest free
//     addresses first, so the heap's next reserve bytes fault as 2 MiB
//     pages (512 times fewer faults; the zeroing stays);
//   - afterwards a watcher advises the anonymous mappings the heap grew
//     into (runtime/metrics' mapped total, /proc/self/maps), late by up to
//     a tick: their untouched 2 MiB ranges fault as huge pages from then.
//
// The cost is memory: a huge page is backed whole, and the kernel's
// khugepaged may later refill a 2 MiB range the runtime's scavenger
// returned in part (with its default max_ptes_none), so the resident set
// can stay near its high-water mark instead of shrinking, beyond what the
// Go runtime counts. On by default all the same (--huge-pages=false turns
// it off): on virtual machines the faults cost streaming views a third of
// their CPU or more, and limit what a second core gives (docs/benchmarks.md,
// "Huge pages by default").

// hugePagesMode is the kernel's transparent huge page mode: the bracketed
// word of /sys/kernel/mm/transparent_hugepage/enabled ("always", "madvise",
// "never"), or "" when it cannot be read.
func hugePagesMode() string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return ""
	}
	return thpModeOf(string(b))
}

// thpModeOf parses the contents of the enabled file.
func thpModeOf(s string) string {
	i := strings.IndexByte(s, '[')
	j := strings.IndexByte(s, ']')
	if i < 0 || j < i {
		return ""
	}
	return s[i+1 : j]
}

// hugeReserve is the heap advised at start (virtual memory: none of it is
// touched until the heap grows into it).
const hugeReserve = 2 << 30

const (
	hugePageSize   = 2 << 20
	madviseHuge    = 14 // MADV_HUGEPAGE
	hugeWatchTick  = 50 * time.Millisecond
	hugeWatchGrown = 16 << 20 // mapped growth that makes the watcher look
)

// adviseHuge advises the 2 MiB-aligned part of [p, p+n) as huge pages.
func adviseHuge(p, n uintptr) error {
	beg := (p + hugePageSize - 1) &^ (hugePageSize - 1)
	end := (p + n) &^ (hugePageSize - 1)
	if beg >= end {
		return nil
	}
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, beg, end-beg, madviseHuge); e != 0 {
		return fmt.Errorf("madvise(MADV_HUGEPAGE): %w", e)
	}
	return nil
}

// startHugePages applies --huge-pages on: it advises reserve bytes of new
// heap and starts the watcher, which stops with ctx. It returns why it did
// nothing (the kernel's mode is not madvise) as an error, and nil when the
// mode is "always" (huge pages already).
func startHugePages(ctx context.Context, reserve int) error {
	switch m := hugePagesMode(); m {
	case "always":
		return nil
	case "madvise":
	default:
		return fmt.Errorf("transparent huge pages are %q on this kernel, not madvise or always: the heap keeps 4 KiB pages (--huge-pages has no effect)", m)
	}
	reserve = min(reserve, hugeReserveCap())
	if reserve > 0 {
		b := make([]byte, reserve)
		err := adviseHuge(uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
		b = nil
		debug.FreeOSMemory() // the range goes back, untouched, as released memory
		if err != nil {
			return err
		}
	}
	go watchHugePages(ctx)
	return nil
}

// hugeReserveCap bounds the start's reserve: a quarter of the machine's
// memory, and none when the kernel commits memory strictly
// (vm.overcommit_memory 2), where the untouched reserve would count.
func hugeReserveCap() int {
	if b, err := os.ReadFile("/proc/sys/vm/overcommit_memory"); err != nil || strings.TrimSpace(string(b)) == "2" {
		return 0
	}
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	return int(min(uint64(si.Totalram)*uint64(si.Unit)/4, 1<<40))
}

// watchHugePages advises the process's anonymous mappings each time the
// runtime's mapped memory has grown by hugeWatchGrown, until ctx ends.
func watchHugePages(ctx context.Context) {
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	var last uint64
	t := time.NewTicker(hugeWatchTick)
	defer t.Stop()
	for {
		metrics.Read(sample)
		if now := sample[0].Value.Uint64(); now >= last+hugeWatchGrown {
			last = now
			if b, err := os.ReadFile("/proc/self/maps"); err == nil {
				for _, r := range anonMappings(b, 2*hugePageSize) {
					_ = adviseHuge(r[0], r[1]-r[0]) // best effort: a mapping may have changed since
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// anonMappings returns the [start, end) of the private, writable,
// anonymous mappings of a /proc/<pid>/maps text that are at least min
// bytes: the Go heap's (and, advised alike, the runtime's own metadata);
// not stacks, the vdso or file mappings.
func anonMappings(maps []byte, min uintptr) [][2]uintptr {
	var out [][2]uintptr
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// address perms offset dev inode [path]
		if len(f) < 5 || f[1] != "rw-p" || f[4] != "0" {
			continue
		}
		if len(f) > 5 && !strings.HasPrefix(f[5], "[anon:") {
			continue // [stack], [heap], [vvar] and files
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || b <= a || uintptr(b-a) < min {
			continue
		}
		out = append(out, [2]uintptr{uintptr(a), uintptr(b)})
	}
	return out
}
