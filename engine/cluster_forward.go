package engine

import (
	"context"
	"sort"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
)

// Statements a worker forwards to the coordinator (docs/cluster.md, "DDL
// on any node"): what only the coordinator runs (CREATE and DROP of
// sources, sinks, tables and materialized views; writes of tables) is
// sent there over pgwire on the session's behalf, as its user and with
// its settings, and the worker answers once it has applied the
// coordinator's statement log up to then, so the session then sees what
// it created. Forwarded only outside a transaction block, without
// parameters and without rows to return; otherwise refused as before.

// ClusterForwarder is implemented by a ClusterNode that forwards
// statements to the coordinator.
type ClusterForwarder interface {
	// ForwardAs runs sql on the coordinator as user after the setup
	// statements and returns its command tag; the coordinator's errors
	// keep their SQLSTATE.
	ForwardAs(ctx context.Context, user string, setup []string, sql string) (tag string, err error)
	// CaughtUp waits until this node applied the statement log as it is
	// now.
	CaughtUp(ctx context.Context) error
}

// clusterForwardWait bounds a forwarded statement's wait for the
// statement log.
const clusterForwardWait = 60 * time.Second

// forwardsToCoordinator reports whether this worker forwards stmt: one
// the coordinator runs and a worker does not, outside a transaction
// block, with no parameters and no rows to return. A statement the
// coordinator would refuse too (a serial column) gets its refusal here.
func (s *Session) forwardsToCoordinator(stmt sql.Statement, nparams int) (bool, error) {
	c := s.eng.cfg.Cluster
	if _, ok := c.(ClusterForwarder); !ok || c.IsCoordinator() || s.tx != 'I' || nparams > 0 {
		return false, nil
	}
	if stmt.Ext != nil && stmt.Ext.Kind == sql.KindSubscribe {
		return false, nil // its rows would have to be relayed: refused (clusterRefusal)
	}
	if what, write := clusterTableWrite(stmt); write {
		return what != "COPY FROM" && what != "a data-modifying WITH" && !returnsRows(stmt), nil
	}
	if clusterRefusal(stmt, false) == nil {
		return false, nil // every node runs it
	}
	if err := clusterRefusal(stmt, true); err != nil {
		return false, err
	}
	return true, nil
}

// returnsRows reports whether a write has a RETURNING list.
func returnsRows(stmt sql.Statement) bool {
	switch n := stmt.AST.Node.(type) {
	case *pg.Node_InsertStmt:
		return len(n.InsertStmt.ReturningList) > 0
	case *pg.Node_UpdateStmt:
		return len(n.UpdateStmt.ReturningList) > 0
	case *pg.Node_DeleteStmt:
		return len(n.DeleteStmt.ReturningList) > 0
	}
	return false
}

// forward runs a kindForward statement on the coordinator.
func (s *Session) forward(ctx context.Context, stmt sql.Statement) (*Result, error) {
	f := s.eng.cfg.Cluster.(ClusterForwarder)
	if s.tx != 'I' {
		return nil, onCoordinator(statementTag(stmt) + " in a transaction block")
	}
	ctx, cancel := context.WithTimeout(ctx, clusterForwardWait)
	defer cancel()
	tag, err := f.ForwardAs(ctx, s.user, s.forwardedSettings(), stmt.Text())
	if err != nil {
		if pgerr.As(err) != nil {
			return nil, err
		}
		return nil, pgerr.Wrap(err, pgerr.ConnectionException, "forwarding %s to the cluster's coordinator: %v", statementTag(stmt), err)
	}
	if err := f.CaughtUp(ctx); err != nil {
		return nil, pgerr.Wrap(err, pgerr.ConnectionException, "%s ran on the coordinator, but this node has not applied it yet: %v", statementTag(stmt), err)
	}
	return &Result{Tag: tag}, nil
}

// forwardedSettings are SET statements for the settings this session
// gave a value, which the forwarded statement is planned with
// (search_path, streaming_parallelism, TimeZone, ...): not the session's
// identity, its transaction's, nor read-only ones.
func (s *Session) forwardedSettings() []string {
	var names []string
	for name := range s.set.explicit {
		switch name {
		case "session_authorization", "role", "transaction_isolation", "transaction_read_only", "transaction_deferrable":
			continue
		}
		if d := settingsByLower[name]; d == nil || d.readOnly {
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]string, 0, len(names))
	for _, name := range names {
		v, _ := s.set.get(name)
		if name == "search_path" { // a list of identifiers, as SHOW prints it
			out = append(out, "SET search_path TO "+v)
			continue
		}
		out = append(out, "SET "+name+" TO '"+strings.ReplaceAll(v, "'", "''")+"'")
	}
	return out
}
