package planner

import (
	"sort"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/storage"
)

// INSERT ... ON CONFLICT DO NOTHING is planned entirely here: the rows to
// insert are anti-joined with the table on the primary key (the only
// unique constraint streamsql has), and of several new rows with the same
// key the first is kept. Rows committed by a concurrent insert after the
// statement's snapshot still fail with 23505 rather than being skipped.
// DO UPDATE is not supported yet.

func (b *binder) onConflict(oc *pg.OnConflictClause, rel *catalog.Relation, tbl *storage.Table, plan lnode) (lnode, error) {
	if oc.Action != pg.OnConflictAction_ONCONFLICT_NOTHING {
		return nil, b.newErr(pgerr.FeatureNotSupported, oc.Location, "ON CONFLICT DO UPDATE is not supported")
	}
	if inf := oc.Infer; inf != nil {
		if inf.WhereClause != nil || inf.Conname != "" && inf.Conname != rel.PKName {
			return nil, b.newErr(pgerr.FeatureNotSupported, oc.Location, "this ON CONFLICT target is not supported")
		}
		if inf.Conname == "" && !b.matchesPK(rel, inf.IndexElems) {
			return nil, b.newErr(pgerr.InvalidColumnReference, -1, "there is no unique or exclusion constraint matching the ON CONFLICT specification")
		}
	}
	if len(rel.PrimaryKey) == 0 {
		return plan, nil // nothing can conflict
	}
	ids := plan.outIDs()
	scan := &lScan{rel: rel, table: tbl, alias: rel.Name, rowID: -1}
	for _, c := range rel.Columns {
		scan.ids = append(scan.ids, b.newCol(c.Name, rel.Name, c.Type))
	}
	anti := &lJoin{left: plan, right: scan, kind: exec.AntiJoin}
	var keys []expr.Expr
	for _, k := range rel.PrimaryKey {
		x, y, eq, err := b.eqFunc(b.colRef(ids[k]), b.colRef(scan.ids[k]), -1)
		if err != nil {
			return nil, err
		}
		anti.conds = append(anti.conds, &expr.Call{Fn: eq, Args: []expr.Expr{x, y}})
		keys = append(keys, b.colRef(ids[k]))
	}
	return &lDistinct{in: anti, on: keys}, nil
}

// matchesPK reports whether ON CONFLICT (cols) names the primary key.
func (b *binder) matchesPK(rel *catalog.Relation, elems []*pg.Node) bool {
	var names, pk []string
	for _, e := range elems {
		ie := e.GetIndexElem()
		if ie == nil || ie.Name == "" {
			return false
		}
		names = append(names, ie.Name)
	}
	for _, k := range rel.PrimaryKey {
		pk = append(pk, rel.Columns[k].Name)
	}
	sort.Strings(names)
	sort.Strings(pk)
	if len(names) != len(pk) {
		return false
	}
	for i := range names {
		if names[i] != pk[i] {
			return false
		}
	}
	return true
}
