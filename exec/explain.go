package exec

import (
	"encoding/json"
	"strings"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Explain renders a plan as an indented tree, two spaces a level, each line
// the node's Explain(), like PostgreSQL's EXPLAIN without costs.
func Explain(n Node) string { return Tree(n).Text(false) }

// PlanTree is a plan as EXPLAIN shows it: a node's line, the columns it
// outputs (VERBOSE), and its inputs. A write's or a MERGE clause's head
// is a PlanTree without Output above the plan of its rows. Immutable once
// built.
type PlanTree struct {
	Line     string
	Output   []string // nil for a head line
	Children []*PlanTree
	// Actual, under EXPLAIN ANALYZE (AnalyzedTree), is the node's
	// counters: the text after its line, and the same as JSON fields.
	Actual       string
	ActualFields [][2]any // (name, value) pairs, in order
}

// outputExplainer is a node that renders its output columns itself for
// VERBOSE (a projection, its expressions); others show their column names.
type outputExplainer interface {
	ExplainOutput() []string
}

// Tree is n's plan as a PlanTree.
func Tree(n Node) *PlanTree { return treeWith(n, nil) }

// treeWith is Tree with each node's PlanTree passed to also (when not
// nil) once built.
func treeWith(n Node, also func(Node, *PlanTree)) *PlanTree {
	t := &PlanTree{Line: n.Explain()}
	for _, c := range n.Children() {
		t.Children = append(t.Children, treeWith(c, also))
	}
	if o, ok := n.(outputExplainer); ok {
		t.Output = o.ExplainOutput()
	} else {
		t.Output = passedOutput(n.Columns(), t.Children)
	}
	if t.Output == nil {
		t.Output = []string{} // a plan node, with no columns
	}
	if also != nil {
		also(n, t)
	}
	return t
}

// passedOutput names a node's output columns after its inputs' where
// they pass through: all of them when the node outputs its inputs'
// columns in order (a join, a filter, a sort), else each column whose
// name one input column alone has; the others by their names.
func passedOutput(cols []types.Column, inputs []*PlanTree) []string {
	var in []string
	for _, c := range inputs {
		in = append(in, c.Output...)
	}
	bare := func(s string) string { return s[strings.LastIndexByte(s, '.')+1:] }
	out := make([]string, len(cols))
	same := len(in) == len(cols)
	for i, c := range cols {
		out[i] = c.Name
		same = same && bare(in[i]) == c.Name
	}
	if same {
		return in
	}
	for i, c := range cols {
		match := ""
		for _, o := range in {
			if bare(o) == c.Name {
				if match != "" {
					match = ""
					break
				}
				match = o
			}
		}
		if match != "" {
			out[i] = match
		}
	}
	return out
}

// Text renders t two spaces a level; verbose adds an "Output:" line under
// each plan node, as PostgreSQL's EXPLAIN (VERBOSE) does.
func (t *PlanTree) Text(verbose bool) string {
	var sb strings.Builder
	t.textTo(&sb, 0, verbose)
	return sb.String()
}

func (t *PlanTree) textTo(sb *strings.Builder, depth int, verbose bool) {
	pad := strings.Repeat("  ", depth)
	sb.WriteString(pad)
	sb.WriteString(t.Line)
	if t.Actual != "" {
		sb.WriteString("  ")
		sb.WriteString(t.Actual)
	}
	sb.WriteByte('\n')
	if verbose && t.Output != nil {
		sb.WriteString(pad)
		sb.WriteString("  Output: ")
		sb.WriteString(strings.Join(t.Output, ", "))
		sb.WriteByte('\n')
	}
	for _, c := range t.Children {
		c.textTo(sb, depth+1, verbose)
	}
}

// JSON renders t as EXPLAIN (FORMAT JSON) does: an array of one object
// whose "Plan" is the root node. Each node has its "Node Type" (its
// line's leading words: "Seq Scan", "Hash Join", "Sort", ...), the rest of
// its line as "Detail" (and a scan's table as "Relation Name"), "Output"
// with verbose, and its inputs as "Plans".
func (t *PlanTree) JSON(verbose bool) (string, error) { return t.JSONWith(verbose, nil) }

// JSONWith is JSON with more fields beside "Plan" (EXPLAIN ANALYZE's
// "Planning Time" and "Execution Time").
func (t *PlanTree) JSONWith(verbose bool, top map[string]any) (string, error) {
	doc := map[string]any{"Plan": t.jsonNode(verbose)}
	for k, v := range top {
		doc[k] = v
	}
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false) // "a > 1", not "a \u003e 1"
	enc.SetIndent("", "  ")
	err := enc.Encode([]map[string]any{doc})
	return strings.TrimRight(sb.String(), "\n"), err
}

func (t *PlanTree) jsonNode(verbose bool) map[string]any {
	typ, detail := splitPlanLine(t.Line)
	m := map[string]any{"Node Type": typ}
	if detail != "" {
		m["Detail"] = detail
	}
	if rel, ok := strings.CutPrefix(detail, "on "); ok && strings.HasSuffix(typ, "Scan") {
		m["Relation Name"] = strings.Fields(rel)[0] // as PostgreSQL names a scan's table
	}
	for _, f := range t.ActualFields {
		m[f[0].(string)] = f[1]
	}
	if verbose && t.Output != nil {
		m["Output"] = t.Output
	}
	if len(t.Children) > 0 {
		var plans []map[string]any
		for _, c := range t.Children {
			plans = append(plans, c.jsonNode(verbose))
		}
		m["Plans"] = plans
	}
	return m
}

// splitPlanLine splits a plan line into its node type and the rest: the
// type ends at ": ", " on ", " (" or a digit's word ("Limit 3").
func splitPlanLine(line string) (typ, detail string) {
	end := len(line)
	for _, sep := range []string{": ", " on ", " ("} {
		if i := strings.Index(line, sep); i >= 0 && i < end {
			end = i
		}
	}
	words := strings.Fields(line[:end])
	for i, w := range words {
		if w[0] >= '0' && w[0] <= '9' || w[0] == '-' || w[0] == '$' {
			end = strings.Index(line, w)
			words = words[:i]
			break
		}
	}
	typ = strings.Join(words, " ")
	detail = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line[end:]), ":"))
	return typ, detail
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
