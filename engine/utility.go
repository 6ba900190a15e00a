package engine

import (
	"context"
	"strconv"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// execUtility runs the statements that need no plan: DDL, SET, transaction
// control, COPY, and the ones we accept for compatibility.
func (s *Session) execUtility(ctx context.Context, stmt sql.Statement) (*Result, error) {
	if stmt.AST == nil {
		if res, ok, err := s.execStreaming(ctx, stmt); ok {
			return res, err
		}
		return nil, pgerr.Unsupported("%s is not supported yet", streamingName(stmt))
	}
	if res, ok, err := s.execRoleStmt(stmt.AST); ok { // users.go
		return res, err
	}
	env := s.env(ctx, nil)
	env.Source = stmt.Source // error positions
	env.Emit = stmtEmit(stmt)
	env.TemporalJoins = stmtTemporal(stmt)
	env.SessionFrames = stmtSessions(stmt)
	switch n := stmt.AST.Node.(type) {
	case *pg.Node_TransactionStmt:
		return s.execTransaction(ctx, n.TransactionStmt)
	case *pg.Node_VariableSetStmt:
		return s.execSet(n.VariableSetStmt)
	case *pg.Node_CreateStmt:
		rel, err := planTableDef(env, n.CreateStmt)
		if err != nil {
			return nil, err
		}
		if stmt.Ext != nil && stmt.Ext.TableConnector != nil { // ingest_ddl.go
			if err := refuseDomainColumns(rel, "a table with a connector"); err != nil { // domain.go
				return nil, err
			}
			if err := s.connectorTable(ctx, rel, stmt.Ext.TableConnector); err != nil {
				return nil, err
			}
		}
		if err := tableStreamingClauses(env, rel, stmt); err != nil {
			return nil, err
		}
		rel.Owner = s.sessionOwner()
		s.noteTemp(rel.Schema)
		created, err := s.eng.cat.CreateTable(rel, n.CreateStmt.IfNotExists)
		if err != nil {
			return s.maybeSkip(err, n.CreateStmt.IfNotExists, "CREATE TABLE")
		}
		s.tempCreated(created)
		if err := s.copyLikeComments(n.CreateStmt, created); err != nil { // ddl.go
			s.dropQuietly(created)
			return nil, err
		}
		if err := s.clusterCreated(ctx, stmt, created, nil); err != nil { // cluster_run.go
			s.dropQuietly(created)
			return nil, err
		}
		if rel.Connector != "" {
			s.eng.startIngests() // ingest.go
		}
		return &Result{Tag: "CREATE TABLE"}, nil
	case *pg.Node_CreateTableAsStmt:
		return s.execCreateTableAs(ctx, env, n.CreateTableAsStmt, stmt)
	case *pg.Node_ViewStmt:
		env.Access = nil // as PostgreSQL, a view is checked when it is read, with its owner's rights
		rel, deps, note, err := planViewDef(env, s.eng.cat, n.ViewStmt, stmt)
		if err != nil {
			return nil, err
		}
		rel.Owner = s.sessionOwner()
		if n.ViewStmt.Replace { // replacing needs ownership (grant.go)
			if err := s.checkOwnerByName(n.ViewStmt.View.Schemaname, n.ViewStmt.View.Relname, catalog.KindView); err != nil {
				return nil, err
			}
		}
		s.noteTemp(rel.Schema)
		created, err := s.eng.cat.CreateView(rel, deps, n.ViewStmt.Replace)
		if err != nil {
			return nil, err
		}
		if !n.ViewStmt.Replace {
			s.tempCreated(created)
		}
		res := &Result{Tag: "CREATE VIEW"}
		if note != nil {
			res.Notices = append(res.Notices, note)
		}
		return res, nil
	case *pg.Node_CreateSchemaStmt:
		if err := s.eng.cat.CreateSchema(n.CreateSchemaStmt.Schemaname, n.CreateSchemaStmt.IfNotExists); err != nil {
			return s.maybeSkip(err, n.CreateSchemaStmt.IfNotExists, "CREATE SCHEMA")
		}
		return &Result{Tag: "CREATE SCHEMA"}, nil
	case *pg.Node_DropStmt:
		res, err := s.execDrop(n.DropStmt)
		if err == nil {
			err = s.clusterDropped(ctx, stmt) // cluster_run.go
		}
		return res, err
	case *pg.Node_CreateSeqStmt:
		return s.execCreateSequence(ctx, stmt, n.CreateSeqStmt) // sequence.go
	case *pg.Node_CreateFunctionStmt:
		return s.execCreateFunction(env, n.CreateFunctionStmt) // function.go
	case *pg.Node_AlterFunctionStmt:
		return s.execAlterFunction(env, n.AlterFunctionStmt) // function.go
	case *pg.Node_CreateDomainStmt:
		return s.execCreateDomain(env, n.CreateDomainStmt) // domain.go
	case *pg.Node_AlterDomainStmt:
		return s.execAlterDomain(env, n.AlterDomainStmt)
	case *pg.Node_CreateEnumStmt:
		return s.execCreateEnum(n.CreateEnumStmt) // usertype.go
	case *pg.Node_CompositeTypeStmt:
		return s.execCreateComposite(env, n.CompositeTypeStmt)
	case *pg.Node_AlterEnumStmt:
		return s.execAlterEnum(n.AlterEnumStmt)
	case *pg.Node_CreateRangeStmt:
		return nil, pgerr.Unsupported("CREATE TYPE ... AS RANGE is not supported")
	case *pg.Node_DefineStmt:
		if n.DefineStmt.Kind == pg.ObjectType_OBJECT_TYPE {
			return nil, pgerr.Unsupported("CREATE TYPE without AS ENUM (...) or AS (...) (shell and base types) is not supported")
		}
	case *pg.Node_AlterSeqStmt:
		return s.execAlterSequence(n.AlterSeqStmt)
	case *pg.Node_AlterTableStmt:
		if isOwnerChange(n.AlterTableStmt) { // grant.go
			return s.execAlterOwner(n.AlterTableStmt)
		}
		return s.execAlter(ctx, env, stmt.AST)
	case *pg.Node_RenameStmt:
		if n.RenameStmt.RenameType == pg.ObjectType_OBJECT_FUNCTION {
			return s.execRenameFunction(n.RenameStmt) // function.go
		}
		return s.execAlter(ctx, env, stmt.AST)
	case *pg.Node_AlterOwnerStmt:
		return s.execAlterFunctionOwner(n.AlterOwnerStmt) // function.go: functions only
	case *pg.Node_AlterObjectSchemaStmt:
		if n.AlterObjectSchemaStmt.ObjectType == pg.ObjectType_OBJECT_FUNCTION {
			return s.execFunctionSchema(n.AlterObjectSchemaStmt) // function.go
		}
		return nil, pgerr.Unsupported("ALTER %s ... SET SCHEMA is not supported", strings.TrimPrefix(n.AlterObjectSchemaStmt.ObjectType.String(), "OBJECT_"))
	case *pg.Node_GrantStmt:
		return s.execGrant(n.GrantStmt) // grant.go
	case *pg.Node_AlterDefaultPrivilegesStmt:
		return nil, pgerr.Unsupported("ALTER DEFAULT PRIVILEGES is not supported")
	case *pg.Node_TruncateStmt:
		return s.execTruncate(ctx, n.TruncateStmt)
	case *pg.Node_CopyStmt:
		return s.execCopy(ctx, n.CopyStmt, stmt)
	case *pg.Node_IndexStmt:
		return s.execCreateIndex(ctx, env, n.IndexStmt)
	case *pg.Node_DiscardStmt:
		switch n.DiscardStmt.Target {
		case pg.DiscardMode_DISCARD_ALL:
			if s.tx != 'I' {
				return nil, pgerr.New(pgerr.ActiveSQLTransaction, "DISCARD ALL cannot run inside a transaction block")
			}
			s.closeCursors(func(*cursor) bool { return true }) // as CLOSE ALL
			s.setAuth(authState{session: s.login})             // SET SESSION AUTHORIZATION DEFAULT (role.go)
			s.seq.discard()
			if err := s.dropTemp(); err != nil {
				return nil, err
			}
		case pg.DiscardMode_DISCARD_SEQUENCES:
			s.seq.discard() // currval, lastval and the preallocated values
			return &Result{Tag: "DISCARD SEQUENCES"}, nil
		case pg.DiscardMode_DISCARD_PLANS:
			return &Result{Tag: "DISCARD PLANS"}, nil
		case pg.DiscardMode_DISCARD_TEMP:
			if err := s.dropTemp(); err != nil {
				return nil, err
			}
			return &Result{Tag: "DISCARD TEMP"}, nil
		}
		return &Result{Tag: "DISCARD ALL"}, nil
	case *pg.Node_PrepareStmt:
		return s.prepareSQL(ctx, n.PrepareStmt, stmt)
	case *pg.Node_ExecuteStmt:
		return s.executeSQL(ctx, n.ExecuteStmt)
	case *pg.Node_ClosePortalStmt:
		return s.execClose(n.ClosePortalStmt)
	case *pg.Node_DeallocateStmt:
		return s.deallocate(n.DeallocateStmt)
	case *pg.Node_CommentStmt:
		if cm, ok := s.eng.cat.(interface {
			ExecCommentChecked(*pg.CommentStmt, []string, func(*catalog.Relation) error) error
		}); ok {
			owner := s.checkOwner
			if n.CommentStmt.Objtype == pg.ObjectType_OBJECT_COLUMN {
				owner = s.checkRelationOwner // PostgreSQL says "relation" here
			}
			if err := cm.ExecCommentChecked(n.CommentStmt, s.set.searchPath(), owner); err != nil {
				return nil, err
			}
		}
		return &Result{Tag: "COMMENT"}, nil
	case *pg.Node_VacuumStmt:
		if n.VacuumStmt.IsVacuumcmd {
			return &Result{Tag: "VACUUM"}, nil
		}
		return &Result{Tag: "ANALYZE"}, nil
	case *pg.Node_CheckPointStmt:
		return s.execCheckpoint(ctx)
	case *pg.Node_RefreshMatViewStmt:
		return s.execRefresh(ctx, n.RefreshMatViewStmt) // refresh.go
	}
	return nil, pgerr.Unsupported("statement %q is not supported yet", firstWords(stmt.Text()))
}

// maybeSkip turns an "already exists" error under IF NOT EXISTS into a notice.
func (s *Session) maybeSkip(err error, ifNotExists bool, tag string) (*Result, error) {
	e := pgerr.As(err)
	if ifNotExists && e != nil && (e.Code == pgerr.DuplicateTable || e.Code == pgerr.DuplicateSchema || e.Code == pgerr.DuplicateObject) {
		n := pgerr.New(pgerr.Code("42P07"), "%s, skipping", e.Message)
		n.Severity = pgerr.SevNotice
		return &Result{Tag: tag, Notices: []*pgerr.Error{n}}, nil
	}
	return nil, err
}

func (s *Session) execTransaction(ctx context.Context, t *pg.TransactionStmt) (*Result, error) {
	warn := func(tag, msg string, code pgerr.Code) (*Result, error) {
		w := pgerr.New(code, "%s", msg)
		w.Severity = pgerr.SevWarning
		return &Result{Tag: tag, Notices: []*pgerr.Error{w}}, nil
	}
	switch t.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_BEGIN, pg.TransactionStmtKind_TRANS_STMT_START:
		if s.tx != 'I' {
			return warn("BEGIN", "there is already a transaction in progress", pgerr.ActiveSQLTransaction)
		}
		s.tx, s.txStart, s.stx = 'T', time.Now(), s.eng.store.Begin()
		return &Result{Tag: "BEGIN"}, nil
	case pg.TransactionStmtKind_TRANS_STMT_COMMIT:
		switch s.tx {
		case 'I':
			return warn("COMMIT", "there is no transaction in progress", pgerr.NoActiveSQLTransaction)
		case 'E':
			s.endTx(false, ctx)
			return &Result{Tag: "ROLLBACK"}, nil
		}
		if err := s.endTx(true, ctx); err != nil {
			return nil, err
		}
		return &Result{Tag: "COMMIT"}, nil
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		if s.tx == 'I' {
			return warn("ROLLBACK", "there is no transaction in progress", pgerr.NoActiveSQLTransaction)
		}
		s.endTx(false, ctx)
		return &Result{Tag: "ROLLBACK"}, nil
	case pg.TransactionStmtKind_TRANS_STMT_SAVEPOINT, pg.TransactionStmtKind_TRANS_STMT_RELEASE,
		pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		return s.execSavepoint(t) // savepoint.go
	}
	return nil, pgerr.Unsupported("two-phase commit is not supported")
}

