//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestTHPModeOf(t *testing.T) {
	for in, want := range map[string]string{
		"always [madvise] never\n": "madvise",
		"[always] madvise never\n": "always",
		"always madvise [never]\n": "never",
		"":                         "",
		"garbage]":                 "",
	} {
		if got := thpModeOf(in); got != want {
			t.Errorf("thpModeOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAnonMappings(t *testing.T) {
	maps := `00400000-01e00000 r-xp 00000000 08:01 1234 /usr/bin/streamsqld
c000000000-c004000000 rw-p 00000000 00:00 0
c004000000-c004100000 rw-p 00000000 00:00 0
7f0000000000-7f0004000000 rw-p 00000000 00:00 0 [anon:Go: heap]
7f1000000000-7f1004000000 rw-p 00000000 08:01 99 /tmp/file
7f2000000000-7f2004000000 r--p 00000000 00:00 0
7ffd00000000-7ffd04000000 rw-p 00000000 00:00 0 [stack]
`
	got := anonMappings([]byte(maps), 2*hugePageSize)
	want := [][2]uintptr{{0xc000000000, 0xc004000000}, {0x7f0000000000, 0x7f0004000000}}
	if len(got) != len(want) {
		t.Fatalf("anonMappings = %x, want %x", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("anonMappings = %x, want %x", got, want)
		}
	}
}

// hugeBytes is the AnonHugePages of the mapping of /proc/self/smaps that
// holds address p.
func hugeBytes(t *testing.T, p uintptr) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	in := false
	for sc.Scan() {
		l := sc.Text()
		f := strings.Fields(l)
		if len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			lo, hi, _ := strings.Cut(f[0], "-")
			a, _ := strconv.ParseUint(lo, 16, 64)
			z, _ := strconv.ParseUint(hi, 16, 64)
			in = uintptr(a) <= p && p < uintptr(z)
			continue
		}
		if in && len(f) >= 2 && f[0] == "AnonHugePages:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatalf("no mapping holds %x", p)
	return 0
}

// TestStartHugePages checks that heap grown after startHugePages is backed
// by huge pages, in the kernel mode where that needs asking (madvise). It
// fails without the advice: the heap's mappings then get none.
func TestStartHugePages(t *testing.T) {
	if m := hugePagesMode(); m != "madvise" {
		t.Skipf("transparent huge pages are %q here, not madvise", m)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := startHugePages(ctx, 256<<20); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 64<<20) // grows into the advised reserve
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	if h := hugeBytes(t, uintptr(unsafe.Pointer(&b[len(b)/2]))); h < 16<<20 {
		t.Fatalf("a touched 64 MiB allocation has %d bytes of huge pages, want most of it", h)
	}
}
