package exec

import (
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/types"
)

// Point lookups by primary key. A Scan whose Filter requires the table's
// single primary key column to equal a parameter or a constant finds its
// candidate row through the table's key index instead of reading every
// chunk. The index sees the newest accepted writes, which may be ahead of
// (or, in a transaction, beside) the snapshot the statement reads, so the
// found row is used only when that row id is live in the snapshot: row ids
// are never reused and a row's contents never change, so that row has the
// key and, keys being unique in a snapshot, it is the only one. Otherwise
// (no such key in the index, or a row the snapshot does not have) the scan
// reads every chunk as before. The Filter is applied to the found row too.

// KeyLookup returns the expression the primary key column must equal for
// Filter to hold, when Filter has the form "pk = $n" or "pk = constant"
// (possibly inside an AND) over a table with a single-column primary key
// that the scan reads; nil otherwise. pk is the table column index of the
// key (from the catalog).
func (s *Scan) KeyLookup(pk []int) expr.Expr {
	if s.Table == nil || s.Filter == nil || len(pk) != 1 || s.WithRowID {
		return nil
	}
	out := -1
	for i, p := range s.Proj {
		if p == pk[0] {
			out = i
		}
	}
	if out < 0 {
		return nil
	}
	return EqualityKey(s.Filter, out, s.Cols[out].Type)
}

// EqualityKey returns the Param or Const that column col (of type t) must
// equal for cond to hold, when cond is "col = $n" or "col = constant"
// (possibly inside an AND) with both sides of type t; nil otherwise.
func EqualityKey(cond expr.Expr, col int, t types.T) expr.Expr {
	conds := []expr.Expr{cond}
	if and, ok := cond.(*expr.And); ok {
		conds = and.Args
	}
	for _, c := range conds {
		call, ok := c.(*expr.Call)
		if !ok || call.Fn == nil || call.Fn.Name != "=" || len(call.Args) != 2 || len(call.Fn.Args) != 2 {
			continue
		}
		for i := range 2 {
			ref, ok := call.Args[i].(*expr.ColRef)
			if !ok || ref.Idx != col || !sameType(call.Fn.Args[i], t) || !sameType(call.Fn.Args[1-i], t) {
				continue
			}
			switch o := call.Args[1-i].(type) {
			case *expr.Param:
				if sameType(o.T, t) {
					return o
				}
			case *expr.Const:
				if sameType(o.T, t) {
					return o
				}
			}
		}
	}
	return nil
}

// KeyValue is the value of a key EqualityKey found, for this execution;
// ok is false when it cannot be had.
func KeyValue(ctx *Context, key expr.Expr) (v types.Value, ok bool) {
	switch k := key.(type) {
	case *expr.Const:
		return k.V, true
	case *expr.Param:
		if ctx == nil || ctx.Eval == nil || k.Idx >= len(ctx.Eval.Params) {
			return nil, false
		}
		return ctx.Eval.Params[k.Idx], true
	}
	return nil, false
}

// sameType: the index compares Go values, so the key must be of the
// column's type exactly (int4 against int4, text against text).
func sameType(a, b types.T) bool { return a.Kind == b.Kind && a.Kind != types.Array }

// lookupChunks returns the one-row chunk of snap holding the row whose key
// is the value of s.Key, or ok false when the scan must read every chunk.
func (s *Scan) lookupChunks(ctx *Context, snap storage.Snapshot) (chunks []storage.Chunk, ok bool) {
	v, ok := KeyValue(ctx, s.Key)
	if !ok {
		return nil, false
	}
	if v == nil {
		return []storage.Chunk{}, true // pk = NULL is never true
	}
	id, found := s.Table.LookupKey([]types.Value{v})
	if !found {
		return nil, false
	}
	for _, ch := range snap.Chunks {
		i := id - ch.FirstRowID
		if i < 0 || i >= ch.Rec.NumRows() {
			continue
		}
		if ch.Deleted != nil && bitutil.BitIsSet(ch.Deleted, int(i)) {
			return nil, false
		}
		return []storage.Chunk{{Rec: ch.Rec.NewSlice(i, i+1), FirstRowID: id}}, true
	}
	return nil, false
}
