package types

import (
	"strings"
	"testing"
)

// TestRandomUUID: gen_random_uuid's values are version 4, RFC 4122
// variant, canonical, read back as themselves, and differ.
func TestRandomUUID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		u := RandomUUID()
		if len(u) != 36 || u[14] != '4' || !strings.ContainsRune("89ab", rune(u[19])) {
			t.Fatalf("not a version 4 uuid: %s", u)
		}
		if back, err := ParseUUID(u); err != nil || back != u {
			t.Fatalf("%s reads back as %q, %v", u, back, err)
		}
		if seen[u] {
			t.Fatalf("%s twice", u)
		}
		seen[u] = true
	}
}

// TestUUIDBinaryRefusesBadValues: a value not in the canonical form (a
// stored value is always canonical) is refused, not sent as wrong bytes;
// a receive of other than 16 bytes is refused.
func TestUUIDBinaryRefusesBadValues(t *testing.T) {
	for _, s := range []string{"", "a0eebc99", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1g", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1100"} {
		if b, err := AppendBinary(nil, s, TUUID); err == nil {
			t.Errorf("%q sent as %x", s, b)
		}
	}
	for _, n := range []int{0, 15, 17} {
		if v, err := ParseBinary(make([]byte, n), TUUID); err == nil {
			t.Errorf("%d bytes received as %v", n, v)
		}
	}
}
