package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector/sink"
	_ "github.com/streamsql/streamsql/connector/sink/blackhole" // registers "blackhole"
	"github.com/streamsql/streamsql/connector/sink/encode"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Sinks (CREATE SINK; docs/sinks.md, design in docs/contributing/sinks.md).
// A sink is a catalog relation of kind KindSink: its query (stored like a
// view's, "TABLE v" for FROM v), connector, options and format. It runs as
// a dataflow job with the sink's OID whose output goes to the connector's
// sink.Writer (dataflow/sinkjob.go), restarted from checkpoints like the
// materialized views.

// execCreateSink runs CREATE SINK: plan the query, validate the connector
// and the format, record the sink, start its job and wait for its first
// epoch.
func (s *Session) execCreateSink(ctx context.Context, env *planner.Env, stmt sql.Statement) (*Result, error) {
	x := stmt.Ext.Sink
	if s.tx != 'I' {
		return nil, pgerr.New(pgerr.ActiveSQLTransaction, "CREATE SINK cannot run inside a transaction block")
	}
	opts := map[string]string{}
	name := ""
	for _, o := range x.Options {
		if _, dup := opts[o.Key]; dup || (o.Key == "connector" && name != "") {
			return nil, pgerr.New(pgerr.SyntaxError, "option \"%s\" is given twice", o.Key)
		}
		if o.Key == "connector" {
			name = strings.ToLower(o.Value)
			continue
		}
		opts[o.Key] = o.Value
	}
	if name == "" {
		return nil, pgerr.New(pgerr.InvalidParameterValue, "CREATE SINK needs WITH (connector = '...')").
			WithHint("Sink connectors: %s.", strings.Join(sink.Names(), ", "))
	}
	open := sink.Lookup(name)
	if open == nil {
		return nil, pgerr.New(pgerr.InvalidParameterValue, "unknown sink connector \"%s\"", name).
			WithHint("Sink connectors: %s.", strings.Join(sink.Names(), ", "))
	}
	if name == "file" {
		if err := s.mayWriteServerFiles(); err != nil {
			return nil, err
		}
	}
	schema, relName := splitName(x.Name)
	if x.IfNotExists {
		if old, err := s.eng.cat.Resolve(schema, relName, s.set.searchPath()); err == nil && old != nil {
			return s.maybeSkip(pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", relName), true, "CREATE SINK")
		}
	}
	env.Streams = flowStreams{s.eng}
	env.Emit = stmtEmit(stmt)
	env.TemporalJoins = stmtTemporal(stmt)
	env.SessionFrames = stmtSessions(stmt)
	q, err := planner.PlanStream(env, x.Stmt)
	if err != nil {
		return nil, err
	}
	if env.Parallelism > 1 && !q.AppendOnly {
		// A query that retracts runs as one instance: the instances of a
		// parallel operator reach the sink through one merge in no set
		// order, so a key's new row could be written before the delete of
		// its old one (a view orders them at its barrier; a sink writes
		// rows as they come). docs/streaming.md, Parallelism.
		env.Parallelism = 1
		if q, err = planner.PlanStream(env, x.Stmt); err != nil {
			return nil, err
		}
	}
	// Stored with its FOR SYSTEM_TIME AS OF clauses, SESSION WITH GAP
	// frames and EMIT, as a view's query is (execCreateMatView), so that a
	// restart plans it the same way.
	text, err := sql.DeparseExtended(x.Stmt, sql.TemporalRelations(x.Stmt, env.TemporalJoins), sql.SessionWindows(x.Stmt, env.SessionFrames))
	if err != nil {
		return nil, fmt.Errorf("store sink: %w", err)
	}
	text += env.Emit.Text()
	rel := &catalog.Relation{Schema: schema, Name: relName, Kind: catalog.KindSink, ViewQuery: text, Parallelism: q.Parallelism, SplitDistinct: env.SplitDistinct,
		Connector: name, Options: opts, Format: x.Format, Encode: x.Encode, AppendOnly: q.AppendOnly, Owner: s.sessionOwner()}
	for _, c := range q.Columns {
		rel.Columns = append(rel.Columns, catalog.Column{Name: c.Name, Type: c.Type})
	}
	spec, err := s.eng.sinkSpec(rel, q)
	if err != nil {
		return nil, err
	}
	if _, err := open(spec); err != nil { // validate before anything is stored
		return nil, err
	}
	if err := s.clusterCheckPlace(ctx); err != nil {
		return nil, err
	}
	created, err := s.eng.cat.CreateView(rel, q.Deps, false)
	if err != nil {
		return s.maybeSkip(err, x.IfNotExists, "CREATE SINK")
	}
	spec.ID = created.OID
	snk, err := open(spec)
	if err != nil {
		s.dropQuietly(created)
		return nil, err
	}
	job := dataflow.JobSpec{ID: created.OID, Name: created.Name, Plan: q.Root, Key: q.Key, Cols: q.Columns, Sink: snk}
	if s.eng.cfg.Cluster != nil { // cluster_run.go: placed as a view's job is; the writer runs on the coordinator
		if served, err := s.clusterView(ctx, stmt, created, job); err != nil || served {
			if err != nil {
				s.dropQuietly(created)
				return nil, err
			}
			return &Result{Tag: "CREATE SINK"}, nil
		}
	}
	if err := s.startCreated(ctx, created, job); err != nil {
		return nil, err
	}
	s.eng.logCreated(created, "sink")
	return &Result{Tag: "CREATE SINK"}, nil
}

// splitName splits "schema.name" ("" schema when not qualified).
func splitName(full string) (string, string) {
	if i := strings.LastIndexByte(full, '.'); i > 0 {
		return full[:i], full[i+1:]
	}
	return "", full
}

// sinkSpec is what the connector of sink rel is told (ID still 0 for a
// sink being created).
func (e *Engine) sinkSpec(rel *catalog.Relation, q *planner.StreamQuery) (sink.Spec, error) {
	key, err := encode.Key(q.Columns, rel.Options, q.Key)
	if err != nil {
		return sink.Spec{}, err
	}
	return sink.Spec{Name: rel.Name, ID: rel.OID, Cols: q.Columns, Key: key, AppendOnly: q.AppendOnly,
		Options: rel.Options, Format: rel.Format, Encode: rel.Encode, AllowPath: e.sinkFiles.CheckWriteDir}, nil
}

// startSink starts the job of a stored sink (at Open: resumed from the
// recovered checkpoint when it has the sink).
func (e *Engine) startSink(rel *catalog.Relation) error {
	q, err := e.planView(rel)
	if err != nil {
		return err
	}
	open := sink.Lookup(rel.Connector)
	if open == nil {
		return pgerr.New(pgerr.InvalidParameterValue, "unknown sink connector \"%s\"", rel.Connector)
	}
	spec, err := e.sinkSpec(rel, q)
	if err != nil {
		return err
	}
	snk, err := open(spec)
	if err != nil {
		return err
	}
	_, err = e.flow.StartJob(dataflow.JobSpec{ID: rel.OID, Name: rel.Name, Plan: q.Root, Key: q.Key, Cols: q.Columns, Sink: snk})
	return err
}

// mayWriteServerFiles refuses a file sink to a session user that is
// neither a superuser nor has the privileges of pg_write_server_files
// (PostgreSQL's rule for COPY TO a file).
func (s *Session) mayWriteServerFiles() error {
	me := s.currentRole()
	if me.Superuser {
		return nil
	}
	if rc, ok := s.eng.cat.(roleCatalog); ok && rc.IsMemberOf(me.OID, catalog.WriteServerFilesOID) {
		return nil
	}
	return pgerr.New(pgerr.InsufficientPrivilege, "must be superuser or have privileges of the pg_write_server_files role to create a file sink").
		WithHint("A superuser can GRANT pg_write_server_files TO %s.", quoteIdent(s.user))
}

// dropSinks runs DROP SINK [IF EXISTS] name [, ...] [CASCADE]: only the
// owner may; nothing depends on a sink, so CASCADE changes nothing.
func (s *Session) dropSinks(d *sql.Drop) (*Result, error) {
	res := &Result{Tag: "DROP SINK"}
	defer s.eng.stopDroppedJobs()
	for _, full := range d.Names {
		schema, name := splitName(full)
		rel, err := s.eng.cat.Resolve(schema, name, s.set.searchPath())
		switch {
		case pgerr.CodeOf(err) == pgerr.UndefinedTable || (err == nil && rel == nil):
			if !d.IfExists {
				return res, pgerr.New(pgerr.UndefinedObject, "sink \"%s\" does not exist", full)
			}
			n := pgerr.New(pgerr.UndefinedObject, "sink \"%s\" does not exist, skipping", full)
			n.Severity = pgerr.SevNotice
			res.Notices = append(res.Notices, n)
			continue
		case err != nil:
			return res, err
		case rel.Kind != catalog.KindSink:
			return res, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a sink", full).
				WithHint("Use DROP %s to remove a %s.", strings.ToUpper(kindName(rel.Kind)), kindName(rel.Kind))
		}
		if err := s.checkOwner(rel); err != nil {
			return res, err
		}
		notice, err := s.eng.cat.Drop(catalog.KindSink, schema, name, d.IfExists, d.Cascade, s.set.searchPath())
		if err != nil {
			return res, err
		}
		res.Notices = appendNotice(res.Notices, notice)
	}
	return res, nil
}

// kindName names a relation kind for hints.
func kindName(k catalog.RelKind) string {
	switch k {
	case catalog.KindTable:
		return "table"
	case catalog.KindView:
		return "view"
	case catalog.KindMatView:
		return "materialized view"
	case catalog.KindSource:
		return "source"
	case catalog.KindSequence:
		return "sequence"
	}
	return "relation"
}

// sinkStatus reports a sink's state for streamsql_sinks.
func (e *Engine) sinkStatus(oid uint32) (catalog.SinkStatus, bool) {
	j := e.flow.Job(oid)
	if j == nil {
		if err, ok := e.viewErrs.Load(oid); ok {
			return catalog.SinkStatus{Status: "failed", LastError: fmt.Sprint(err)}, true
		}
		return catalog.SinkStatus{}, false
	}
	st, committed, ok := j.SinkStatus()
	out := catalog.SinkStatus{Status: "starting"}
	if ok {
		out = catalog.SinkStatus{Status: st.Status, Rows: st.Rows, OpenTxnMicros: st.OpenTxnAgeMs * 1000,
			Errors: st.Errors, LastError: st.LastError}
		if out.Status == "" {
			out.Status = "running"
		}
	}
	if p, ok := j.Backfill(); ok && p.Backfilling && out.Status == "running" {
		out.Status = "backfilling" // jobs.go
	}
	if committed != 0 {
		out.CommittedEpoch = types.TimestampValue(dataflow.EpochTime(committed).UnixMicro())
	}
	if err := j.Err(); err != nil {
		out.Status, out.LastError = "failed", err.Error()
	}
	return out, true
}

// sinksOf returns the stored sinks in OID order.
func (e *Engine) sinksOf() []*catalog.Relation {
	var out []*catalog.Relation
	for _, r := range e.cat.Relations() {
		if r.Kind == catalog.KindSink {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].OID < out[j].OID })
	return out
}
