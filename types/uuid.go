package types

import (
	"crypto/rand"

	"github.com/streamsql/streamsql/pgerr"
)

// uuid values are kept as their canonical text: 32 lower-case hex digits
// in groups of 8-4-4-4-12 joined by hyphens. Comparing that text byte by
// byte orders uuids as PostgreSQL's uuid_cmp orders their 16 bytes, so
// hashing, grouping, joins and sorting treat uuid as any string.

// ParseUUID is uuid_in: 32 hex digits (either case), optionally a hyphen
// after any group of four of them (not after the last), the whole
// optionally in braces; nothing else, not even spaces. It returns the
// canonical text; bad input is 22P02.
func ParseUUID(s string) (string, error) {
	b, err := decodeUUID(s)
	if err != nil {
		return "", err
	}
	return uuidText(b[:]), nil
}

// decodeUUID is uuid_in's reading of s (ParseUUID) into the 16 bytes.
func decodeUUID(s string) ([16]byte, error) {
	var b [16]byte
	src := s
	braces := len(src) > 0 && src[0] == '{'
	if braces {
		src = src[1:]
	}
	for i := range b {
		if len(src) < 2 {
			return b, badUUID(s)
		}
		hi, ok1 := unhex(src[0])
		lo, ok2 := unhex(src[1])
		if !ok1 || !ok2 {
			return b, badUUID(s)
		}
		b[i] = hi<<4 | lo
		src = src[2:]
		if len(src) > 0 && src[0] == '-' && i%2 == 1 && i < len(b)-1 {
			src = src[1:]
		}
	}
	if braces {
		if len(src) == 0 || src[0] != '}' {
			return b, badUUID(s)
		}
		src = src[1:]
	}
	if src != "" {
		return b, badUUID(s)
	}
	return b, nil
}

func badUUID(s string) error {
	return pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type uuid: \"%s\"", s)
}

// uuidText is the canonical text of 16 bytes.
func uuidText(b []byte) string { return string(AppendUUIDText(make([]byte, 0, 36), b)) }

// AppendUUIDText appends the canonical text of the uuid of 16 bytes b.
func AppendUUIDText(dst, b []byte) []byte {
	for i, x := range b[:16] {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hexDigits[x>>4], hexDigits[x&15])
	}
	return dst
}

// appendUUIDBytes appends the 16 bytes of a uuid's text (uuid_send).
func appendUUIDBytes(dst []byte, s string) ([]byte, error) {
	b, err := decodeUUID(s)
	if err != nil {
		return nil, err
	}
	return append(dst, b[:]...), nil
}

// RandomUUID is gen_random_uuid(): a version 4 (random) uuid's text.
func RandomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])  // crypto/rand.Read never fails (Go 1.24+)
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // the RFC 4122 variant
	return uuidText(b[:])
}
