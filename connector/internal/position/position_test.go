package position

import (
	"math"
	"reflect"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

func TestRoundTrip(t *testing.T) {
	for _, vals := range [][]uint64{{0}, {1, 2, 3}, {math.MaxUint64, 0, 1 << 40}} {
		pos := Encode(FileV1, vals...)
		got, err := Decode(pos, FileV1, len(vals), "file")
		if err != nil || !reflect.DeepEqual(got, vals) {
			t.Fatalf("Decode(Encode(%v)) = %v, %v", vals, got, err)
		}
	}
}

func TestBadPositions(t *testing.T) {
	good := Encode(NexmarkV1, 300)
	for _, pos := range [][]byte{
		{},
		Encode(DatagenV1, 300),        // another connector
		good[:len(good)-1],            // truncated varint
		append(good, 0),               // trailing byte
		Encode(NexmarkV1),             // too few values
		{NexmarkV1, 0xff, 0xff, 0xff}, // unterminated varint
	} {
		if _, err := Decode(pos, NexmarkV1, 1, "nexmark"); pgerr.CodeOf(err) != pgerr.DataCorrupted {
			t.Errorf("Decode(%x) = %v, want an XX001 error", pos, err)
		}
	}
}

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b []byte
		c    int
		ok   bool
	}{
		{Encode(NexmarkV1, 5), Encode(NexmarkV1, 7), -1, true},
		{Encode(NexmarkV1, 300), Encode(NexmarkV1, 7), 1, true},
		{Encode(FileV1, 9, 1, 0), Encode(FileV1, 9, 2, 1), 0, true},
		{Encode(FileV1, 9, 1, 0), Encode(DatagenV1, 9), 0, false},
		{nil, Encode(DatagenV1, 9), 0, false},
		{[]byte{DatagenV1, 0xff}, Encode(DatagenV1, 9), 0, false},
	} {
		if c, ok := Compare(tc.a, tc.b); c != tc.c || ok != tc.ok {
			t.Errorf("Compare(%x, %x) = %d, %v; want %d, %v", tc.a, tc.b, c, ok, tc.c, tc.ok)
		}
	}
}
