package sql

import (
	"regexp"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// pg_query's deparser writes the operand of IS [NOT] NULL, and of IS [NOT]
// TRUE/FALSE/UNKNOWN, without the parentheses PostgreSQL needs when it is a
// NOT, AND, OR or IS [NOT] DISTINCT FROM: (NOT b) IS NULL comes out as
// NOT b IS NULL, which reads back as NOT (b IS NULL), and
// (a IS DISTINCT FROM b) IS TRUE as text that does not parse. A view
// stored so would change its meaning, or fail to plan, at the next start.
// Deparse checks that its text reads back as the tree it was given and,
// where it does not, casts such operands to boolean (a no-op, which the
// deparser writes in parentheses) and deparses again.

// readsBack reports whether text parses to the tree of stmt (locations
// aside).
func readsBack(stmt *pg.Node, text string) bool {
	r, err := pg.Parse(text)
	if err != nil || len(r.Stmts) != 1 {
		return false
	}
	a, err1 := protojson.Marshal(stmt)
	b, err2 := protojson.Marshal(r.Stmts[0].Stmt)
	if err1 != nil || err2 != nil {
		return false
	}
	return locations.ReplaceAllString(string(a), "") == locations.ReplaceAllString(string(b), "")
}

var locations = regexp.MustCompile(`"location":-?\d+,?`)

// withParenthesizedTests returns a copy of stmt whose IS-test operands
// that need parentheses are cast to boolean, and whether there were any.
func withParenthesizedTests(stmt *pg.Node) (*pg.Node, bool) {
	out := proto.Clone(stmt).(*pg.Node)
	changed := false
	wrap := func(arg *pg.Node) *pg.Node {
		if !needsParens(arg) {
			return arg
		}
		changed = true
		return &pg.Node{Node: &pg.Node_TypeCast{TypeCast: &pg.TypeCast{Arg: arg, TypeName: &pg.TypeName{
			Names:   []*pg.Node{{Node: &pg.Node_String_{String_: &pg.String{Sval: "pg_catalog"}}}, {Node: &pg.Node_String_{String_: &pg.String{Sval: "bool"}}}},
			Typemod: -1, Location: -1}, Location: -1}}}
	}
	walkMessages(out.ProtoReflect(), func(m protoreflect.Message) bool {
		switch x := m.Interface().(type) {
		case *pg.NullTest:
			x.Arg = wrap(x.Arg)
		case *pg.BooleanTest:
			x.Arg = wrap(x.Arg)
		}
		return true
	})
	return out, changed
}

// needsParens reports the operands an IS test needs parenthesized.
func needsParens(n *pg.Node) bool {
	switch x := n.GetNode().(type) {
	case *pg.Node_BoolExpr:
		return true
	case *pg.Node_AExpr:
		k := x.AExpr.Kind
		return k == pg.A_Expr_Kind_AEXPR_DISTINCT || k == pg.A_Expr_Kind_AEXPR_NOT_DISTINCT
	}
	return false
}
