package kafka

// Split readers (ReaderOptions.Split; docs/contributing/parallel.md,
// "Sources"): reader i of N reads the partitions p with p mod N == i.

// mine reports whether partition p is the reader's (ReaderOptions.Split).
func (r *Reader) mine(p int32) bool {
	return r.opts.Splits <= 1 || int(p)%r.opts.Splits == r.opts.Split
}

// own keeps the partitions of ps that are the reader's.
func (r *Reader) own(ps []int32) []int32 {
	if r.opts.Splits <= 1 {
		return ps
	}
	out := make([]int32, 0, len(ps))
	for _, p := range ps {
		if r.mine(p) {
			out = append(out, p)
		}
	}
	return out
}
