package catalog

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/pgerr"
)

// ExecComment runs COMMENT ON TABLE | VIEW | MATERIALIZED VIEW | FOREIGN
// TABLE | INDEX | COLUMN | SCHEMA ... IS 'text' (or IS NULL / ”, which
// removes the comment), resolving the object along searchPath with
// PostgreSQL's errors. Other object types are 0A000.
func (c *Catalog) ExecComment(stmt *pg.CommentStmt, searchPath []string) error {
	return c.ExecCommentChecked(stmt, searchPath, nil)
}

// ExecCommentChecked is ExecComment that first calls owner (when not nil)
// with the relation whose comment (or whose column's or key index's) is
// set; an error from it refuses the statement (must be owner).
func (c *Catalog) ExecCommentChecked(stmt *pg.CommentStmt, searchPath []string, owner func(*Relation) error) error {
	if owner == nil {
		owner = func(*Relation) error { return nil }
	}
	var names []string
	switch o := stmt.Object.GetNode().(type) {
	case *pg.Node_String_:
		names = []string{o.String_.Sval}
	case *pg.Node_List:
		for _, it := range o.List.Items {
			names = append(names, it.GetString_().GetSval())
		}
	}
	if len(names) == 0 {
		return pgerr.Unsupported("COMMENT ON this object is not supported")
	}
	s := c.snap()
	switch stmt.Objtype {
	case pg.ObjectType_OBJECT_SCHEMA:
		sc := s.schemas[names[0]]
		if sc == nil {
			return pgerr.New(pgerr.UndefinedSchema, "schema \"%s\" does not exist", names[0])
		}
		return c.Comment(sc.OID, 0, stmt.Comment)
	case pg.ObjectType_OBJECT_COLUMN:
		if len(names) < 2 {
			return pgerr.New("42601", "column name must be qualified")
		}
		r, err := s.resolveNames(names[:len(names)-1], searchPath)
		if err != nil {
			return err
		}
		col := names[len(names)-1]
		i := r.ColumnIndex(col)
		if i < 0 {
			return pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", col, r.Name)
		}
		if err := owner(r); err != nil {
			return err
		}
		return c.Comment(r.OID, int32(i+1), stmt.Comment)
	case pg.ObjectType_OBJECT_INDEX:
		var oid uint32
		if len(names) == 1 {
			oid = s.lookupAny(names[0], searchPath)
		} else if s.schemas[names[len(names)-2]] == nil {
			return pgerr.New(pgerr.UndefinedSchema, "schema \"%s\" does not exist", names[len(names)-2])
		} else {
			oid = s.indexByName(names[len(names)-2], names[len(names)-1])
		}
		if oid == 0 || s.indexes[oid] == nil {
			return pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", names[len(names)-1])
		}
		if err := owner(s.indexes[oid]); err != nil {
			return err
		}
		return c.Comment(oid, 0, stmt.Comment)
	}
	want := map[pg.ObjectType]RelKind{
		pg.ObjectType_OBJECT_TABLE: KindTable, pg.ObjectType_OBJECT_VIEW: KindView,
		pg.ObjectType_OBJECT_MATVIEW: KindMatView, pg.ObjectType_OBJECT_FOREIGN_TABLE: KindSource,
	}
	kind, ok := want[stmt.Objtype]
	if !ok {
		return pgerr.Unsupported("COMMENT ON this object is not supported")
	}
	r, err := s.resolveNames(names, searchPath)
	if err != nil {
		return err
	}
	if r.Kind != kind {
		return pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a %s", r.Name, kindWord(kind))
	}
	if err := owner(r); err != nil {
		return err
	}
	return c.Comment(r.OID, 0, stmt.Comment)
}

// resolveNames resolves a relation named by [schema.]name (a leading
// database name is ignored).
func (s *snapshot) resolveNames(names []string, searchPath []string) (*Relation, error) {
	if len(names) == 1 {
		return s.resolve("", names[0], searchPath)
	}
	return s.resolve(names[len(names)-2], names[len(names)-1], searchPath)
}
