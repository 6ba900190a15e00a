package datagen

import "math/bits"

// Randomness is SplitMix64 addressed by position: the draw for row r of a
// stream with seed s is the (r+1)-th SplitMix64 output from state s, so any
// row can be computed without the rows before it.

const golden = 0x9E3779B97F4A7C15

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// rowRand is row's draw in the stream seed.
func rowRand(seed uint64, row int64) uint64 {
	return mix64(seed + uint64(row+1)*golden)
}

// below maps a draw uniformly to [0, n) (multiply-shift; bias < n/2^64).
func below(r, n uint64) uint64 {
	hi, _ := bits.Mul64(r, n)
	return hi
}

// unit maps a draw to [0, 1).
func unit(r uint64) float64 {
	return float64(r>>11) * (1.0 / (1 << 53))
}
