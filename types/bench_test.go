package types

import (
	"testing"
	"time"
)

func benchAppend(b *testing.B, v Value, t T, opts *FormatOptions) {
	var buf []byte
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = AppendText(buf[:0], v, t, opts)
	}
}

func BenchmarkAppendTextInt8(b *testing.B) { benchAppend(b, int64(-1234567890123), TInt8, nil) }
func BenchmarkAppendTextFloat8(b *testing.B) {
	benchAppend(b, 1234.5678, TFloat8, nil)
}
func BenchmarkAppendTextFloat8Exp(b *testing.B) { benchAppend(b, 1.5e-7, TFloat8, nil) }
func BenchmarkAppendTextTimestamp(b *testing.B) {
	benchAppend(b, TimestampValue(1704164645123456), TTimestamp, nil)
}
func BenchmarkAppendTextTimestampTZ(b *testing.B) {
	loc, _ := time.LoadLocation("America/New_York")
	benchAppend(b, TimestampValue(1704164645123456), TTimestampTZ, &FormatOptions{Location: loc, ExtraFloatDigits: 1})
}
func BenchmarkAppendTextNumeric(b *testing.B) {
	v, _ := ParseText("12345.678", TNumeric, nil)
	benchAppend(b, v, TNumeric, nil)
}
func BenchmarkParseTextTimestamp(b *testing.B) {
	for i := 0; i < b.N; i++ {
		ParseText("2024-01-02 03:04:05.123456", TTimestamp, nil)
	}
}
