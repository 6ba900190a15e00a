package datagen

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/types"
)

// array generates rows [row0, row0+n) of the column as an Arrow array of
// the column type's storage.
func (f *field) array(row0 int64, n int) arrow.Array {
	validity, nulls := f.validity(row0, n)
	var data []*memory.Buffer
	switch f.st {
	case stInt:
		switch f.t.Kind {
		case types.Int2:
			v := make([]int16, n)
			fillInts(f, v, row0)
			data = []*memory.Buffer{memory.NewBufferBytes(arrow.Int16Traits.CastToBytes(v))}
		case types.Int4, types.Date:
			v := make([]int32, n)
			fillInts(f, v, row0)
			data = []*memory.Buffer{memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(v))}
		default:
			v := make([]int64, n)
			fillInts(f, v, row0)
			data = []*memory.Buffer{memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(v))}
		}
	case stFloat:
		if f.t.Kind == types.Float4 {
			v := make([]float32, n)
			fillFloats(f, v, row0)
			data = []*memory.Buffer{memory.NewBufferBytes(arrow.Float32Traits.CastToBytes(v))}
		} else {
			v := make([]float64, n)
			fillFloats(f, v, row0)
			data = []*memory.Buffer{memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(v))}
		}
	case stBool:
		data = []*memory.Buffer{memory.NewBufferBytes(f.bools01(row0, n))}
	case stInterval:
		v := make([]arrow.MonthDayNanoInterval, n)
		f.fillIntervals(v, row0)
		data = []*memory.Buffer{memory.NewBufferBytes(arrow.MonthDayNanoIntervalTraits.CastToBytes(v))}
	default: // stNumeric, stText, stPick, stUUID
		offs, bytes := f.strings(row0, n)
		data = []*memory.Buffer{memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offs)), memory.NewBufferBytes(bytes)}
	}
	d := array.NewData(f.t.ArrowType(), n, append([]*memory.Buffer{validity}, data...), nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// validity is the NULL bitmap of rows [row0, row0+n) (nil when none are NULL).
func (f *field) validity(row0 int64, n int) (*memory.Buffer, int) {
	if f.nullCut == 0 {
		return nil, 0
	}
	bits := make([]byte, bitutil.BytesForBits(int64(n)))
	nulls := 0
	for i := range n {
		if f.nullCut == math.MaxUint64 || rowRand(f.nullSeed, row0+int64(i)) < f.nullCut {
			nulls++
		} else {
			bitutil.SetBit(bits, i)
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	return memory.NewBufferBytes(bits), nulls
}

// fillInts fills integer-domain values (integers, days, µs).
func fillInts[T int16 | int32 | int64](f *field, dst []T, row0 int64) {
	switch {
	case f.picks > 0:
		for i := range dst {
			dst[i] = T(f.ints[below(rowRand(f.seed, row0+int64(i)), uint64(f.picks))])
		}
	case f.kind == kindSequence:
		v := f.start + row0*f.step
		for i := range dst {
			x := v
			if f.jitter > 0 {
				x -= int64(below(rowRand(f.seed, row0+int64(i)), uint64(f.jitter)+1))
			}
			dst[i] = T(x)
			v += f.step
		}
	default:
		span := uint64(f.hi) - uint64(f.lo) + 1 // 0: the whole int64 range
		for i := range dst {
			r := rowRand(f.seed, row0+int64(i))
			if span != 0 {
				r = below(r, span)
			}
			dst[i] = T(f.lo + int64(r))
		}
	}
}

// randomInt is the random (not sequence, not pick) value of row in
// [f.lo, f.hi].
func (f *field) randomInt(row int64) int64 {
	r := rowRand(f.seed, row)
	if span := uint64(f.hi) - uint64(f.lo) + 1; span != 0 {
		r = below(r, span)
	}
	return f.lo + int64(r)
}

func fillFloats[T float32 | float64](f *field, dst []T, row0 int64) {
	switch {
	case f.picks > 0:
		for i := range dst {
			dst[i] = T(f.floats[below(rowRand(f.seed, row0+int64(i)), uint64(f.picks))])
		}
	case f.kind == kindSequence:
		for i := range dst {
			dst[i] = T(f.fstart + float64(row0+int64(i))*f.fstep)
		}
	default:
		w := f.fhi - f.flo
		for i := range dst {
			dst[i] = T(f.flo + unit(rowRand(f.seed, row0+int64(i)))*w)
		}
	}
}

// bools01 is the bit-packed values of a boolean column.
func (f *field) bools01(row0 int64, n int) []byte {
	bits := make([]byte, bitutil.BytesForBits(int64(n)))
	for i := range n {
		r := rowRand(f.seed, row0+int64(i))
		v := r>>63 == 1
		if f.picks > 0 {
			v = f.bools[below(r, uint64(f.picks))]
		}
		if v {
			bitutil.SetBit(bits, i)
		}
	}
	return bits
}

func (f *field) fillIntervals(dst []arrow.MonthDayNanoInterval, row0 int64) {
	for i := range dst {
		row := row0 + int64(i)
		var iv types.IntervalValue
		switch {
		case f.picks > 0:
			iv = f.ivs[below(rowRand(f.seed, row), uint64(f.picks))]
		case f.kind == kindSequence:
			iv = types.IntervalValue{
				Months: f.ivStart.Months + int32(row)*f.ivStep.Months,
				Days:   f.ivStart.Days + int32(row)*f.ivStep.Days,
				Micros: f.ivStart.Micros + row*f.ivStep.Micros,
			}
		default:
			iv.Micros = f.randomInt(row)
		}
		dst[i] = types.IntervalToArrow(iv)
	}
}

// alphabet holds the characters of random strings.
const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// strings builds the offsets and bytes of a string-stored column.
func (f *field) strings(row0 int64, n int) ([]int32, []byte) {
	offs := make([]int32, n+1)
	per := 20
	if f.st == stText && f.kind == kindRandom && f.picks == 0 {
		per = max(f.length, f.pad)
	}
	buf := make([]byte, 0, n*per)
	for i := range n {
		row := row0 + int64(i)
		switch {
		case f.picks > 0:
			buf = append(buf, f.strs[below(rowRand(f.seed, row), uint64(f.picks))]...)
		case f.st == stUUID:
			buf = appendUUID(buf, rowRand(f.seed, row), rowRand(f.seed^0x75756964, row))
		case f.st == stNumeric:
			v := f.start + row*f.step
			if f.kind == kindRandom {
				v = f.randomInt(row)
			}
			buf = appendScaled(buf, v, f.scale)
		case f.kind == kindSequence: // text
			at := len(buf)
			buf = strconv.AppendInt(buf, f.start+row*f.step, 10)
			for j := len(buf) - at; j < f.pad; j++ {
				buf = append(buf, ' ')
			}
		default: // random text
			s := rowRand(f.seed, row)
			var r uint64
			for j := range f.length {
				if j%4 == 0 {
					s += golden
					r = mix64(s)
				}
				buf = append(buf, alphabet[(r&0xffff)*uint64(len(alphabet))>>16])
				r >>= 16
			}
			for j := f.length; j < f.pad; j++ {
				buf = append(buf, ' ')
			}
		}
		offs[i+1] = int32(len(buf))
	}
	return offs, buf
}

// appendScaled appends v*10^-scale as numeric_out prints it.
func appendScaled(buf []byte, v int64, scale int) []byte {
	if scale == 0 {
		return strconv.AppendInt(buf, v, 10)
	}
	u := uint64(v)
	if v < 0 {
		buf = append(buf, '-')
		u = -u
	}
	p := uint64(pow10(scale))
	buf = strconv.AppendUint(buf, u/p, 10)
	buf = append(buf, '.')
	frac := strconv.AppendUint(nil, u%p+p, 10) // leading 1 keeps the zeros
	return append(buf, frac[1:]...)
}

// appendUUID appends the text of the version 4 uuid of random bits hi, lo
// (as gen_random_uuid makes them: the version and variant bits set).
func appendUUID(buf []byte, hi, lo uint64) []byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], hi&^(0xf<<12)|0x4<<12)
	binary.BigEndian.PutUint64(b[8:], lo&^(0x3<<62)|0x2<<62)
	return types.AppendUUIDText(buf, b[:])
}
