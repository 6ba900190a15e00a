package engine

import (
	"sort"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// The streaming statements and clauses parse (sql/extensions.go); until the
// streaming runtime runs them, the engine refuses each one by name, with its
// position, rather than ignore it.

// checkStreamingClauses refuses the streaming clauses lifted from a
// PostgreSQL statement.
func checkStreamingClauses(stmt sql.Statement) error {
	x := stmt.Ext
	if x == nil || stmt.AST == nil {
		return nil
	}
	refuse := func(what string, pos int) error {
		return pgerr.Unsupported("%s is not supported yet", what).WithPosition(stmt.CharPos(pos))
	}
	switch {
	case x.Watermark != nil:
		return refuse("WATERMARK FOR", x.Watermark.Pos)
	case x.AppendOnly:
		return refuse("APPEND ONLY", stmt.Offset)
	case len(x.Structs) > 0:
		return refuse("STRUCT types", x.Structs[0].Pos)
	case x.Emit != nil:
		return refuse(x.Emit.Written, x.Emit.Pos)
	case len(x.TemporalJoins) > 0:
		return refuse("FOR SYSTEM_TIME AS OF", x.TemporalJoins[0].Pos)
	case len(x.SessionFrames) > 0:
		return refuse("SESSION WITH GAP", x.SessionFrames[0].Pos)
	}
	return nil
}

// showRelations answers SHOW TABLES / MATERIALIZED VIEWS / SOURCES / SINKS:
// the names of that kind visible on the search path, sorted.
func (s *Session) showRelations(what string) (*Result, error) {
	var kind catalog.RelKind
	switch what {
	case "TABLES":
		kind = catalog.KindTable
	case "MATERIALIZED VIEWS":
		kind = catalog.KindMatView
	case "SOURCES":
		kind = catalog.KindSource
	case "SINKS":
		// No sinks exist until the streaming runtime creates them.
		return tableRows("SHOW", []types.Column{{Name: "Name", Type: types.TText}}, nil), nil
	default:
		return nil, pgerr.Unsupported("SHOW %s is not supported", what)
	}
	path := s.set.searchPath()
	var names []string
	for _, r := range s.eng.cat.Relations() {
		if r.Kind == kind && s.eng.cat.TableIsVisible(r.OID, path) {
			names = append(names, r.Name)
		}
	}
	sort.Strings(names)
	rows := make([][]string, len(names))
	for i, n := range names {
		rows[i] = []string{n}
	}
	return tableRows("SHOW", []types.Column{{Name: "Name", Type: types.TText}}, rows), nil
}
