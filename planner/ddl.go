package planner

import (
	"slices"
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// CreateSchema is the schema a new relation goes to: the one named, else
// the first schema of the search path other than pg_catalog, else public.
// A temporary relation (rv.Relpersistence "t", or a name qualified with
// pg_temp) goes to the session's temporary schema, env.TempSchema; naming
// another schema for it is 42P16, as in PostgreSQL. Unqualified permanent
// relations are never created in the temporary schema.
func CreateSchema(env *Env, rv *pg.RangeVar) (string, error) { return createSchema(env, rv) }

// createSchema is CreateSchema.
func createSchema(env *Env, rv *pg.RangeVar) (string, error) {
	temp := ""
	if env != nil {
		temp = env.TempSchema
	}
	isTemp := rv.Relpersistence == "t" || rv.Schemaname == "pg_temp" || temp != "" && rv.Schemaname == temp
	if isTemp {
		if rv.Schemaname != "" && rv.Schemaname != "pg_temp" && rv.Schemaname != temp {
			return "", pgerr.New(pgerr.InvalidTableDefinition, "cannot create temporary relation in non-temporary schema")
		}
		if temp == "" {
			return "", pgerr.Unsupported("temporary relations are not supported here")
		}
		return temp, nil
	}
	if rv.Schemaname != "" {
		return rv.Schemaname, nil
	}
	if env != nil {
		for _, s := range env.SearchPath {
			if s != "pg_catalog" && s != "" && !strings.HasPrefix(s, "$") && !catalog.IsTempSchema(s) {
				return s, nil
			}
		}
	}
	return "public", nil
}

// deparseExpr renders an expression as SQL text (for column defaults).
func deparseExpr(n *pg.Node) (string, error) {
	sel := &pg.SelectStmt{TargetList: []*pg.Node{{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Val: n}}}}}
	text, err := sql.Deparse(&pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel}})
	if err != nil {
		return "", fmtErr("deparse default: %w", err)
	}
	return strings.TrimPrefix(text, "SELECT "), nil
}

