// Package clients drives the PostgreSQL clients people use against an
// in-process streamsql (tests/harness) and checks that they work as they do
// against PostgreSQL 15: psql 15's describe commands, pgjdbc 42 (java),
// psycopg 3, psycopg2 and SQLAlchemy (/usr/bin/python3), pgx v5, and the
// metadata queries of Grafana and Metabase.
//
// Each client program (testdata/) connects, creates tables, views and a
// materialized view, inserts with parameters, reads every supported type
// back in text and binary, lists metadata, hits errors and carries on. It
// prints a transcript, one fact a line; lines starting with FAIL are checks
// the program makes itself. The test compares streamsql's transcript with
// the same program's transcript against PostgreSQL: a live one when
// 127.0.0.1:5432 (or STREAMSQL_PG_DSN, a libpq URL) is reachable, else the
// one recorded from PostgreSQL in testdata/*.pg.txt (refresh them with
// `go test ./tests/clients -update` against a live PostgreSQL 15).
// Lines starting with "stream" are streamsql-only facts (sources) and are
// checked on their own.
//
// A test whose client is not installed skips itself with the reason;
// .ci/run installs them all (postgresql-client, default-jdk-headless with
// libpostgresql-jdbc-java, python3-psycopg, python3-psycopg2,
// python3-sqlalchemy).
package clients
