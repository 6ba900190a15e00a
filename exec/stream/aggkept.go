package stream

// kept is what a running-state aggregate over floats (the variance family,
// corr and regr_*) keeps over an input that may retract: each group's
// ordered multiset of inputs, and which groups a retraction left stale,
// so that their state is replayed from the multiset when next read (the
// inverse of a floating-point step is unstable). Owned by the aggregate's
// goroutine.
type kept[K any] struct {
	cmp     func(a, b K) int
	sets    []sortedSet[K]
	stale   bitmap
	entries int64 // distinct inputs over all groups, for state sizes
}

func (k *kept[K]) grow(n int) {
	k.sets = growSlice(k.sets, n)
	k.stale.grow(n)
}

func (k *kept[K]) reset(g int32) {
	k.entries -= int64(k.sets[g].len())
	k.sets[g] = sortedSet[K]{}
	k.stale.set(g, false)
}

// add adds sign rows (negative: retracts) of key to group g, marking the
// group stale on a retraction, and reports whether the group is empty now
// (and so not stale: its state restarts from zero).
func (k *kept[K]) add(g int32, key K, sign int64) (empty bool, err error) {
	set := &k.sets[g]
	before := set.len()
	for n := sign; n != 0; {
		step := int64(1)
		if n < 0 {
			step = -1
		}
		if err := set.add(key, step, k.cmp, same[K]); err != nil {
			return false, err
		}
		n -= step
	}
	k.entries += int64(set.len() - before)
	empty = set.len() == 0
	switch {
	case empty:
		k.stale.set(g, false)
	case sign < 0:
		k.stale.set(g, true)
	}
	return empty, nil
}

// appendState appends whether group g is stale, then its inputs.
func (k *kept[K]) appendState(dst []byte, g int32, enc func([]byte, K) []byte) []byte {
	stale := byte(0)
	if k.stale.get(g) {
		stale = 1
	}
	return appendSetState(append(dst, stale), &k.sets[g], enc)
}

// loadState reads what appendState wrote into group g (empty).
func (k *kept[K]) loadState(g int32, b []byte, dec func([]byte) (K, []byte, error)) ([]byte, error) {
	if len(b) == 0 {
		return nil, errStateTruncated
	}
	k.stale.set(g, b[0] == 1)
	b, err := loadSetState(&k.sets[g], b[1:], dec, k.cmp)
	if err != nil {
		return nil, err
	}
	k.entries += int64(k.sets[g].len())
	return b, nil
}
