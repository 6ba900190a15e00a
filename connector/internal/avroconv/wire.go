package avroconv

import (
	"encoding/binary"
	"math"

	"github.com/streamsql/streamsql/pgerr"
)

// Magic is the first byte of a Confluent-framed message.
const Magic = 0

// HeaderLen is the length of the frame before the Avro body.
const HeaderLen = 5

// SplitFrame returns the schema id and Avro body of a framed message. A
// message too short or without the magic byte is a 22P02 error.
func SplitFrame(msg []byte) (id int, body []byte, err error) {
	if len(msg) < HeaderLen {
		return 0, nil, pgerr.New(pgerr.InvalidTextRepresentation, "not a schema-registry Avro message: %d bytes, shorter than the 5-byte header", len(msg)).
			WithHint("ENCODE AVRO reads messages framed as magic byte 0, a 4-byte schema id, then the Avro body.")
	}
	if msg[0] != Magic {
		return 0, nil, pgerr.New(pgerr.InvalidTextRepresentation, "not a schema-registry Avro message: first byte is 0x%02x, not the magic byte 0", msg[0]).
			WithHint("ENCODE AVRO reads messages framed as magic byte 0, a 4-byte schema id, then the Avro body.")
	}
	return int(binary.BigEndian.Uint32(msg[1:5])), msg[5:], nil
}

// AppendFrame appends the header of a message written with schema id.
func AppendFrame(dst []byte, id int) []byte {
	dst = append(dst, Magic)
	return binary.BigEndian.AppendUint32(dst, uint32(id))
}

// appendLong appends v as Avro's zig-zag varint.
func appendLong(dst []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for u >= 0x80 {
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

// appendBytes appends b with its length (bytes and string).
func appendBytes(dst []byte, b []byte) []byte {
	return append(appendLong(dst, int64(len(b))), b...)
}

func appendFloat(dst []byte, f float32) []byte {
	return binary.LittleEndian.AppendUint32(dst, math.Float32bits(f))
}

func appendDouble(dst []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
}

// in is an Avro binary body being read.
type in struct {
	b []byte
	i int
}

func errTruncated() error {
	return pgerr.New(pgerr.InvalidTextRepresentation, "truncated Avro message")
}

func (d *in) long() (int64, error) {
	var u uint64
	for shift := uint(0); shift < 70; shift += 7 {
		if d.i >= len(d.b) {
			return 0, errTruncated()
		}
		c := d.b[d.i]
		d.i++
		u |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return int64(u>>1) ^ -int64(u&1), nil
		}
	}
	return 0, pgerr.New(pgerr.InvalidTextRepresentation, "malformed Avro varint (more than 10 bytes)")
}

func (d *in) fixed(n int) ([]byte, error) {
	if n < 0 || len(d.b)-d.i < n {
		return nil, errTruncated()
	}
	b := d.b[d.i : d.i+n]
	d.i += n
	return b, nil
}

func (d *in) bytes() ([]byte, error) {
	n, err := d.long()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > int64(len(d.b)-d.i) {
		return nil, errTruncated()
	}
	return d.fixed(int(n))
}

func (d *in) float() (float32, error) {
	b, err := d.fixed(4)
	if err != nil {
		return 0, err
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b)), nil
}

func (d *in) double() (float64, error) {
	b, err := d.fixed(8)
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
}
