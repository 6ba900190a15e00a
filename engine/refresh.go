package engine

import (
	"context"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
)

// execRefresh runs REFRESH MATERIALIZED VIEW [CONCURRENTLY] v. Materialized
// views are maintained continuously, so there is nothing to recompute; the
// statement waits as FLUSH does (every change committed before it has then
// reached every view) and says so in a NOTICE. Tools such as dbt send it
// after loading data, and then read the view. WITH NO DATA (which would
// empty the view and make it unreadable in PostgreSQL) is refused.
func (s *Session) execRefresh(ctx context.Context, r *pg.RefreshMatViewStmt) (*Result, error) {
	rv := r.Relation
	rel, err := s.eng.cat.Resolve(rv.GetSchemaname(), rv.GetRelname(), s.set.searchPath())
	if err != nil {
		return nil, err
	}
	switch rel.Kind {
	case catalog.KindMatView:
	case catalog.KindTable:
		// PostgreSQL: a table passes the ownership check and fails later.
		return nil, pgerr.New(pgerr.FeatureNotSupported, "\"%s\" is not a materialized view", rel.Name)
	default:
		return nil, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a table or materialized view", rel.Name)
	}
	if err := s.checkOwner(rel); err != nil { // grant.go: PostgreSQL's REFRESH needs ownership
		return nil, err
	}
	if r.SkipData {
		return nil, pgerr.Unsupported("REFRESH MATERIALIZED VIEW ... WITH NO DATA is not supported: materialized views are maintained continuously")
	}
	if s.eng.flow != nil {
		if err := s.eng.flow.Flush(ctx); err != nil {
			return nil, err
		}
	}
	n := pgerr.New(pgerr.SuccessfulCompletion, "materialized view \"%s\" is maintained continuously; REFRESH only waited until it caught up with its inputs", rel.Name)
	n.Severity = pgerr.SevNotice
	return &Result{Tag: "REFRESH MATERIALIZED VIEW", Notices: []*pgerr.Error{n}}, nil
}

// dropSources runs DROP SOURCE / DROP FOREIGN TABLE name [, ...]: each name
// is dropped in turn, as DROP TABLE does. A name may be schema-qualified
// ("s.src"). Under DROP FOREIGN TABLE the messages are PostgreSQL's for
// foreign tables (42704 `foreign table "x" does not exist`, 42809 `"t" is
// not a foreign table`).
func (s *Session) dropSources(names []string, ifExists, cascade bool, tag string) (*Result, error) {
	res := &Result{Tag: tag}
	defer s.eng.stopDroppedJobs()
	foreign := tag == "DROP FOREIGN TABLE"
	split := func(full string) (string, string) {
		if i := strings.LastIndexByte(full, '.'); i > 0 {
			return full[:i], full[i+1:]
		}
		return "", full
	}
	// A missing name, or one other objects depend on (without CASCADE),
	// fails the statement before anything is dropped: dropping that one
	// first gives the error and drops nothing.
	order := make([]string, 0, len(names))
	deps, _ := s.eng.cat.(interface {
		Dependents(oid uint32) []*catalog.Relation
	})
	for _, full := range names {
		schema, name := split(full)
		rel, err := s.eng.cat.Resolve(schema, name, s.set.searchPath())
		if err == nil && rel != nil && rel.Kind == catalog.KindSource {
			if err := s.checkOwner(rel); err != nil { // grant.go
				return nil, err
			}
		}
		switch {
		case pgerr.CodeOf(err) == pgerr.UndefinedTable && !ifExists:
			err := pgerr.New(pgerr.UndefinedTable, "source \"%s\" does not exist", full)
			if foreign {
				return nil, asForeignTable(err)
			}
			return nil, err
		case err == nil && !cascade && deps != nil && len(deps.Dependents(rel.OID)) > 0:
			order = append([]string{full}, order...)
		default:
			order = append(order, full)
		}
	}
	for _, full := range order {
		schema, name := split(full)
		notice, err := s.eng.cat.Drop(catalog.KindSource, schema, name, ifExists, cascade, s.set.searchPath())
		if err != nil {
			if foreign {
				err = asForeignTable(err)
			}
			return res, err
		}
		if foreign {
			notice = strings.Replace(notice, "source \"", "foreign table \"", 1)
		}
		res.Notices = appendNotice(res.Notices, notice)
	}
	return res, nil
}

// asForeignTable words a source error as PostgreSQL words it for foreign
// tables.
func asForeignTable(err error) error {
	e := pgerr.As(err)
	if e == nil {
		return err
	}
	c := *e
	switch {
	case c.Code == pgerr.UndefinedTable && strings.HasPrefix(c.Message, "source \""):
		c.Code, c.Message = pgerr.UndefinedObject, "foreign table"+strings.TrimPrefix(c.Message, "source")
	case c.Code == pgerr.WrongObjectType:
		c.Message = strings.Replace(c.Message, "is not a source", "is not a foreign table", 1)
	}
	return &c
}

// execAlterSource runs ALTER SOURCE (parsed as ALTER TABLE): only RENAME TO,
// applied as ALTER FOREIGN TABLE ... RENAME TO.
func (s *Session) execAlterSource(ctx context.Context, env *planner.Env, n *pg.Node) (*Result, error) {
	r := n.GetRenameStmt()
	if r == nil || r.RenameType != pg.ObjectType_OBJECT_TABLE {
		return nil, pgerr.Unsupported("ALTER SOURCE supports only RENAME TO")
	}
	rc := proto.Clone(r).(*pg.RenameStmt)
	rc.RenameType = pg.ObjectType_OBJECT_FOREIGN_TABLE
	res, err := s.execAlter(ctx, env, &pg.Node{Node: &pg.Node_RenameStmt{RenameStmt: rc}})
	if e := pgerr.As(err); e != nil && e.Code == pgerr.WrongObjectType {
		c := *e
		c.Message = strings.Replace(c.Message, "is not a foreign table", "is not a source", 1)
		return nil, &c
	}
	if res != nil {
		res.Tag = "ALTER SOURCE"
	}
	return res, err
}
