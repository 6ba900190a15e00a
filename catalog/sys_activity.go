package catalog

import (
	"github.com/streamsql/streamsql/types"
)

// pg_stat_activity: one row per client session, set by the engine
// (SetActivity). As in PostgreSQL, a user without the privileges of the
// session's role (or of pg_read_all_stats; superusers have both) sees
// only who and since when, and its query as "<insufficient privilege>".

// ActivityRow is one session of pg_stat_activity.
type ActivityRow struct {
	PID             int32
	User, Database  string
	ApplicationName string
	ClientAddr      string // "" unknown
	ClientPort      int32  // 0 unknown
	BackendStart    types.TimestampValue
	XactStart       types.TimestampValue // 0: no transaction open
	QueryStart      types.TimestampValue // 0: no query yet
	StateChange     types.TimestampValue
	State           string // active, idle, idle in transaction, idle in transaction (aborted)
	Query           string
}

// SetActivity installs the function pg_stat_activity reads.
func (c *Catalog) SetActivity(f func() []ActivityRow) { c.activity.Store(&f) }

func init() {
	registerRows("pg_catalog.pg_stat_activity", statActivityRows)
}

func statActivityRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	p := c.activity.Load()
	if p == nil {
		return nil
	}
	viewer := userName(ctx)
	readAll := c.HasPrivsOfRole(viewer, "pg_read_all_stats", viewer) // superusers too
	ts := func(v types.TimestampValue) any {
		if v == 0 {
			return nil
		}
		return v
	}
	for _, a := range (*p)() {
		r := row{"datname": a.Database, "pid": a.PID, "usename": a.User,
			"application_name": a.ApplicationName, "backend_type": "client backend", "backend_start": ts(a.BackendStart)}
		if role, ok := c.LookupRole(a.User, a.User); ok {
			r["usesysid"] = role.OID
		}
		if readAll || a.User == viewer || c.HasPrivsOfRole(viewer, a.User, viewer) {
			r["xact_start"], r["query_start"], r["state_change"] = ts(a.XactStart), ts(a.QueryStart), ts(a.StateChange)
			r["state"], r["query"] = a.State, a.Query
			r["client_addr"] = nullIfEmpty(a.ClientAddr)
			if a.ClientPort != 0 {
				r["client_port"] = a.ClientPort
			}
		} else {
			r["query"] = "<insufficient privilege>"
		}
		if err := b.add(r); err != nil {
			return err
		}
	}
	return nil
}
