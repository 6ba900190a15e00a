package exec

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/types"
)

// Columns returns the input's columns.
func (d *Distinct) Columns() []types.Column { return d.Input.Columns() }

// Children returns the input.
func (d *Distinct) Children() []Node { return []Node{d.Input} }

// Explain returns "Distinct" or "Distinct On: keys".
func (d *Distinct) Explain() string {
	if len(d.On) > 0 {
		return "Distinct On: " + exprList(d.On)
	}
	return "Distinct"
}

// Open opens the input. Rows stream through: each batch yields the rows
// whose key has not been seen before, in input order.
func (d *Distinct) Open(ctx *Context) (Iterator, error) {
	in, err := OpenNode(ctx, d.Input)
	if err != nil {
		return nil, err
	}
	keys := d.On
	if len(keys) == 0 {
		for i, c := range d.Input.Columns() {
			keys = append(keys, &expr.ColRef{Idx: i, T: c.Type, Name: c.Name})
		}
	}
	return &distinctIter{ctx: ctx, in: in, keys: keys, table: newHashTable(exprTypes(keys)), acct: membudget.NewAccount(budgetOf(ctx))}, nil
}

type distinctIter struct {
	ctx   *Context
	in    Iterator
	keys  []expr.Expr
	table *hashTable
	gids  []int32
	acct  *membudget.Account // the distinct keys kept; released at Close
}

func (it *distinctIter) Next() (_ arrow.RecordBatch, err error) {
	defer recoverErr(&err)
	for {
		if err := canceled(it.ctx); err != nil {
			return nil, err
		}
		b, err := it.in.Next()
		if err != nil || b == nil {
			return nil, err
		}
		ks, err := evalAll(it.ctx, it.keys, b)
		if err != nil {
			return nil, err
		}
		n := int(b.NumRows())
		it.gids = it.table.insert(ks, n, it.gids, false)
		rows := it.table.newRows
		if len(rows) > 0 {
			// Each new key: its slot and its values (the batch's average).
			var kb int64
			for _, k := range ks {
				kb += arrayBytes(k)
			}
			if err := it.acct.Grow(int64(len(rows)) * (groupBytes + kb/int64(n))); err != nil {
				return nil, err
			}
		}
		switch len(rows) {
		case 0:
			continue
		case n:
			return b, nil
		}
		return takeBatch(alloc(it.ctx), b.Schema(), b.Columns(), rows), nil
	}
}

func (it *distinctIter) Close() error {
	it.acct.Release()
	return it.in.Close()
}
