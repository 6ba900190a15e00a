// Package wire serves the PostgreSQL frontend/backend protocol (version 3.0)
// so that psql, pgx, pgjdbc and other PostgreSQL clients can use streamsql.
//
// A Server accepts connections and runs each on its own goroutine: the
// connection reads one message at a time with a pgproto3.Backend and runs it
// to completion before reading the next. Statements reach the engine only
// through engine.SessionAPI, one session per connection:
//
//   - startup (startup.go, auth.go): an SSLRequest upgrades to TLS when
//     Options.TLSConfig is set (else 'N', as for GSSENCRequest), a cancel
//     request cancels the running statement of the connection it names, and a
//     StartupMessage gets SCRAM-SHA-256 authentication when Options.Passwords
//     is set, then AuthenticationOk, the reportable parameters, BackendKeyData
//     and ReadyForQuery;
//   - simple query (simple.go): every statement of the text prepared and
//     executed in turn, stopping at the first error;
//   - extended query (extended.go): named and unnamed statements and
//     portals, text and binary formats, row limits with PortalSuspended,
//     and after an error every message skipped until Sync;
//   - COPY (copy.go): FROM STDIN fed to engine.CopyIn, TO STDOUT encoded in
//     PostgreSQL's text or CSV format;
//   - results (rows.go): Arrow batches turned into DataRows through
//     types.AppendText / types.AppendBinary, with direct paths for integers,
//     booleans and strings.
//
// Before a connection runs it takes one of Options.MaxConnections slots
// (limits.go): from accept, so unauthenticated sockets count, but the
// oldest still authenticating gives its slot up when all are taken; until
// authentication ends it has Options.AuthenticationTimeout and messages of
// at most 65,535 bytes, and failed passwords are delayed (throttle.go).
// Afterwards a framer (framer.go) makes a message's memory follow the bytes
// that arrived rather than its declared length. Temporary accept errors
// (EMFILE...) are retried with a backoff; Serve ends only on Close or a
// permanent listener error.
//
// Sessions may also implement two optional methods: PID() int32 (the pid
// announced in BackendKeyData, so it matches pg_backend_pid()) and
// FailTransaction() (called for errors the session did not return itself,
// such as syntax errors and bad Bind parameters, so that an open transaction
// block fails as in PostgreSQL). engine.Session has both.
//
// Errors a statement raises are sent as ErrorResponse with the SQLSTATE of
// their *pgerr.Error (others as XX000; canceled and timed-out statements as
// 57014); a panic in a statement is recovered and reported as XX000. Only
// protocol violations (malformed or oversized messages) close a connection.
package wire
