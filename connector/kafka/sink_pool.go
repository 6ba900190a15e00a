package kafka

// chunkPool keeps the chunks of committed epochs for the epochs after
// them. An exactly-once writer copies every row of an epoch into its
// chunks; copied into new memory, each 4 KiB page costs a page fault or
// a clear of the whole chunk before the copy, which a profile showed to
// be most of what exactly-once cost over at-least-once. Chunks come back
// only when nothing can read them any more (see txnWriter.recycle), and
// the pool holds at most limit bytes, so a writer keeps about one
// epoch's worth of memory between epochs, and none once an epoch is
// empty (drop).
//
// Owned by the writer's goroutine; not safe for concurrent use. A nil
// pool allocates every chunk.
type chunkPool struct {
	free  [][]byte // empty chunks (length 0), any capacity
	bytes int      // capacity held in free
}

// get returns an empty chunk of capacity at least need: a pooled one if
// there is one, else a new one of capacity size (size >= need).
func (p *chunkPool) get(size, need int) []byte {
	if p != nil {
		for i := len(p.free) - 1; i >= 0; i-- {
			if c := p.free[i]; cap(c) >= need {
				p.free[i] = p.free[len(p.free)-1]
				p.free[len(p.free)-1] = nil
				p.free = p.free[:len(p.free)-1]
				p.bytes -= cap(c)
				return c
			}
		}
	}
	return make([]byte, 0, size)
}

// put gives chunks back while the pool holds under limit bytes; the
// caller must not use them again.
func (p *chunkPool) put(chunks [][]byte, limit int) {
	for _, c := range chunks {
		if p.bytes+cap(c) > limit {
			return
		}
		p.free = append(p.free, c[:0])
		p.bytes += cap(c)
	}
}

// drop lets the pooled chunks go (to the garbage collector).
func (p *chunkPool) drop() {
	clear(p.free)
	p.free, p.bytes = p.free[:0], 0
}
