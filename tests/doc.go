// Package tests holds streamsql's cross-package tests: the sqllogictest
// suites (our own tests/slt/*.slt files and the sqlite corpus at
// ../shared/corpora/sqlite) run against an in-process server, with the
// records PostgreSQL 15 itself answers differently listed in tests/skip.
//
// Subpackages: slt (the sqllogictest parser and runner), harness (an
// in-process server for tests), e2e (tests of the built streamsqld binary),
// cmd/sltrun (the runner as a command, also usable against PostgreSQL).
package tests
