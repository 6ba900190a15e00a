package planner

import (
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
)

// sharedCTE is a WITH query computed once per execution for all its
// references, as PostgreSQL materializes a WITH query that calls volatile
// functions: `WITH q AS (SELECT random() ...) SELECT * FROM q UNION SELECT
// * FROM q` sees the same values twice. (PostgreSQL also materializes a
// query referenced twice or marked MATERIALIZED; without volatile
// functions, inlining it gives the same rows, so it stays inlined here.)
type sharedCTE struct {
	plan lnode // bound and optimized once
	key  *exec.SharedKey
}

// sharedCTE returns what a reference to cte reads, given plan, the query
// bound for this reference: plan itself, or a scan of the query computed
// once when it calls volatile functions, reads nothing of enclosing
// queries, and is not NOT MATERIALIZED. Continuous queries keep plan:
// they refuse volatile functions before this matters.
func (b *binder) sharedCTE(cte *cteDef, plan lnode) lnode {
	if b.stream || cte.inline {
		return plan
	}
	if cte.shared == nil {
		if !callsVolatile(plan) || hasOuterRefs(plan) {
			return plan
		}
		cte.shared = &sharedCTE{plan: optimize(plan), key: &exec.SharedKey{Name: cte.name}}
	}
	sh := cte.shared
	p := &lProject{in: &lShared{in: sh.plan, key: sh.key}}
	for _, id := range sh.plan.outIDs() {
		p.ids = append(p.ids, b.newCol(b.cols[id].name, cte.name, b.cols[id].t))
		p.exprs = append(p.exprs, b.colRef(id))
	}
	return p
}

// callsVolatile reports whether a plan calls a volatile function
// (random(), nextval(), clock_timestamp(), ...).
func callsVolatile(n lnode) bool {
	found := false
	for _, e := range nodeExprs(n) {
		walk(e, func(x expr.Expr) bool {
			if c, ok := x.(*expr.Call); ok && c.Fn.Volatile {
				found = true
			}
			return !found
		})
	}
	if found {
		return true
	}
	for _, c := range nodeChildren(n) {
		if callsVolatile(c) {
			return true
		}
	}
	return false
}

// cteLevel is the level a reference from ref binds cte's query in: it
// sees the WITH queries before it and the levels enclosing the query that
// defines it, as cte.level does, but an outer reference's depth counts
// the subqueries between ref and those levels, since the query is inlined
// at ref (`SELECT (WITH c AS (SELECT o.x) SELECT (SELECT * FROM c)) FROM
// o` reads o.x two subqueries out). The levels from ref up to the owner
// are stand-ins that show no names and carry only their subquery
// boundaries; outside them the chain is the real one.
func cteLevel(cte *cteDef, ref *level) *level {
	if cte.owner == nil || ref == nil {
		return cte.level
	}
	var head, tail *level
	for y := ref; y != nil; y = y.parent {
		s := &level{sub: y.sub}
		if head == nil {
			head = s
		} else {
			tail.parent = s
		}
		tail = s
		if y == cte.owner {
			s.hideParent = y.hideParent
			s.parent = y.parent
			return &level{parent: head, ctes: cte.level.ctes, laterCTEs: cte.level.laterCTEs}
		}
	}
	return cte.level // ref is not inside the owner: cannot happen
}