func tableDef(env *Env, stmt *pg.CreateStmt) (*catalog.Relation, error) {
	b := newBinder(env)
	rv := stmt.Relation
	if len(stmt.InhRelations) > 0 || stmt.Partspec != nil || stmt.OfTypename != nil || stmt.Partbound != nil {
		return nil, b.newErr(pgerr.FeatureNotSupported, rv.Location, "inheritance, partitioning and typed tables are not supported")
	}
	params, _, err := TableStorageParams(nil, stmt.Options, false)
	if err != nil {
		return nil, err // PostgreSQL prints no position for these
	}
	schema, err := createSchema(env, rv)
	if err != nil {
		return nil, err
	}
	rel := &catalog.Relation{Schema: schema, Name: rv.Relname, Kind: catalog.KindTable, StorageParams: params}
	var pk []string
	var pkName string
	var pkLoc int32 = -1
	var uniques []uniqueSpec
	var pending []pendingConstraint          // CHECK and FOREIGN KEY (constraints.go)
	var likeChecks []catalog.CheckConstraint // LIKE ... INCLUDING CONSTRAINTS
	var likePKs [][]string                   // LIKE ... INCLUDING INDEXES: added after the table's own, as PostgreSQL does
	var gens []pendingGenerated              // GENERATED ALWAYS AS (expr) STORED (generated.go)
	addUnique := func(c *pg.Constraint, cols []string) error {
		if c.NullsNotDistinct || len(c.Including) > 0 || len(c.Options) > 0 || c.Indexspace != "" {
			return b.newErr(pgerr.FeatureNotSupported, c.Location, "UNIQUE NULLS NOT DISTINCT, INCLUDE, WITH and USING INDEX TABLESPACE are not supported")
		}
		uniques = append(uniques, uniqueSpec{cols: cols, name: c.Conname, loc: c.Location})
		return nil
	}
	setPK := func(cols []string, name string, loc int32) error {
		if pk != nil {
			return b.newErr(pgerr.InvalidTableDefinition, loc, "multiple primary keys for table \"%s\" are not allowed", rel.Name)
		}
		pk, pkName, pkLoc = cols, name, loc
		return nil
	}
	for _, elt := range stmt.TableElts {
		switch {
		case elt.GetColumnDef() != nil:
			cd := elt.GetColumnDef()
			if rel.ColumnIndex(cd.Colname) >= 0 {
				return nil, pgerr.New(pgerr.DuplicateColumn, "column \"%s\" specified more than once", cd.Colname)
			}
			serial, st := serialType(cd.TypeName)
			t, err := st, error(nil)
			var dom uint32
			if serial == "" {
				t, dom, err = b.columnType(cd.TypeName) // a domain too (domain.go)
			}
			if err != nil {
				return nil, b.errAt(err, cd.TypeName.Location)
			}
			if err := b.columnCollate(cd, t); err != nil { // collate.go
				return nil, err
			}
			col := catalog.Column{Name: cd.Colname, Type: t, NotNull: cd.IsNotNull, Serial: serial, Domain: dom}
			for _, cn := range cd.Constraints {
				c := cn.GetConstraint()
				switch c.Contype {
				case pg.ConstrType_CONSTR_NOTNULL:
					col.NotNull = true
				case pg.ConstrType_CONSTR_NULL:
				case pg.ConstrType_CONSTR_IDENTITY:
					if col.Generated != "" {
						return nil, b.newErr(pgerr.SyntaxError, c.Location, "both identity and generation expression specified for column \"%s\" of table \"%s\"", cd.Colname, rel.Name)
					}
					if col.Identity != 0 {
						return nil, b.newErr(pgerr.SyntaxError, c.Location, "multiple identity specifications for column \"%s\" of table \"%s\"", cd.Colname, rel.Name)
					}
					if serial != "" || col.Default != "" {
						return nil, b.newErr(pgerr.SyntaxError, c.Location, "both default and identity specified for column \"%s\" of table \"%s\"", cd.Colname, rel.Name)
					}
					switch t.Kind {
					case types.Int2:
						col.Serial = "smallint"
					case types.Int4:
						col.Serial = "integer"
					case types.Int8:
						col.Serial = "bigint"
					default:
						return nil, pgerr.New(pgerr.InvalidParameterValue, "identity column type must be smallint, integer, or bigint")
					}
					spec, err := SeqSpec(c.Options, false)
					if err != nil {
						return nil, err
					}
					if spec.OwnedBy != nil {
						return nil, pgerr.Unsupported("OWNED BY in the sequence options of an identity column is not supported")
					}
					col.SerialSpec, col.Identity = &spec, 'a'
					if c.GeneratedWhen == "d" {
						col.Identity = 'd'
					}
				case pg.ConstrType_CONSTR_GENERATED:
					if err := b.generatedColumn(rel, &col, c, serial != ""); err != nil {
						return nil, err
					}
					gens = append(gens, pendingGenerated{col: len(rel.Columns), expr: c.RawExpr})
				case pg.ConstrType_CONSTR_DEFAULT:
					if col.Generated != "" {
						return nil, b.newErr(pgerr.SyntaxError, c.Location, "both default and generation expression specified for column \"%s\" of table \"%s\"", cd.Colname, rel.Name)
					}
					if col.Identity != 0 {
						return nil, b.newErr(pgerr.SyntaxError, c.Location, "both default and identity specified for column \"%s\" of table \"%s\"", cd.Colname, rel.Name)
					}
					if serial != "" {
						return nil, pgerr.New(pgerr.SyntaxError, "multiple default values specified for column \"%s\" of table \"%s\"", cd.Colname, rel.Name)
					}
					text, err := b.columnDefault(c.RawExpr, col)
					if err != nil {
						return nil, err
					}
					col.Default = text
				case pg.ConstrType_CONSTR_PRIMARY:
					if err := setPK([]string{cd.Colname}, c.Conname, c.Location); err != nil {
						return nil, err
					}
				case pg.ConstrType_CONSTR_UNIQUE:
					if err := addUnique(c, []string{cd.Colname}); err != nil {
						return nil, err
					}
				case pg.ConstrType_CONSTR_CHECK, pg.ConstrType_CONSTR_FOREIGN:
					pending = append(pending, pendingConstraint{c: c, column: cd.Colname})
				case pg.ConstrType_CONSTR_ATTR_DEFERRED: // DEFERRABLE alone changes nothing (constraints.go)
					return nil, b.newErr(pgerr.FeatureNotSupported, c.Location, "INITIALLY DEFERRED constraints are not supported")
				case pg.ConstrType_CONSTR_ATTR_DEFERRABLE, pg.ConstrType_CONSTR_ATTR_NOT_DEFERRABLE, pg.ConstrType_CONSTR_ATTR_IMMEDIATE:
				default:
					return nil, b.newErr(pgerr.FeatureNotSupported, c.Location, "%s constraints are not supported", constraintName(c.Contype))
				}
			}
			rel.Columns = append(rel.Columns, col)
		case elt.GetConstraint() != nil:
			c := elt.GetConstraint()
			if err := b.refuseDeferrable(c); err != nil {
				return nil, err
			}
			switch c.Contype {
			case pg.ConstrType_CONSTR_CHECK, pg.ConstrType_CONSTR_FOREIGN:
				pending = append(pending, pendingConstraint{c: c})
			case pg.ConstrType_CONSTR_PRIMARY:
				if err := setPK(strs(c.Keys), c.Conname, c.Location); err != nil {
					return nil, err
				}
			case pg.ConstrType_CONSTR_UNIQUE:
				if err := addUnique(c, strs(c.Keys)); err != nil {
					return nil, err
				}
			default:
				return nil, b.newErr(pgerr.FeatureNotSupported, c.Location, "%s constraints are not supported", constraintName(c.Contype))
			}
		case elt.GetTableLikeClause() != nil: // ddl_like.go
			like, err := b.tableLike(rel, elt.GetTableLikeClause())
			if err != nil {
				return nil, err
			}
			if like.pk != nil {
				likePKs = append(likePKs, like.pk)
			}
			for _, u := range like.uniques {
				uniques = append(uniques, uniqueSpec{cols: u, loc: -1})
			}
			likeChecks = append(likeChecks, like.checks...)
		default:
			return nil, b.newErr(pgerr.FeatureNotSupported, rv.Location, "%s in CREATE TABLE is not supported", nodeKind(elt))
		}
	}
	if err := b.bindGenerated(rel, gens); err != nil { // generated.go
		return nil, err
	}
	for _, cols := range likePKs {
		if err := setPK(cols, "", -1); err != nil {
			return nil, err
		}
	}
	if len(rel.Columns) > 1600 {
		return nil, pgerr.New(pgerr.TooManyColumns, "tables can have at most 1600 columns")
	}
	for _, name := range pk {
		i := rel.ColumnIndex(name)
		if i < 0 {
			return nil, b.newErr(pgerr.UndefinedColumn, pkLoc, "column \"%s\" named in key does not exist", name)
		}
		for _, j := range rel.PrimaryKey {
			if j == i {
				return nil, b.newErr(pgerr.DuplicateColumn, pkLoc, "column \"%s\" appears twice in primary key constraint", name)
			}
		}
		rel.PrimaryKey = append(rel.PrimaryKey, i)
		rel.Columns[i].NotNull = true
	}
	if pk != nil {
		rel.PKName = pkName
		if rel.PKName == "" {
			rel.PKName = rel.Name + "_pkey"
		}
	}
	if err := b.uniqueKeys(rel, uniques); err != nil {
		return nil, err
	}
	if err := b.tableConstraints(rel, pending); err != nil {
		return nil, err
	}
	for _, c := range likeChecks {
		if slices.ContainsFunc(rel.Checks, func(o catalog.CheckConstraint) bool { return o.Name == c.Name }) {
			return nil, pgerr.New(pgerr.DuplicateObject, "constraint \"%s\" for relation \"%s\" already exists", c.Name, rel.Name)
		}
		rel.Checks = append(rel.Checks, c)
	}
	return rel, nil
}

