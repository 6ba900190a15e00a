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

func TestOffsets(t *testing.T) {
	m := map[int32]int64{3: 7, 0: 1 << 40, 1: 0}
	pos := EncodeOffsets(m)
	got, err := DecodeOffsets(pos)
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("DecodeOffsets(EncodeOffsets(%v)) = %v, %v", m, got, err)
	}
	for _, bad := range [][]byte{nil, {KafkaV1}, pos[:len(pos)-1], append(pos, 0), Encode(KafkaV1, 2, 0, 1, 0, 2),
		Encode(KafkaV1, 1, 1<<33, 1), Encode(FileV1, 1, 0, 0)} {
		if _, err := DecodeOffsets(bad); pgerr.CodeOf(err) != pgerr.DataCorrupted {
			t.Errorf("DecodeOffsets(%x) = %v, want XX001", bad, err)
		}
	}
	at := func(m map[int32]int64) []byte { return EncodeOffsets(m) }
	for _, tc := range []struct {
		a, b map[int32]int64
		c    int
		ok   bool
	}{
		{map[int32]int64{0: 1, 1: 2}, map[int32]int64{0: 1, 1: 2}, 0, true},
		{map[int32]int64{0: 1, 1: 2}, map[int32]int64{0: 1, 1: 3}, -1, true},
		{map[int32]int64{0: 1}, map[int32]int64{0: 1, 1: 3}, -1, true},
		{map[int32]int64{0: 1}, map[int32]int64{0: 1, 1: 0}, 0, true},
		{map[int32]int64{0: 2, 1: 2}, map[int32]int64{0: 1, 1: 2}, 1, true},
		{map[int32]int64{0: 2, 1: 1}, map[int32]int64{0: 1, 1: 2}, 0, false},
	} {
		if c, ok := Compare(at(tc.a), at(tc.b)); c != tc.c || ok != tc.ok {
			t.Errorf("Compare(%v, %v) = %d, %v; want %d, %v", tc.a, tc.b, c, ok, tc.c, tc.ok)
		}
	}
}

func TestReached(t *testing.T) {
	k := func(m map[int32]int64) []byte { return EncodeOffsets(m) }
	for _, tc := range []struct {
		a, b []byte
		want bool
	}{
		{k(map[int32]int64{0: 2, 1: 1}), k(map[int32]int64{0: 1, 1: 2}), false}, // not comparable, behind in 1
		{k(map[int32]int64{0: 2, 1: 2}), k(map[int32]int64{0: 1, 1: 2}), true},
		{k(map[int32]int64{0: 2}), k(map[int32]int64{0: 1, 1: 2}), false},
		{Encode(NexmarkV1, 5), Encode(NexmarkV1, 7), false},
		{Encode(NexmarkV1, 7), Encode(NexmarkV1, 7), true},
		{Encode(NexmarkV1, 7), Encode(DatagenV1, 9), true},
	} {
		if got := Reached(tc.a, tc.b); got != tc.want {
			t.Errorf("Reached(%x, %x) = %v", tc.a, tc.b, got)
		}
	}
}
