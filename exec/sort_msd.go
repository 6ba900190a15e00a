package exec

import (
	"math/bits"
)

// Parallel radix sort by partitioning (the normalized-key path of
// sortPermCtx). Instead of sorting one range of rows per worker and then
// merging the runs (a comparison per row and a pass of its own), the rows
// are first split by the top 8 varying bits of their key (a "digit" that
// orders as the key does) into W partitions of about n/W rows each, cut
// between digits; each worker then radix-sorts its partition alone, and the
// partitions, in digit order, are the sorted rows. Every pass is parallel:
// the workers' histograms of their ranges, the scatter (each worker writes
// its rows at offsets of its own, in row order, so rows of one digit stay
// in row order), the sorts. LSD radix sort is stable and equal keys have
// equal digits, so ties keep row order: the result is the serial sort's
// exactly. Keys that do not split evenly (most rows in one digit: few
// distinct keys, a skewed first key) fall back to sorting runs and
// merging them.

// msdDigit is the digit of a row: the top varying bits of its key words
// f (and g, when f varies in fewer than 8 bits).
type msdDigit struct {
	f, g   int
	s1     uint   // one word: digit = w_f >> s1 & 255
	b1, b2 uint   // two words: b1 low bits of w_f, then b2 bits of w_g from s2
	s2     uint   //
	m1, m2 uint64 // masks of b1 and b2 bits
	two    bool
}

func (d *msdDigit) of(nk [][]uint64, i int) int {
	if !d.two {
		return int(nk[d.f][i] >> d.s1 & 255)
	}
	return int((nk[d.f][i]&d.m1)<<d.b2 | (nk[d.g][i]>>d.s2)&d.m2)
}

// newMSDDigit builds the digit from the bits in which each word varies
// (diff[k]: OR of every row's word k XOR row 0's); ok is false when no
// word varies.
func newMSDDigit(diff []uint64) (d msdDigit, ok bool) {
	d.f = -1
	for k, x := range diff {
		if x != 0 {
			d.f = k
			break
		}
	}
	if d.f < 0 {
		return d, false
	}
	hb := uint(bits.Len64(diff[d.f])) // varying bits of w_f: hb-1..0
	if hb >= 8 || d.f == len(diff)-1 || diff[d.f+1] == 0 {
		d.s1 = hb - min(hb, 8)
		return d, true
	}
	d.two, d.g = true, d.f+1
	d.b1, d.m1 = hb, 1<<hb-1
	hb2 := uint(bits.Len64(diff[d.g]))
	d.b2 = min(8-hb, hb2)
	d.s2 = hb2 - d.b2
	d.m2 = 1<<d.b2 - 1
	return d, true
}

// msdSortPerm sorts rows 0..n-1 by the normalized keys nk on w workers by
// partitioning; ok is false (and nothing is returned) when the digits
// cannot give each worker a fair share.
func msdSortPerm(nk [][]uint64, n, w int) (perm []int32, ok bool, err error) {
	// The bits each word varies in.
	diffs := make([][]uint64, w)
	err = parallelDo(w, func(wk int) {
		d := make([]uint64, len(nk))
		for k, words := range nk {
			x0, acc := words[0], uint64(0)
			for _, x := range words[wk*n/w : (wk+1)*n/w] {
				acc |= x ^ x0
			}
			d[k] = acc
		}
		diffs[wk] = d
	})
	if err != nil {
		return nil, false, err
	}
	diff := make([]uint64, len(nk))
	for _, d := range diffs {
		for k := range d {
			diff[k] |= d[k]
		}
	}
	dg, ok := newMSDDigit(diff)
	if !ok {
		return nil, false, nil
	}
	// Histograms of each worker's range.
	hist := make([][256]int, w)
	err = parallelDo(w, func(wk int) {
		h := &hist[wk]
		for i := wk * n / w; i < (wk+1)*n/w; i++ {
			h[dg.of(nk, i)]++
		}
	})
	if err != nil {
		return nil, false, err
	}
	var total [256]int
	for wk := range hist {
		for d, c := range hist[wk] {
			total[d] += c
		}
	}
	// Cut the digits into w partitions of about n/w rows: partition p is
	// digits [cut[p], cut[p+1]) and rows [start[p], start[p+1]).
	cut, start := make([]int, w+1), make([]int, w+1)
	cut[w], start[w] = 256, n
	acc, p := 0, 1
	for d := 0; d < 256 && p < w; d++ {
		acc += total[d]
		for p < w && acc >= p*n/w {
			cut[p], start[p] = d+1, acc
			p++
		}
	}
	for ; p < w; p++ {
		cut[p], start[p] = 256, n
	}
	biggest := 0
	for p := 0; p < w; p++ {
		biggest = max(biggest, start[p+1]-start[p])
	}
	if biggest > n*(w+1)/(2*w) { // no fair share: merge runs instead
		return nil, false, nil
	}
	// Scatter: worker wk's rows of digit d go, in row order, after the
	// rows of smaller digits and after other workers' rows of digit d from
	// earlier ranges.
	offs := make([][256]int, w)
	base := 0
	for d := 0; d < 256; d++ {
		for wk := 0; wk < w; wk++ {
			offs[wk][d] = base
			base += hist[wk][d]
		}
	}
	// The last key word goes along (the partition sorts read it first:
	// reading it through perm would be a random access a row).
	perm = make([]int32, n)
	lastW := nk[len(nk)-1]
	last := make([]uint64, n)
	err = parallelDo(w, func(wk int) {
		off := &offs[wk]
		for i := wk * n / w; i < (wk+1)*n/w; i++ {
			d := dg.of(nk, i)
			perm[off[d]] = int32(i)
			last[off[d]] = lastW[i]
			off[d]++
		}
	})
	if err != nil {
		return nil, false, err
	}
	// Each partition sorted on its own.
	err = parallelDo(w, func(p int) {
		s, e := start[p], start[p+1]
		sorted, _ := radixSortRows(nk, perm[s:e], last[s:e])
		copy(perm[s:e], sorted)
	})
	if err != nil {
		return nil, false, err
	}
	return perm, true, nil
}
