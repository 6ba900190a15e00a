package dist

import (
	"errors"
	"fmt"
	"testing"

	"github.com/streamsql/streamsql/exec/stream"
)

// TestStateEncoding: what stateWriter writes, DecodeState reads back
// (puts in order; deletes and resets skipped); truncated bytes fail.
func TestStateEncoding(t *testing.T) {
	var w stateWriter
	w.Reset()
	var want []string
	for i := range 300 {
		k, v := fmt.Appendf(nil, "key%d", i), make([]byte, i)
		w.Put(k, v)
		want = append(want, fmt.Sprintf("%s=%d", k, len(v)))
		if i%7 == 0 {
			w.Delete(k)
		}
	}
	var got []string
	if err := DecodeState(w.buf, func(k, v []byte) { got = append(got, fmt.Sprintf("%s=%d", k, len(v))) }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("decoded %d records, wrote %d", len(got), len(want))
	}
	for _, cut := range []int{1, 5, len(w.buf) / 2, len(w.buf) - 1} {
		if err := DecodeState(w.buf[:cut], func(_, _ []byte) {}); !errors.Is(err, errBadState) && cut != 1 {
			t.Fatalf("%d of %d bytes: %v", cut, len(w.buf), err)
		}
	}
	if err := DecodeState([]byte{'X'}, func(_, _ []byte) {}); !errors.Is(err, errBadState) {
		t.Fatalf("unknown record: %v", err)
	}
}

// TestInstanceVNodes: an instance's object range is exactly the vnodes
// stream.VNodeOwner gives it.
func TestInstanceVNodes(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 7, 256} {
		for k := range n {
			lo, hi := instanceVNodes(k, n)
			for v := range stream.VNodes {
				if (stream.VNodeOwner(uint16(v), n) == k) != (v >= lo && v <= hi) {
					t.Fatalf("n=%d k=%d: vnode %d and range %d-%d", n, k, v, lo, hi)
				}
			}
		}
	}
}
