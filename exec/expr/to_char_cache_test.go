package expr

import (
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/cockroachdb/apd/v3"
)

// TestToCharCachedTemplates formats the same values with each template
// twice (the first call compiles it, the second reads the cache) from
// several goroutines at once, and requires every result to match.
func TestToCharCachedTemplates(t *testing.T) {
	p := tsParts(1715089512345678) // 2024-05-07 13:45:12.345678
	dt := []string{"YYYY-MM-DD", "HH24:MI", "HH:mm", `FMDDth "of" FMMonth, YYYY \"x\" FMHH12 am`, "FM", "IYYY-IW-ID US", "Y,YYY ddd"}
	num := []string{"9,999.99", "FM999", "S9999", "9.99EEEE", "RN", "99V99", "9999PR"}
	want := map[string]string{}
	for _, f := range dt {
		s, err := toCharDT(p, f)
		if err != nil {
			t.Fatalf("%q: %v", f, err)
		}
		want["dt "+f] = s
	}
	for _, f := range num {
		s, err := toCharNumber(apd.New(-123456, 2), f)
		if err != nil {
			t.Fatalf("%q: %v", f, err)
		}
		want["num "+f] = s
		if s, err = toCharFloat(-1234.56, f, 15); err != nil {
			t.Fatalf("%q: %v", f, err)
		}
		want["float "+f] = s
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				for _, f := range dt {
					if s, _ := toCharDT(p, f); s != want["dt "+f] {
						errs <- fmt.Sprintf("dt %q: %q, want %q", f, s, want["dt "+f])
						return
					}
				}
				for _, f := range num {
					if s, _ := toCharNumber(apd.New(-123456, 2), f); s != want["num "+f] {
						errs <- fmt.Sprintf("num %q: %q, want %q", f, s, want["num "+f])
						return
					}
					if s, _ := toCharFloat(-1234.56, f, 15); s != want["float "+f] {
						errs <- fmt.Sprintf("float %q: %q, want %q", f, s, want["float "+f])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got, want := want["dt YYYY-MM-DD"], "2024-05-07"; got != want {
		t.Errorf("YYYY-MM-DD: %q, want %q", got, want)
	}
	if got, want := want[`dt FMDDth "of" FMMonth, YYYY \"x\" FMHH12 am`], `7th of May, 2024 "x" 1 pm`; got != want {
		t.Errorf("quoted: %q, want %q", got, want)
	}
}

// TestToCharCacheOwnsItsKeys reads a template from a byte buffer (as a
// string read from an Arrow array shares the array's buffer, released
// after the batch): neither the cached key nor the string compiled (whose
// substrings the nodes keep) may point into it.
func TestToCharCacheOwnsItsKeys(t *testing.T) {
	buf := []byte("HH24 \"q\" MI th")
	f := unsafe.String(&buf[0], len(buf))
	var c fmtCache[[]dchNode]
	inBuf := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		lo := uintptr(unsafe.Pointer(&buf[0]))
		return p >= lo && p < lo+uintptr(len(buf))
	}
	if _, err := c.get(f, func(g string) ([]dchNode, error) {
		if inBuf(g) {
			t.Error("compile was given the caller's buffer")
		}
		return dchCompile(g)
	}); err != nil {
		t.Fatal(err)
	}
	c.m.Range(func(k, _ any) bool {
		if inBuf(k.(string)) {
			t.Error("the cached key points into the caller's buffer")
		}
		return true
	})
}

// TestToCharCacheBounded fills the cache past its bound and checks it
// holds at most fmtCacheMax templates and still formats correctly.
func TestToCharCacheBounded(t *testing.T) {
	var c fmtCache[[]dchNode]
	for i := 0; i < fmtCacheMax*2+7; i++ {
		if _, err := c.get(fmt.Sprintf("YYYY %d", i), dchCompile); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	c.m.Range(func(any, any) bool { n++; return true })
	if n == 0 || n > fmtCacheMax {
		t.Fatalf("cache holds %d templates, want 1..%d", n, fmtCacheMax)
	}
	nodes, _ := c.get("YYYY 3", dchCompile)
	if len(nodes) != 2 || nodes[0].id != "YYYY" || nodes[1].lit != " 3" {
		t.Fatalf("compiled %+v", nodes)
	}
}
