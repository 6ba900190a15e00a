// Package e2e tests the built streamsqld binary from the outside: it builds
// ./cmd/streamsqld, runs it on a temporary data directory and a free port,
// and talks to it with pgx and psql — including a crash (SIGKILL) in the
// middle of concurrent inserts, after which every acknowledged row must be
// there.
package e2e
