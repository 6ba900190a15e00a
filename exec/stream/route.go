package stream

// Routing at the source (docs/contributing/parallel.md, "Routed
// generators"). When a hash exchange reads a split generator's reader
// directly (no operator between them) and routes by one bigint column the
// generator builds, the reader can build one batch per instance instead
// of one batch for all: it computes each row's owner with Owner (the
// exchange's vnode rule, VNodeHasher on a one-column key) as it
// generates the row, and sends each part as a Chunk whose Part names the
// routing and the instance. The exchange then sends the part to that
// instance as it is: no hashing, no gather, no fresh copy of every routed
// column. Chunks without a Part (other readers, other routings) are
// routed by hashing as before, so a reader that cannot route (another
// column, another connector) changes nothing.

// Routing identifies one hash exchange's routing of one input for the
// readers that route their rows for it. It is built by the runtime before
// the readers start and read-only afterwards (safe to share between the
// readers' and the exchange's goroutines).
type Routing struct {
	N     int
	parts []Part
}

// Part is instance K of the routing Of; a Chunk whose Part is it holds
// only rows that instance owns.
type Part struct {
	Of *Routing
	K  int
}

// NewRouting returns a routing among n instances.
func NewRouting(n int) *Routing {
	r := &Routing{N: n, parts: make([]Part, n)}
	for k := range r.parts {
		r.parts[k] = Part{Of: r, K: k}
	}
	return r
}

// Part returns the Part of instance k (shared: never modified).
func (r *Routing) Part(k int) *Part { return &r.parts[k] }

// Owner is the instance that owns a row whose one routing column (an
// integer column, never NULL) holds v: VNodeOwner of the vnode that
// VNodeHasher gives a one-column key of any integer type.
func (r *Routing) Owner(v int64) int { return VNodeOwner(VNodeOfWord(v), r.N) }

// Owner2 is Owner for a row routed by two integer columns holding a and
// b (never NULL), in the key's order.
func (r *Routing) Owner2(a, b int64) int { return VNodeOwner(VNodeOfWords(a, b), r.N) }

// VNodeOfWords is VNodeOfWord for a key of two word-typed columns.
func VNodeOfWords(a, b int64) uint16 {
	return uint16(mix64(hashStep(hashStep(vnodeSeed, uint64(a)), uint64(b))) % VNodes)
}

// VNodeOfWord is the vnode of a row whose key is one word-typed column
// (integers of any width, as int64) holding v, not NULL: what
// VNodeHasher.VNodes computes for it.
func VNodeOfWord(v int64) uint16 {
	return uint16(mix64(hashStep(vnodeSeed, uint64(v))) % VNodes)
}
