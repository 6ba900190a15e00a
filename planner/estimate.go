package planner

import (
	"github.com/streamsql/streamsql/exec"
)

// estimate guesses how many rows a logical node produces, from the stored
// tables' row counts and fixed selectivities. It only has to be good enough
// to build hash tables on the smaller side of a join.
func estimate(n lnode) float64 {
	const filterSel = 0.3
	switch x := n.(type) {
	case *lScan:
		rows := 1000.0
		if x.table != nil {
			rows = float64(x.table.RowCount())
		}
		for range x.filter {
			rows *= filterSel
		}
		return max(rows, 1)
	case *lValues:
		return float64(len(x.rows))
	case *lFunc, *lLateralFunc, *lRecursive:
		return 1000
	case *lFilter:
		rows := estimate(x.in)
		for range x.conds {
			rows *= filterSel
		}
		return max(rows, 1)
	case *lProject:
		return estimate(x.in)
	case *lProjectSet:
		return estimate(x.in) * 10
	case *lTimeWindow:
		return estimate(x.in) * float64(x.windows().PerRow())
	case *lSort:
		return estimate(x.in)
	case *lWindow:
		return estimate(x.in)
	case *lLimit:
		return estimate(x.in)
	case *lDistinct:
		return max(estimate(x.in)/2, 1)
	case *lAgg:
		if len(x.groups) == 0 {
			return 1
		}
		return max(estimate(x.in)/10, 1)
	case *lSetOp:
		return estimate(x.left) + estimate(x.right)
	case *lJoin:
		l, r := estimate(x.left), estimate(x.right)
		switch x.kind {
		case exec.SemiJoin, exec.AntiJoin, exec.LeftJoin:
			return l
		case exec.RightJoin:
			return r
		case exec.FullJoin:
			return l + r
		}
		if len(x.conds) == 0 {
			return l * r
		}
		return max(l, r)
	}
	return 1000
}
