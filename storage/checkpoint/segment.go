package checkpoint

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Record kinds inside a frame.
const (
	recPut    byte = 1
	recDelete byte = 2
	recReset  byte = 3
)

const (
	frameHeaderLen = 8
	// frameTarget is the payload size at which an OpWriter appends a frame.
	frameTarget = 1 << 20
	// maxFrame bounds a frame's length field so that a corrupt length is
	// never taken for a huge allocation (a single record may exceed
	// frameTarget; one larger than this is refused when written).
	maxFrame = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errCorrupt is wrapped by every error about a segment or manifest whose
// bytes are not what was written.
var errCorrupt = errors.New("checkpoint: corrupt")

// appendRecord appends one record to a frame payload.
func appendRecord(buf []byte, kind byte, key, value []byte) []byte {
	buf = append(buf, kind)
	if kind == recReset {
		return buf
	}
	buf = binary.AppendUvarint(buf, uint64(len(key)))
	buf = append(buf, key...)
	if kind == recPut {
		buf = binary.AppendUvarint(buf, uint64(len(value)))
		buf = append(buf, value...)
	}
	return buf
}

// startPayload begins a frame: room for the header, then the operator id.
func startPayload(buf []byte, op string) []byte {
	buf = append(buf[:0], make([]byte, frameHeaderLen)...)
	buf = binary.AppendUvarint(buf, uint64(len(op)))
	return append(buf, op...)
}

// sealFrame fills in the header of a frame built by startPayload.
func sealFrame(frame []byte) {
	payload := frame[frameHeaderLen:]
	binary.LittleEndian.PutUint32(frame[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(frame[4:], crc32.Checksum(payload, castagnoli))
}

// applyFn receives one record of operator op; rec is the whole record as
// encoded. key, value and rec alias the frame, which is not reused, so they
// may be kept.
type applyFn func(op string, kind byte, key, value, rec []byte)

// readSegment reads every frame of r (size bytes in all), checking each
// frame's CRC, and calls fn for each record in order. Any mismatch (a short
// file, a bad CRC, a malformed record) is an error wrapping errCorrupt.
func readSegment(r io.Reader, size int64, fn applyFn) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var hdr [frameHeaderLen]byte
	var off int64
	for off < size {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return fmt.Errorf("%w: frame header at %d: %v", errCorrupt, off, err)
		}
		n := binary.LittleEndian.Uint32(hdr[0:])
		sum := binary.LittleEndian.Uint32(hdr[4:])
		if n > maxFrame || off+frameHeaderLen+int64(n) > size {
			return fmt.Errorf("%w: frame at %d has length %d past the segment's end", errCorrupt, off, n)
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(br, payload); err != nil {
			return fmt.Errorf("%w: frame at %d: %v", errCorrupt, off, err)
		}
		if crc32.Checksum(payload, castagnoli) != sum {
			return fmt.Errorf("%w: frame at %d: CRC mismatch", errCorrupt, off)
		}
		if err := decodePayload(payload, fn); err != nil {
			return fmt.Errorf("frame at %d: %w", off, err)
		}
		off += frameHeaderLen + int64(n)
	}
	return nil
}

// decodePayload calls fn for each record of one frame's payload.
func decodePayload(p []byte, fn applyFn) error {
	opLen, k := binary.Uvarint(p)
	if k <= 0 || uint64(len(p)-k) < opLen {
		return fmt.Errorf("%w: bad operator id", errCorrupt)
	}
	op := string(p[k : k+int(opLen)])
	return walkRecords(p[k+int(opLen):], func(kind byte, key, value, rec []byte) {
		fn(op, kind, key, value, rec)
	})
}

// walkRecords calls fn for each record of a frame's body (the payload
// after the operator id), with the record's bytes.
func walkRecords(p []byte, fn func(kind byte, key, value, rec []byte)) error {
	for len(p) > 0 {
		start := p
		kind := p[0]
		p = p[1:]
		switch kind {
		case recReset:
			fn(kind, nil, nil, start[:1])
			continue
		case recPut, recDelete:
		default:
			return fmt.Errorf("%w: unknown record kind %d", errCorrupt, kind)
		}
		key, rest, ok := cutBytes(p)
		if !ok {
			return fmt.Errorf("%w: truncated key", errCorrupt)
		}
		p = rest
		var value []byte
		if kind == recPut {
			if value, p, ok = cutBytes(p); !ok {
				return fmt.Errorf("%w: truncated value", errCorrupt)
			}
		}
		fn(kind, key, value, start[:len(start)-len(p)])
	}
	return nil
}

// cutBytes splits a uvarint-length-prefixed byte string off p.
func cutBytes(p []byte) (b, rest []byte, ok bool) {
	n, k := binary.Uvarint(p)
	if k <= 0 || uint64(len(p)-k) < n {
		return nil, nil, false
	}
	end := k + int(n)
	return p[k:end:end], p[end:], true
}