// endTx commits or rolls back the open transaction block and returns the
// session to idle. A failed commit has rolled back.
func (s *Session) endTx(commit bool, ctx context.Context) (err error) {
	if commit {
		// WITH HOLD cursors read their rows before the commit.
		err = s.materializeHeld(ctx)
		commit = err == nil
	}
	stx := s.stx
	s.tx, s.stx, s.savepoints = 'I', nil, nil
	if stx != nil {
		if commit {
			err = stx.Commit(ctx)
		} else {
			stx.Rollback()
		}
	}
	s.cursorsAtTxEnd(commit && err == nil)
	s.authAtTxEnd(commit && err == nil) // role.go
	s.endTempTx(commit && err == nil)   // temp.go
	return err
}

func (s *Session) execSet(v *pg.VariableSetStmt) (*Result, error) {
	res := &Result{Tag: "SET"}
	if isAuthSetting(v.Name) { // SET ROLE, SET SESSION AUTHORIZATION (role.go)
		return s.execSetAuth(v, res)
	}
	report := func(name string) {
		if name == "" {
			return
		}
		if res.ParamStatus == nil {
			res.ParamStatus = map[string]string{}
		}
		res.ParamStatus[name], _ = s.set.get(name)
	}
	switch v.Kind {
	case pg.VariableSetKind_VAR_SET_VALUE:
		val, err := setValue(v.Args)
		if strings.EqualFold(v.Name, "search_path") {
			val, err = setListValue(v.Args) // each element an identifier, as PostgreSQL keeps it
		}
		if err != nil {
			return nil, err
		}
		name, err := s.set.set(v.Name, val)
		if err != nil {
			return nil, err
		}
		report(name)
	case pg.VariableSetKind_VAR_SET_DEFAULT, pg.VariableSetKind_VAR_RESET:
		if v.Kind == pg.VariableSetKind_VAR_RESET {
			res.Tag = "RESET"
		}
		name, err := s.set.reset(v.Name)
		if err != nil {
			return nil, err
		}
		report(name)
	case pg.VariableSetKind_VAR_RESET_ALL:
		res.Tag = "RESET"
		for _, st := range settingList {
			if !st.readOnly {
				name, _ := s.set.reset(st.name)
				report(name)
			}
		}
	case pg.VariableSetKind_VAR_SET_MULTI:
		// SET TRANSACTION ... / SET SESSION CHARACTERISTICS: accepted; every
		// statement runs at read committed with its own snapshot.
	default:
		return nil, pgerr.Unsupported("SET %s is not supported", v.Name)
	}
	return res, nil
}

