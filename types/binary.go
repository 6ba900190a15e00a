package types

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cockroachdb/apd/v3"
	"github.com/streamsql/streamsql/pgerr"
)

// Binary send/receive in PostgreSQL's formats (big-endian): int2/4/8, float4/8
// IEEE, bool one byte, text-likes and json raw UTF-8, jsonb a version byte 1
// then text, bytea raw, date int32 days since 2000-01-01, time int64 µs,
// timestamp(tz) int64 µs since 2000-01-01, interval int64 µs + int32 days +
// int32 months, numeric base-10000 digits, oid uint32, uuid its 16 bytes,
// arrays array_send's format with the element OID.

func errShortBinary() error {
	return pgerr.New(pgerr.ProtocolViolation, "insufficient data left in message")
}

func errBinaryFormat() error {
	return pgerr.New(pgerr.InvalidBinaryRepresentation, "incorrect binary data format")
}

// AppendBinary appends v's binary send format to dst.
func AppendBinary(dst []byte, v Value, t T) ([]byte, error) {
	be := binary.BigEndian
	bad := func() ([]byte, error) {
		return dst, fmt.Errorf("types: cannot send %T as %s", v, t)
	}
	switch t.Kind {
	case Bool:
		b, ok := v.(bool)
		if !ok {
			return bad()
		}
		if b {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case Int2, Int4, Int8, Oid, RegClass, RegType, RegProc:
		x, ok := asInt64(v)
		if !ok {
			return bad()
		}
		switch t.Kind {
		case Int2:
			return be.AppendUint16(dst, uint16(x)), nil
		case Int8:
			return be.AppendUint64(dst, uint64(x)), nil
		}
		return be.AppendUint32(dst, uint32(x)), nil
	case Float4:
		f, ok := v.(float64)
		if !ok {
			return bad()
		}
		if f != f { // PostgreSQL's NaN payload, keeping the sign
			return be.AppendUint32(dst, math.Float32bits(float32(f))&0x80000000|0x7fc00000), nil
		}
		return be.AppendUint32(dst, math.Float32bits(float32(f))), nil
	case Float8:
		f, ok := v.(float64)
		if !ok {
			return bad()
		}
		if f != f { // PostgreSQL's NaN payload, keeping the sign
			return be.AppendUint64(dst, math.Float64bits(f)&(1<<63)|0x7ff8000000000000), nil
		}
		return be.AppendUint64(dst, math.Float64bits(f)), nil
	case Numeric:
		d := toDecimal(v)
		if _, ok := v.(*apd.Decimal); !ok {
			if _, ok2 := v.(apd.Decimal); !ok2 {
				if _, ok3 := v.(int64); !ok3 {
					return bad()
				}
			}
		}
		return appendNumericBinary(dst, d), nil
	case Bytea:
		b, ok := v.([]byte)
		if !ok {
			return bad()
		}
		return append(dst, b...), nil
	case Date:
		d, ok := v.(DateValue)
		if !ok {
			return bad()
		}
		switch d {
		case DateInfinity, DateMinusInfinity:
			return be.AppendUint32(dst, uint32(int32(d))), nil
		}
		return be.AppendUint32(dst, uint32(int32(d)-pgEpochDays)), nil
	case Time:
		x, ok := v.(TimeValue)
		if !ok {
			return bad()
		}
		return be.AppendUint64(dst, uint64(x)), nil
	case Timestamp, TimestampTZ:
		x, ok := v.(TimestampValue)
		if !ok {
			return bad()
		}
		switch x {
		case TimestampInfinity, TimestampMinusInfinity:
			return be.AppendUint64(dst, uint64(x)), nil
		}
		return be.AppendUint64(dst, uint64(int64(x)-pgEpochMicros)), nil
	case Interval:
		x, ok := v.(IntervalValue)
		if !ok {
			return bad()
		}
		dst = be.AppendUint64(dst, uint64(x.Micros))
		dst = be.AppendUint32(dst, uint32(x.Days))
		return be.AppendUint32(dst, uint32(x.Months)), nil
	case JSONB:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		return append(append(dst, 1), s...), nil
	case UUID:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		return appendUUIDBytes(dst, s)
	case Void:
		return dst, nil
	case Char:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		if s == "" {
			return append(dst, 0), nil // "char" '' is the zero byte
		}
		return append(dst, s[0]), nil
	case Array:
		a, ok := v.([]Value)
		if !ok {
			return bad()
		}
		return appendArrayBinary(dst, a, t)
	case Record:
		r, ok := v.(RowValue)
		if !ok {
			return bad()
		}
		return appendRecordBinary(dst, r, t)
	case Enum: // enum_send: the label
		return appendEnumText(dst, v, t), nil
	default:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		return append(dst, s...), nil
	}
}

// ParseBinary decodes the binary receive format for t, applying t's typmod
// where PostgreSQL's receive functions do.
func ParseBinary(b []byte, t T) (Value, error) {
	be := binary.BigEndian
	need := func(n int) error {
		if len(b) < n {
			return errShortBinary()
		}
		if len(b) > n {
			return errBinaryFormat()
		}
		return nil
	}
	switch t.Kind {
	case Bool:
		if err := need(1); err != nil {
			return nil, err
		}
		return b[0] != 0, nil
	case Int2:
		if err := need(2); err != nil {
			return nil, err
		}
		return int64(int16(be.Uint16(b))), nil
	case Int4:
		if err := need(4); err != nil {
			return nil, err
		}
		return int64(int32(be.Uint32(b))), nil
	case Int8:
		if err := need(8); err != nil {
			return nil, err
		}
		return int64(be.Uint64(b)), nil
	case Oid, RegClass, RegType, RegProc:
		if err := need(4); err != nil {
			return nil, err
		}
		return int64(be.Uint32(b)), nil
	case Float4:
		if err := need(4); err != nil {
			return nil, err
		}
		return float64(math.Float32frombits(be.Uint32(b))), nil
	case Float8:
		if err := need(8); err != nil {
			return nil, err
		}
		return math.Float64frombits(be.Uint64(b)), nil
	case Numeric:
		d, err := parseNumericBinary(b)
		if err != nil {
			return nil, err
		}
		if err := applyNumericTypmod(d, t.Typmod); err != nil {
			return nil, err
		}
		return d, nil
	case Bytea:
		return append([]byte(nil), b...), nil
	case Date:
		if err := need(4); err != nil {
			return nil, err
		}
		d := int32(be.Uint32(b))
		switch DateValue(d) {
		case DateInfinity, DateMinusInfinity:
			return DateValue(d), nil
		}
		v := int64(d) + pgEpochDays
		if v < minDate || v > maxDate {
			return nil, pgerr.New(pgerr.DatetimeFieldOverflow, "date out of range")
		}
		return DateValue(v), nil
	case Time:
		if err := need(8); err != nil {
			return nil, err
		}
		x := int64(be.Uint64(b))
		if x < 0 || x > usPerDay {
			return nil, pgerr.New(pgerr.DatetimeFieldOverflow, "time out of range")
		}
		return TimeValue(roundMicros(x, t.Typmod)), nil
	case Timestamp, TimestampTZ:
		if err := need(8); err != nil {
			return nil, err
		}
		x := int64(be.Uint64(b))
		switch TimestampValue(x) {
		case TimestampInfinity, TimestampMinusInfinity:
			return TimestampValue(x), nil
		}
		v := roundTS(x+pgEpochMicros, t.Typmod)
		if x > math.MaxInt64-pgEpochMicros || v < minTimestamp || v > maxTimestamp {
			return nil, pgerr.New(pgerr.DatetimeFieldOverflow, "timestamp out of range")
		}
		return TimestampValue(v), nil
	case Interval:
		if err := need(16); err != nil {
			return nil, err
		}
		v := IntervalValue{Micros: int64(be.Uint64(b)), Days: int32(be.Uint32(b[8:])), Months: int32(be.Uint32(b[12:]))}
		return adjustInterval(v, t.Typmod), nil
	case JSONB:
		if len(b) < 1 {
			return nil, errShortBinary()
		}
		if b[0] != 1 {
			return nil, pgerr.New(pgerr.InvalidBinaryRepresentation, "unsupported jsonb version number %d", b[0])
		}
		return ParseText(string(b[1:]), t, nil)
	case Void:
		return nil, nil
	case Char: // charrecv: one byte, any value
		if err := need(1); err != nil {
			return nil, err
		}
		if b[0] == 0 {
			return "", nil
		}
		return string(b), nil
	case Array:
		return parseArrayBinary(b, t)
	case Record:
		return nil, errRecordInput()
	case Enum: // enum_recv: the label
		return parseEnum(string(b), t)
	case UUID: // uuid_recv: the 16 bytes
		if err := need(16); err != nil {
			return nil, err
		}
		return uuidText(b[:16]), nil
	default: // text-likes and json: the text itself, with the typmod rules
		return ParseText(string(b), t, nil)
	}
}

// appendArrayBinary writes array_send's format: ndim, has-nulls flag,
// element OID, (length, lower bound 1) per dimension, then each element as
// int32 length (-1 for NULL) and bytes.
func appendArrayBinary(dst []byte, a []Value, t T) ([]byte, error) {
	be := binary.BigEndian
	var dims []int
	for cur := a; ; {
		dims = append(dims, len(cur))
		if len(cur) == 0 {
			break
		}
		sub, ok := cur[0].([]Value)
		if !ok {
			break
		}
		cur = sub
	}
	if len(a) == 0 {
		dims = nil
	}
	hasNull := false
	var flat []Value
	var walk func(v []Value, d int) error
	walk = func(v []Value, d int) error {
		if len(v) != dims[d] {
			return pgerr.New(pgerr.InvalidTextRepresentation, "multidimensional arrays must have array expressions with matching dimensions")
		}
		for _, e := range v {
			if d+1 < len(dims) {
				sub, ok := e.([]Value)
				if !ok {
					return pgerr.New(pgerr.InvalidTextRepresentation, "multidimensional arrays must have array expressions with matching dimensions")
				}
				if err := walk(sub, d+1); err != nil {
					return err
				}
				continue
			}
			if e == nil {
				hasNull = true
			}
			flat = append(flat, e)
		}
		return nil
	}
	if len(dims) > 0 {
		if err := walk(a, 0); err != nil {
			return dst, err
		}
	}
	dst = be.AppendUint32(dst, uint32(len(dims)))
	if hasNull {
		dst = be.AppendUint32(dst, 1)
	} else {
		dst = be.AppendUint32(dst, 0)
	}
	dst = be.AppendUint32(dst, t.Elem.OID())
	for _, n := range dims {
		dst = be.AppendUint32(dst, uint32(n))
		dst = be.AppendUint32(dst, 1)
	}
	for _, e := range flat {
		if e == nil {
			dst = be.AppendUint32(dst, 0xFFFFFFFF)
			continue
		}
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		var err error
		if dst, err = AppendBinary(dst, e, *t.Elem); err != nil {
			return dst, err
		}
		be.PutUint32(dst[at:], uint32(len(dst)-at-4))
	}
	return dst, nil
}

func parseArrayBinary(b []byte, t T) (Value, error) {
	be := binary.BigEndian
	if len(b) < 12 {
		return nil, errShortBinary()
	}
	ndim := int(int32(be.Uint32(b)))
	elemOID := be.Uint32(b[8:])
	b = b[12:]
	if ndim < 0 || ndim > 6 {
		return nil, pgerr.New(pgerr.InvalidBinaryRepresentation, "invalid number of dimensions: %d", ndim)
	}
	if elemOID != t.Elem.OID() {
		return nil, pgerr.New(pgerr.DatatypeMismatch, "binary data has array element type %d (%s) instead of expected %d (%s)",
			elemOID, oidName(elemOID), t.Elem.OID(), t.Elem.String())
	}
	if len(b) < 8*ndim {
		return nil, errShortBinary()
	}
	dims := make([]int, ndim)
	total := 1
	for i := range dims {
		n := int(int32(be.Uint32(b[8*i:])))
		if n < 0 || n > 1<<27 {
			return nil, pgerr.New(pgerr.ProgramLimitExceeded, "array size exceeds the maximum allowed")
		}
		dims[i] = n
		total *= n
	}
	b = b[8*ndim:]
	if ndim == 0 {
		return []Value{}, nil
	}
	flat := make([]Value, total)
	for i := range flat {
		if len(b) < 4 {
			return nil, errShortBinary()
		}
		n := int32(be.Uint32(b))
		b = b[4:]
		if n == -1 {
			continue
		}
		if n < 0 || int(n) > len(b) {
			return nil, errShortBinary()
		}
		v, err := ParseBinary(b[:n], *t.Elem)
		if err != nil {
			return nil, err
		}
		flat[i] = v
		b = b[n:]
	}
	if len(b) != 0 {
		return nil, errBinaryFormat()
	}
	var build func(d int) []Value
	pos := 0
	build = func(d int) []Value {
		out := make([]Value, dims[d])
		for i := range out {
			if d+1 < len(dims) {
				out[i] = build(d + 1)
			} else {
				out[i] = flat[pos]
				pos++
			}
		}
		return out
	}
	return build(0), nil
}

func oidName(oid uint32) string {
	if t, ok := FromOID(oid); ok {
		return t.String()
	}
	return "-"
}