func constraintName(t pg.ConstrType) string {
	switch t {
	case pg.ConstrType_CONSTR_UNIQUE:
		return "UNIQUE"
	case pg.ConstrType_CONSTR_CHECK:
		return "CHECK"
	case pg.ConstrType_CONSTR_FOREIGN:
		return "FOREIGN KEY"
	case pg.ConstrType_CONSTR_EXCLUSION:
		return "EXCLUDE"
	case pg.ConstrType_CONSTR_IDENTITY:
		return "identity"
	case pg.ConstrType_CONSTR_GENERATED:
		return "generated column"
	}
	return "these"
}

// columnDefault validates a DEFAULT expression (it must bind without
// columns or subqueries and be assignable to the column) and returns its text.
func (b *binder) columnDefault(n *pg.Node, col catalog.Column) (string, error) {
	e, err := b.expr(&level{clause: inDefault}, n)
	if err != nil {
		if pe := pgerr.As(err); pe != nil && (pe.Code == pgerr.UndefinedColumn || pe.Code == pgerr.UndefinedTable) {
			return "", b.newErr(pgerr.FeatureNotSupported, nodeLoc(n), "cannot use column reference in DEFAULT expression")
		}
		return "", err
	}
	if hasSubquery(e) {
		return "", b.newErr(pgerr.FeatureNotSupported, nodeLoc(n), "cannot use subquery in DEFAULT expression")
	}
	if _, err := b.assign(e, col, nodeLoc(n)); err != nil {
		return "", err
	}
	return deparseExpr(n)
}