// setValue renders SET's arguments as the setting's text value.
func setValue(args []*pg.Node) (string, error) {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		switch {
		case a.GetAConst() != nil:
			c := a.GetAConst()
			switch {
			case c.GetSval() != nil:
				parts = append(parts, c.GetSval().Sval)
			case c.GetIval() != nil:
				parts = append(parts, strconv.Itoa(int(c.GetIval().Ival)))
			case c.GetFval() != nil:
				parts = append(parts, c.GetFval().Fval)
			case c.GetBoolval() != nil:
				parts = append(parts, strconv.FormatBool(c.GetBoolval().Boolval))
			default:
				return "", pgerr.New(pgerr.InvalidParameterValue, "invalid SET value")
			}
		case a.GetTypeCast() != nil && a.GetTypeCast().Arg.GetAConst() != nil:
			// SET TIME ZONE INTERVAL '+05:00' HOUR TO MINUTE
			return setValue([]*pg.Node{a.GetTypeCast().Arg})
		default:
			return "", pgerr.New(pgerr.InvalidParameterValue, "invalid SET value")
		}
	}
	return strings.Join(parts, ", "), nil
}

// setListValue renders the arguments of SET of a list of identifiers
// (search_path) as PostgreSQL keeps it: each element quoted where it
// must be ("$user", "My Schema"), so that SHOW prints it back and the
// list splits into the same names.
func setListValue(args []*pg.Node) (string, error) {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		v, err := setValue([]*pg.Node{a})
		if err != nil {
			return "", err
		}
		parts = append(parts, catalog.QuoteIdent(v))
	}
	return strings.Join(parts, ", "), nil
}

