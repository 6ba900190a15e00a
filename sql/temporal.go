package sql

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/streamsql/streamsql/pgerr"
)

// TemporalRelations matches FOR SYSTEM_TIME AS OF clauses (Ext.TemporalJoins
// of the statement root belongs to) with the relations of root they
// follow: the result maps a RangeVar's Location to its clause. The lifter
// already refused a clause that does not follow a name, so each follows
// the last relation before it; a clause with none is left out (the
// planner then refuses it as not following a JOIN's table).
func TemporalRelations(root *pg.Node, tjs []TemporalJoin) map[int32]TemporalJoin {
	if len(tjs) == 0 || root == nil {
		return nil
	}
	var locs []int32
	EachRangeVar(root.ProtoReflect(), func(rv *pg.RangeVar) { locs = append(locs, rv.Location) })
	out := map[int32]TemporalJoin{}
	for _, tj := range tjs {
		best := int32(-1)
		for _, l := range locs {
			if int(l) < tj.Pos && l > best {
				best = l
			}
		}
		if best >= 0 {
			out[best] = tj
		}
	}
	return out
}

// DeparseTemporal is Deparse for a statement whose relations at the
// locations of rels (TemporalRelations) carry FOR SYSTEM_TIME AS OF
// clauses: the text has each clause after its relation's name again (the
// parse tree has no place for it), so that the stored query plans the same
// after a restart. A marked relation that is no longer in the tree (a
// rewrite replaced it) is an error: the clause would be lost.
func DeparseTemporal(stmt *pg.Node, rels map[int32]TemporalJoin) (string, error) {
	return DeparseExtended(stmt, rels, nil)
}

// DeparseExtended is Deparse for a statement with both kinds of clause
// the parse tree has no place for: FOR SYSTEM_TIME AS OF after the
// relations at the locations of rels (DeparseTemporal) and SESSION WITH
// GAP frames in the windows at the locations of wins (DeparseSessions).
// Each is deparsed as a placeholder, then written back as it was.
func DeparseExtended(stmt *pg.Node, rels map[int32]TemporalJoin, wins map[int32]SessionFrame) (string, error) {
	if len(rels) == 0 && len(wins) == 0 {
		return Deparse(stmt)
	}
	type mark struct {
		what             string
		placeholder, out string
	}
	var marks []*mark
	var err error
	stmt = proto.Clone(stmt).(*pg.Node) // the caller's tree is left alone
	EachRangeVar(stmt.ProtoReflect(), func(rv *pg.RangeVar) {
		tj, ok := rels[rv.Location]
		if !ok || err != nil {
			return
		}
		// The name as PostgreSQL writes it (quoted where needed).
		name, e := Deparse(&pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &pg.SelectStmt{
			TargetList: []*pg.Node{{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Val: &pg.Node{Node: &pg.Node_ColumnRef{ColumnRef: &pg.ColumnRef{Fields: []*pg.Node{{Node: &pg.Node_AStar{AStar: &pg.A_Star{}}}}}}}}}}},
			FromClause: []*pg.Node{{Node: &pg.Node_RangeVar{RangeVar: &pg.RangeVar{Schemaname: rv.Schemaname, Relname: rv.Relname, Inh: true}}}},
		}}})
		if e != nil {
			err = e
			return
		}
		name = strings.TrimPrefix(name, "SELECT * FROM ")
		m := &mark{what: "FOR SYSTEM_TIME AS OF of " + rv.Relname,
			placeholder: fmt.Sprintf("streamsql_temporal_%d_", len(marks)),
			out:         name + " FOR SYSTEM_TIME AS OF " + tj.AsOf}
		rv.Schemaname, rv.Relname = "", m.placeholder
		marks = append(marks, m)
	})
	if err != nil {
		return "", err
	}
	if len(marks) != len(rels) {
		return "", pgerr.Internal("deparse: a relation marked FOR SYSTEM_TIME AS OF is gone from the tree")
	}
	sessions := 0
	eachWindowDef(stmt.ProtoReflect(), func(wd *pg.WindowDef) {
		f, ok := wins[wd.Location]
		if !ok {
			return
		}
		name := fmt.Sprintf("streamsql_session_%d_", sessions)
		sessions++
		wd.FrameOptions = frameNonDefault | frameRows | frameBetween | frameStartCurrentRow | frameEndOffsetFollowing
		wd.EndOffset = &pg.Node{Node: &pg.Node_ColumnRef{ColumnRef: &pg.ColumnRef{Fields: []*pg.Node{{Node: &pg.Node_String_{String_: &pg.String{Sval: name}}}}}}}
		marks = append(marks, &mark{what: "SESSION WITH GAP " + f.Gap.Text,
			placeholder: "ROWS BETWEEN CURRENT ROW AND " + name + " FOLLOWING",
			out:         "SESSION WITH GAP " + f.Gap.Text})
	})
	if sessions != len(wins) {
		return "", pgerr.Internal("deparse: a window with a SESSION WITH GAP frame is gone from the tree")
	}
	text, err := Deparse(stmt)
	if err != nil {
		return "", err
	}
	for _, m := range marks {
		if strings.Count(text, m.placeholder) != 1 {
			return "", pgerr.Internal("deparse: %s was lost", m.what)
		}
		text = strings.Replace(text, m.placeholder, m.out, 1)
	}
	return text, nil
}

// EachRangeVar calls f on every relation reference of a parse tree, in
// the tree's order.
func EachRangeVar(m protoreflect.Message, f func(*pg.RangeVar)) {
	walkMessages(m, func(m protoreflect.Message) bool {
		rv, ok := m.Interface().(*pg.RangeVar)
		if ok {
			f(rv)
		}
		return !ok
	})
}

// EachColumnRef calls f for every ColumnRef in a parse tree.
func EachColumnRef(m protoreflect.Message, f func(*pg.ColumnRef)) {
	walkMessages(m, func(m protoreflect.Message) bool {
		cr, ok := m.Interface().(*pg.ColumnRef)
		if ok {
			f(cr)
		}
		return !ok
	})
}

// walkMessages visits m and, while visit returns true, the messages under it.
func walkMessages(m protoreflect.Message, visit func(protoreflect.Message) bool) {
	if !visit(m) {
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind || fd.IsMap() {
			return true
		}
		if fd.IsList() {
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				walkMessages(l.Get(i).Message(), visit)
			}
			return true
		}
		walkMessages(v.Message(), visit)
		return true
	})
}
