package stream

import (
	"sort"

	"github.com/streamsql/streamsql/exec/expr"
)

// keyMarks maps the watermarks of an aggregation's input to its output:
// a watermark on an input column that a GROUP BY key references plainly
// becomes one on that key's output column (its position among the keys);
// others are dropped. Since an aggregation emits at the barrier, rows
// older than a watermark received during the epoch still come out at the
// barrier: the mapped watermarks are held (the highest per column) and
// sent after the epoch's rows. Owned by the operator's goroutine.
type keyMarks struct {
	outs    map[int][]int // input column -> output key columns
	pending map[int]int64 // output column -> held watermark
	sent    map[int]int64
}

func newKeyMarks(groupBy []expr.Expr) *keyMarks {
	k := &keyMarks{outs: map[int][]int{}, pending: map[int]int64{}, sent: map[int]int64{}}
	for i, g := range groupBy {
		if c, ok := g.(*expr.ColRef); ok {
			k.outs[c.Idx] = append(k.outs[c.Idx], i)
		}
	}
	return k
}

// note holds an input watermark.
func (k *keyMarks) note(w Watermark) {
	for _, col := range k.outs[w.Col] {
		if v, ok := k.pending[col]; !ok || w.Value > v {
			k.pending[col] = w.Value
		}
	}
}

// send sends the held watermarks that rose, in column order; false means stop.
func (k *keyMarks) send(env *Env, out chan<- Message) bool {
	if len(k.pending) == 0 {
		return true
	}
	cols := make([]int, 0, len(k.pending))
	for c := range k.pending {
		cols = append(cols, c)
	}
	sort.Ints(cols)
	for _, c := range cols {
		v := k.pending[c]
		delete(k.pending, c)
		if last, ok := k.sent[c]; ok && v <= last {
			continue
		}
		k.sent[c] = v
		if !send(env, out, WatermarkMsg(Watermark{Col: c, Value: v})) {
			return false
		}
	}
	return true
}
