package stream

// intIndex maps bigint keys to int32 values: an open-addressing table
// with linear probing and backward-shift deletion (no tombstones), so a
// join whose groups come and go (every key freed once both sides are
// empty) keeps short probe runs without rebuilding. It replaced a Go
// map in the join's keyTable, whose inserts, lookups and deletes cost a
// fifth of Nexmark q7's CPU. Not safe for concurrent use; owned by its
// operator's goroutine, as the keyTable.
type intIndex struct {
	slots []islot32 // len a power of two (0: empty)
	n     int       // keys held
}

// islot32 is one slot: a key and its value, used or not.
type islot32 struct {
	key  int64
	val  int32
	used bool
}

// intIndexMinSlots is the table's smallest size.
const intIndexMinSlots = 64

// newIntIndex returns an index with room for about n keys.
func newIntIndex(n int) *intIndex {
	size := intIndexMinSlots
	for size*3 < n*4 { // at most 3/4 full
		size *= 2
	}
	return &intIndex{slots: make([]islot32, size)}
}

func (x *intIndex) home(k int64) int {
	return int(mix64(uint64(k)) & uint64(len(x.slots)-1))
}

// get returns key k's value and whether k is held.
func (x *intIndex) get(k int64) (int32, bool) {
	mask := len(x.slots) - 1
	for i := x.home(k); ; i = (i + 1) & mask {
		s := &x.slots[i]
		if !s.used {
			return 0, false
		}
		if s.key == k {
			return s.val, true
		}
	}
}

// put sets key k's value to v.
func (x *intIndex) put(k int64, v int32) {
	if (x.n+1)*4 > len(x.slots)*3 {
		x.grow()
	}
	mask := len(x.slots) - 1
	for i := x.home(k); ; i = (i + 1) & mask {
		s := &x.slots[i]
		if !s.used {
			*s = islot32{key: k, val: v, used: true}
			x.n++
			return
		}
		if s.key == k {
			s.val = v
			return
		}
	}
}

// del removes key k, if held, moving back the keys after it in its run
// that may sit closer to their home slot.
func (x *intIndex) del(k int64) {
	mask := len(x.slots) - 1
	i := x.home(k)
	for {
		s := &x.slots[i]
		if !s.used {
			return
		}
		if s.key == k {
			break
		}
		i = (i + 1) & mask
	}
	x.n--
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := &x.slots[j]
		if !s.used {
			break
		}
		// s may move to the hole at i when its home is not in (i, j]
		// (cyclically): probing for it from its home reaches i first.
		h := x.home(s.key)
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			x.slots[i] = *s
			i = j
		}
	}
	x.slots[i] = islot32{}
}

// grow doubles the table.
func (x *intIndex) grow() {
	old := x.slots
	x.slots = make([]islot32, max(2*len(old), intIndexMinSlots))
	x.n = 0
	for _, s := range old {
		if s.used {
			x.put(s.key, s.val)
		}
	}
}

// len is how many keys are held.
func (x *intIndex) len() int { return x.n }