func viewDef(env *Env, stmt *pg.ViewStmt, source string) (*catalog.Relation, []uint32, error) {
	b := newBinder(env)
	if b.src == "" {
		b.src = source
	}
	if err := relOptions(b, OptView, stmt.Options); err != nil {
		return nil, nil, err
	}
	if stmt.WithCheckOption != pg.ViewCheckOption_NO_CHECK_OPTION && stmt.WithCheckOption != pg.ViewCheckOption_VIEW_CHECK_OPTION_UNDEFINED {
		return nil, nil, b.newErr(pgerr.FeatureNotSupported, stmt.View.Location, "WITH CHECK OPTION is not supported")
	}
	plan, err := b.query(stmt.Query, nil, nil, false)
	if err != nil {
		return nil, nil, err
	}
	if len(b.params) > len(envParams(env)) {
		return nil, nil, pgerr.New(pgerr.UndefinedParameter, "there is no parameter $%d", len(envParams(env))+1)
	}
	ids := plan.outIDs()
	aliases := strs(stmt.Aliases)
	if len(aliases) > len(ids) {
		return nil, nil, b.newErr(pgerr.SyntaxError, -1, "CREATE VIEW specifies more column names than columns")
	}
	schema, err := createSchema(env, stmt.View)
	if err != nil {
		return nil, nil, err
	}
	rel := &catalog.Relation{Schema: schema, Name: stmt.View.Relname, Kind: catalog.KindView}
	for i, id := range ids {
		name := b.cols[id].name
		if i < len(aliases) {
			name = aliases[i]
		}
		if rel.ColumnIndex(name) >= 0 {
			return nil, nil, pgerr.New(pgerr.DuplicateColumn, "column \"%s\" specified more than once", name)
		}
		rel.Columns = append(rel.Columns, catalog.Column{Name: name, Type: b.cols[id].t})
	}
	text, err := sql.DeparseSessions(stmt.Query, sql.SessionWindows(stmt.Query, env.SessionFrames))
	if err != nil {
		return nil, nil, fmtErr("deparse view query: %w", err)
	}
	rel.ViewQuery = text
	deps := make([]uint32, 0, len(b.deps))
	for oid := range b.deps {
		deps = append(deps, oid)
	}
	sort.Slice(deps, func(i, j int) bool { return deps[i] < deps[j] })
	return rel, deps, nil
}

func envParams(env *Env) []types.T {
	if env == nil {
		return nil
	}
	return env.Params
}

// serialType recognizes serial, bigserial and smallserial (and serial4,
// serial8, serial2), unqualified or in pg_catalog: it returns the owned
// sequence's type and the column's type; "" when t is not one.
func serialType(t *pg.TypeName) (string, types.T) {
	if t == nil || len(t.Names) == 0 || len(t.Names) > 2 || len(t.ArrayBounds) > 0 || len(t.Typmods) > 0 {
		return "", types.T{}
	}
	if len(t.Names) == 2 && t.Names[0].GetString_().GetSval() != "pg_catalog" {
		return "", types.T{}
	}
	switch t.Names[len(t.Names)-1].GetString_().GetSval() {
	case "serial", "serial4":
		return "integer", types.TInt4
	case "bigserial", "serial8":
		return "bigint", types.TInt8
	case "smallserial", "serial2":
		return "smallint", types.TInt2
	}
	return "", types.T{}
}
