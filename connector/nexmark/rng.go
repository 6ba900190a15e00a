package nexmark

import (
	"math"
	"math/bits"
)

// rng is SplitMix64: tiny, fast and good enough for synthetic data. Each
// event gets its own, so events can be generated in any order or subset.
type rng struct{ s uint64 }

const golden = 0x9E3779B97F4A7C15

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// eventRNG returns the random stream of event id under seed.
func eventRNG(id int64, seed uint64) rng {
	return rng{s: mix64(uint64(id)*golden ^ mix64(seed+0x6E65786D61726B))}
}

func (r *rng) next() uint64 {
	r.s += golden
	return mix64(r.s)
}

// intn is uniform in [0,n) for n > 0 (multiply-shift; the bias is < n/2^64).
func (r *rng) intn(n int64) int64 {
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int64(hi)
}

// float is uniform in [0,1).
func (r *rng) float() float64 {
	return float64(r.next()>>11) * (1.0 / (1 << 53))
}

// price is Beam's log-uniform price in cents, round(10^(6u)*100) for u
// uniform in [0,1): 100 .. 1e8. 10^(6u) is split into a decade, a 1/1024
// step from a table and a cubic Taylor term for the rest (relative error
// below 1e-11, far below the rounding to whole cents), because math.Pow
// alone took half of the bid generator's time.
func (r *rng) price() int64 {
	y := r.float() * (6 * priceSteps)
	i := int(y)
	x := (y - float64(i)) * (math.Ln10 / priceSteps)
	return int64(math.Round(priceTable[i%priceSteps] * priceDecades[i/priceSteps] * (1 + x*(1+x*(0.5+x*(1.0/6))))))
}

var priceDecades = [6]float64{100, 1e3, 1e4, 1e5, 1e6, 1e7}

const priceSteps = 1024

// priceTable[i] = 10^(i/priceSteps), one decade (8 KiB, stays in L1).
var priceTable = func() []float64 {
	t := make([]float64, priceSteps)
	for i := range t {
		t[i] = math.Pow(10, float64(i)/priceSteps)
	}
	return t
}()
