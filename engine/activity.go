package engine

import (
	"sort"
	"sync"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Session activity: pg_stat_activity, pg_cancel_backend and
// pg_terminate_backend. The wire reports each statement's start and each
// return to idle (ReportActivity), and gives the session the means to
// cancel its statement and end its connection (SetSignals).

// activity is one session's pg_stat_activity state. Written by the
// session's connection goroutine, read by any session: guarded by mu.
type activity struct {
	mu          sync.Mutex
	start       time.Time // backend_start
	app         string
	state       string
	query       string
	queryStart  time.Time
	stateChange time.Time
	xactStart   time.Time
	cancel      func() // cancels the running statement (nil: not set)
	terminate   func() // ends the connection (nil: not set)
}

// ReportActivity records that the session's connection starts running
// query (state "active") or went idle (state "idle", "idle in transaction",
// "idle in transaction (aborted)"; query "" keeps the last query, as
// PostgreSQL shows it). Called on the session's goroutine.
func (s *Session) ReportActivity(state, query string) {
	now := time.Now()
	app, _ := s.showValue("application_name")
	a := &s.act
	a.mu.Lock()
	defer a.mu.Unlock()
	a.app = app
	if state != a.state {
		a.state, a.stateChange = state, now
	}
	if query != "" {
		a.query, a.queryStart = query, now
	}
	switch {
	case s.tx == 'I' && state != "active":
		a.xactStart = time.Time{}
	case a.xactStart.IsZero():
		a.xactStart = now
	}
}

// SetSignals gives the session the functions that cancel its running
// statement and end its connection (pg_cancel_backend,
// pg_terminate_backend). Both must be safe to call from any goroutine.
func (s *Session) SetSignals(cancel, terminate func()) {
	s.act.mu.Lock()
	s.act.cancel, s.act.terminate = cancel, terminate
	s.act.mu.Unlock()
}

// activityRows lists the open sessions for pg_stat_activity, by pid.
func (e *Engine) activityRows() []catalog.ActivityRow {
	e.mu.Lock()
	sessions := make([]*Session, 0, len(e.sessions))
	for s := range e.sessions {
		sessions = append(sessions, s)
	}
	e.mu.Unlock()
	ts := func(t time.Time) types.TimestampValue {
		if t.IsZero() {
			return 0
		}
		return types.TimestampValue(t.UnixMicro())
	}
	out := make([]catalog.ActivityRow, 0, len(sessions))
	for _, s := range sessions {
		a := &s.act
		a.mu.Lock()
		out = append(out, catalog.ActivityRow{PID: s.pid, User: s.login, Database: s.database, ApplicationName: a.app,
			BackendStart: ts(a.start), XactStart: ts(a.xactStart), QueryStart: ts(a.queryStart),
			StateChange: ts(a.stateChange), State: a.state, Query: a.query})
		a.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out
}

// SignalBackend implements pg_cancel_backend (terminate false) and
// pg_terminate_backend for the session: false when no session has that
// pid. Only a superuser, or a member of the target session's role or of
// pg_signal_backend, may signal it; a superuser's session only a
// superuser (42501 otherwise, as in PostgreSQL).
func (i sessionInfo) SignalBackend(pid int32, terminate bool) (bool, error) {
	e := i.s.eng
	var target *Session
	e.mu.Lock()
	for s := range e.sessions {
		if s.pid == pid {
			target = s
		}
	}
	e.mu.Unlock()
	if target == nil {
		return false, nil
	}
	what, whats := "cancel query", "cancel queries"
	if terminate {
		what, whats = "terminate process", "terminate processes"
	}
	caller := i.s.currentRole()
	if !caller.Superuser {
		if e.sessionRole(target.login).Superuser {
			return false, pgerr.New(pgerr.InsufficientPrivilege, "permission denied to %s", what).
				WithDetail("Only roles with the SUPERUSER attribute may %s of roles with the SUPERUSER attribute.", whats)
		}
		if target.login != i.s.user && !e.hasPrivsOfRole(i.s.user, target.login) && !e.hasPrivsOfRole(i.s.user, "pg_signal_backend") {
			return false, pgerr.New(pgerr.InsufficientPrivilege, "permission denied to %s", what).
				WithDetail("Only roles with privileges of the role whose process is being signaled or with privileges of the \"pg_signal_backend\" role may %s.", what)
		}
	}
	target.act.mu.Lock()
	f := target.act.cancel
	if terminate {
		f = target.act.terminate
	}
	target.act.mu.Unlock()
	if f == nil {
		return false, nil
	}
	f()
	return true, nil
}

// hasPrivsOfRole reports whether user has the privileges of role (a
// catalog without roles: only the same name).
func (e *Engine) hasPrivsOfRole(user, role string) bool {
	if c, ok := e.cat.(interface {
		HasPrivsOfRole(member, group, user string) bool
	}); ok {
		return c.HasPrivsOfRole(user, role, user)
	}
	return user == role
}
