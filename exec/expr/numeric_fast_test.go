package expr

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// randNumericText returns numeric texts of every shape the small path
// handles or hands to apd: signs, scales, 1 to 22 digits, zeros, NaN
// (not Infinity: Infinity * 0 fails in apd, which is not what this tests).
func randNumericText(rng *rand.Rand) string {
	switch rng.Intn(19) {
	case 0:
		return "NaN"
	case 2:
		return []string{"0", "0.000", "9223372036854775807", "-9223372036854775808", "999999999999999999", "-0.5"}[rng.Intn(6)]
	}
	var b strings.Builder
	if rng.Intn(3) == 0 {
		b.WriteByte('-')
	}
	digits := 1 + rng.Intn(22)
	scale := 0
	if rng.Intn(2) == 0 {
		scale = rng.Intn(digits + 1)
	}
	intDigits := digits - scale
	if intDigits == 0 {
		b.WriteByte('0')
	}
	for i := 0; i < intDigits; i++ {
		c := byte('0' + rng.Intn(10))
		if i == 0 && c == '0' && intDigits > 1 {
			c = '1'
		}
		b.WriteByte(c)
	}
	if scale > 0 {
		b.WriteByte('.')
		for i := 0; i < scale; i++ {
			b.WriteByte(byte('0' + rng.Intn(10)))
		}
	}
	s := b.String()
	if strings.HasPrefix(s, "-") && strings.Trim(s[1:], "0.") == "" {
		s = s[1:] // numeric_out never writes a negative zero
	}
	return s
}

// The small path gives exactly the apd path's text for +, - and *.
func TestNumericBinarySmallMatchesApd(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	const n = 20000
	xb, yb := array.NewStringBuilder(memory.DefaultAllocator), array.NewStringBuilder(memory.DefaultAllocator)
	var xs, ys []string
	for i := 0; i < n; i++ {
		x, y := randNumericText(rng), randNumericText(rng)
		if i%5 == 0 {
			y = "0.908" // runs of a constant
		}
		if rng.Intn(50) == 0 {
			xb.AppendNull()
			x = ""
		} else {
			xb.Append(x)
		}
		yb.Append(y)
		xs, ys = append(xs, x), append(ys, y)
	}
	xa, ya := xb.NewStringArray(), yb.NewStringArray()
	for _, op := range []byte{'+', '-', '*'} {
		got, err := numericBinarySmall(op, xa, ya, n)
		if err != nil {
			t.Fatal(err)
		}
		g := got.(*array.String)
		for i := 0; i < n; i++ {
			if xs[i] == "" {
				if g.IsValid(i) {
					t.Fatalf("NULL %c %s = %q, want NULL", op, ys[i], g.Value(i))
				}
				continue
			}
			x, _ := parseNumeric(xs[i])
			y, _ := parseNumeric(ys[i])
			d, err := numericOp(op, x, y)
			if err != nil {
				t.Fatalf("%s %c %s: %v", xs[i], op, ys[i], err)
			}
			if want := numericString(d); g.Value(i) != want {
				t.Fatalf("%s %c %s = %s, want %s", xs[i], op, ys[i], g.Value(i), want)
			}
		}
	}
}

func BenchmarkNumericMulSmall(b *testing.B) {
	const n = 4096
	xb, yb := array.NewStringBuilder(memory.DefaultAllocator), array.NewStringBuilder(memory.DefaultAllocator)
	for i := 0; i < n; i++ {
		xb.Append(fmt.Sprint(100 + i*7919%1000000))
		yb.Append("0.908")
	}
	xa, ya := xb.NewStringArray(), yb.NewStringArray()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := numericBinarySmall('*', xa, ya, n); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
}
