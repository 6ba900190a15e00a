package exec

import (
	"math/bits"
	"strconv"
	"strings"
)

// avgIntText formats sum/n (integers) as PostgreSQL's numeric division does
// (select_div_scale, round half away from zero) with 128-bit integer
// arithmetic; ok is false when the operands are out of its range and the
// apd path must be used.
func avgIntText(sum int64, n int64) (string, bool) {
	if n <= 0 || sum == -1<<63 {
		return "", false
	}
	neg := sum < 0
	u := uint64(sum)
	if neg {
		u = uint64(-sum)
	}
	w1, f1 := base10000u(u)
	w2, f2 := base10000u(uint64(n))
	qweight := w1 - w2
	if f1 <= f2 {
		qweight--
	}
	rscale := 16 - qweight*4
	if rscale < 0 {
		rscale = 0
	}
	if rscale > 19 {
		return "", false
	}
	pow := uint64(1)
	for i := 0; i < rscale; i++ {
		pow *= 10
	}
	hi, lo := bits.Mul64(u, pow)
	if hi >= uint64(n) {
		return "", false
	}
	q, rem := bits.Div64(hi, lo, uint64(n))
	if rem >= uint64(n)-rem { // rem*2 >= n: half away from zero
		q++
	}
	digits := strconv.FormatUint(q, 10)
	if len(digits) <= rscale {
		digits = strings.Repeat("0", rscale-len(digits)+1) + digits
	}
	var sb strings.Builder
	if neg && q != 0 {
		sb.WriteByte('-')
	}
	sb.WriteString(digits[:len(digits)-rscale])
	if rscale > 0 {
		sb.WriteByte('.')
		sb.WriteString(digits[len(digits)-rscale:])
	}
	return sb.String(), true
}

// base10000u is the NumericVar weight and first base-10000 digit of u.
func base10000u(u uint64) (w int, f uint64) {
	for u >= 10000 {
		u /= 10000
		w++
	}
	return w, u
}
