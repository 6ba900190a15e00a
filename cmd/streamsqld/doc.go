// Command streamsqld is the streamsql server: it opens the data directory
// and serves the PostgreSQL protocol until SIGINT or SIGTERM.
//
//	streamsqld [--listen 127.0.0.1:5433] [--data-dir ./streamsql-data]
package main