// showValue is SHOW's and current_setting's view of a parameter.
func (s *Session) showValue(name string) (string, bool) {
	switch name {
	case "session_authorization":
		return s.auth.session, true
	case "role":
		return s.roleSetting(), true
	case "session_user", "current_user":
		return s.user, true
	}
	return s.set.get(name)
}

func (s *Session) execShow(name string, cols []types.Column) (*Result, error) {
	if name == "all" {
		rows := make([][]string, 0)
		for _, kv := range s.set.all() {
			rows = append(rows, []string{kv[0], kv[1], ""})
		}
		return tableRows("SHOW", cols, rows), nil
	}
	v, ok := s.showValue(name)
	if !ok {
		return nil, pgerr.New(pgerr.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	return textRows("SHOW", cols, []string{v}), nil
}

func (s *Session) execDrop(d *pg.DropStmt) (*Result, error) {
	defer s.eng.startIngests() // stops the ingests of dropped tables (ingest.go)
	cascade := d.Behavior == pg.DropBehavior_DROP_CASCADE
	var kind catalog.RelKind
	var tag string
	switch d.RemoveType {
	case pg.ObjectType_OBJECT_TABLE:
		kind, tag = catalog.KindTable, "DROP TABLE"
	case pg.ObjectType_OBJECT_VIEW:
		kind, tag = catalog.KindView, "DROP VIEW"
	case pg.ObjectType_OBJECT_MATVIEW:
		kind, tag = catalog.KindMatView, "DROP MATERIALIZED VIEW"
	case pg.ObjectType_OBJECT_SEQUENCE:
		kind, tag = catalog.KindSequence, "DROP SEQUENCE"
	case pg.ObjectType_OBJECT_FUNCTION:
		return s.execDropFunction(d) // function.go
	case pg.ObjectType_OBJECT_DOMAIN:
		return s.execDropDomain(d, "DROP DOMAIN") // domain.go
	case pg.ObjectType_OBJECT_TYPE:
		return s.execDropType(d) // usertype.go
	case pg.ObjectType_OBJECT_FOREIGN_TABLE: // psql shows sources as foreign tables
		names := make([]string, 0, len(d.Objects))
		for _, o := range d.Objects {
			schema, name, err := qualifiedName(o)
			if err != nil {
				return nil, err
			}
			if schema != "" {
				name = schema + "." + name
			}
			names = append(names, name)
		}
		return s.dropSources(names, d.MissingOk, cascade, "DROP FOREIGN TABLE")
	case pg.ObjectType_OBJECT_INDEX:
		return &Result{Tag: "DROP INDEX"}, nil // indexes are not built, see CREATE INDEX
	case pg.ObjectType_OBJECT_SCHEMA:
		res := &Result{Tag: "DROP SCHEMA"}
		for _, o := range d.Objects {
			if err := s.checkSchemaOwner(o.GetString_().GetSval()); err != nil { // grant.go
				return nil, err
			}
		}
		for _, o := range d.Objects {
			name := o.GetString_().GetSval()
			if dd, ok := s.eng.cat.(interface {
				DropSchemaWithDetail(string, bool, bool) (*pgerr.Error, error)
			}); ok { // the cascade's DETAIL too
				n, err := dd.DropSchemaWithDetail(name, d.MissingOk, cascade)
				if err != nil {
					return nil, err
				}
				if n != nil {
					res.Notices = append(res.Notices, n)
				}
				continue
			}
			notice, err := s.eng.cat.DropSchema(name, d.MissingOk, cascade)
			if err != nil {
				return nil, err
			}
			res.Notices = appendNotice(res.Notices, notice)
		}
		return res, nil
	default:
		return nil, pgerr.Unsupported("DROP %s is not supported", strings.TrimPrefix(d.RemoveType.String(), "OBJECT_"))
	}
	for _, o := range d.Objects { // ownership of all before dropping any (grant.go)
		if schema, name, err := qualifiedName(o); err == nil {
			if err := s.checkOwnerByName(schema, name, kind); err != nil {
				return nil, err
			}
		}
	}
	res := &Result{Tag: tag}
	defer s.eng.stopDroppedJobs()
	for _, o := range d.Objects {
		schema, name, err := qualifiedName(o)
		if err != nil {
			return nil, err
		}
		// The catalog's DropWithDetail also gives the cascade's DETAIL.
		if dd, ok := s.eng.cat.(interface {
			DropWithDetail(catalog.RelKind, string, string, bool, bool, []string) (*pgerr.Error, error)
		}); ok {
			n, err := dd.DropWithDetail(kind, schema, name, d.MissingOk, cascade, s.set.searchPath())
			if err != nil {
				return nil, err
			}
			if n != nil {
				res.Notices = append(res.Notices, n)
			}
			continue
		}
		notice, err := s.eng.cat.Drop(kind, schema, name, d.MissingOk, cascade, s.set.searchPath())
		if err != nil {
			return nil, err
		}
		res.Notices = appendNotice(res.Notices, notice)
	}
	return res, nil
}

func appendNotice(ns []*pgerr.Error, msg string) []*pgerr.Error {
	if msg == "" {
		return ns
	}
	n := pgerr.New(pgerr.SuccessfulCompletion, "%s", msg)
	n.Severity = pgerr.SevNotice
	return append(ns, n)
}

// qualifiedName reads a DROP object name: a List of String nodes.
func qualifiedName(n *pg.Node) (schema, name string, err error) {
	var parts []string
	if l := n.GetList(); l != nil {
		for _, it := range l.Items {
			parts = append(parts, it.GetString_().GetSval())
		}
	} else if s := n.GetString_(); s != nil {
		parts = []string{s.Sval}
	}
	switch len(parts) {
	case 1:
		return "", parts[0], nil
	case 2:
		return parts[0], parts[1], nil
	case 3:
		return parts[1], parts[2], nil
	}
	return "", "", pgerr.New(pgerr.SyntaxError, "improper qualified name (too many dotted names)")
}

// streamingName names a streamsql-only statement for its error.
func streamingName(stmt sql.Statement) string {
	if stmt.Ext != nil && stmt.Ext.Kind != "" {
		return string(stmt.Ext.Kind)
	}
	return firstWords(stmt.Text())
}

func firstWords(s string) string {
	f := strings.Fields(s)
	if len(f) > 3 && strings.EqualFold(f[1], "OR") && strings.EqualFold(f[2], "REPLACE") {
		f = append(f[:1:1], f[3:]...) // CREATE OR REPLACE RULE is a CREATE RULE
	}
	if len(f) > 2 {
		f = f[:2]
	}
	return strings.ToUpper(strings.Join(f, " "))
}
