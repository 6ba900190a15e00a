package exec

import (
	"strings"

	"github.com/streamsql/streamsql/exec/expr"
)

// Explain renders a plan as an indented tree, two spaces a level, each line
// the node's Explain(), like PostgreSQL's EXPLAIN without costs.
func Explain(n Node) string {
	var sb strings.Builder
	explainTo(&sb, n, 0)
	return sb.String()
}

func explainTo(sb *strings.Builder, n Node, depth int) {
	for i := 0; i < depth; i++ {
		sb.WriteString("  ")
	}
	sb.WriteString(n.Explain())
	sb.WriteByte('\n')
	for _, c := range n.Children() {
		explainTo(sb, c, depth+1)
	}
}

// exprList renders expressions separated by ", ".
func exprList(es []expr.Expr) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return strings.Join(parts, ", ")
}

// sortKeyList renders sort keys as PostgreSQL's EXPLAIN does.
func sortKeyList(ks []SortKey) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		s := k.E.String()
		if k.Desc {
			s += " DESC"
			if !k.NullsFirst {
				s += " NULLS LAST"
			}
		} else if k.NullsFirst {
			s += " NULLS FIRST"
		}
		parts[i] = s
	}
	return strings.Join(parts, ", ")
}
