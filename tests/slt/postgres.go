package slt

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"
)

// ServerBackend gives each file a scratch database on a running server that
// supports CREATE DATABASE (PostgreSQL itself): created on NewDB, dropped on
// Close. Safe for concurrent use.
type ServerBackend struct {
	// ConnString reaches the server's maintenance database.
	ConnString string
	// Prefix starts every scratch database name ("slt" if empty).
	Prefix string

	n atomic.Int64
}

// NewDB implements Backend.
func (b *ServerBackend) NewDB(ctx context.Context, name string) (DB, error) {
	prefix := b.Prefix
	if prefix == "" {
		prefix = "slt"
	}
	db := &serverDB{admin: b.ConnString, name: fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), b.n.Add(1))}
	if err := db.exec(ctx, "DROP DATABASE IF EXISTS "+db.name+" WITH (FORCE)"); err != nil {
		return nil, err
	}
	if err := db.exec(ctx, "CREATE DATABASE "+db.name); err != nil {
		return nil, err
	}
	cfg, err := pgconn.ParseConfig(b.ConnString)
	if err != nil {
		return nil, fmt.Errorf("parse connection string: %w", err)
	}
	db.conn = fmt.Sprintf("host=%s port=%d user=%s password=%s dbname=%s sslmode=disable",
		quote(cfg.Host), cfg.Port, quote(cfg.User), quote(cfg.Password), db.name)
	return db, nil
}

type serverDB struct {
	admin, name, conn string
}

func (d *serverDB) ConnString() string { return d.conn }

// Restart only makes the runner reconnect: a shared server is not restarted.
func (d *serverDB) Restart(ctx context.Context) error { return nil }

func (d *serverDB) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), defaultTimeout)
	defer cancel()
	return d.exec(ctx, "DROP DATABASE IF EXISTS "+d.name+" WITH (FORCE)")
}

func (d *serverDB) exec(ctx context.Context, sql string) error {
	c, err := connect(ctx, d.admin, false)
	if err != nil {
		return err
	}
	defer c.close()
	if _, err := c.run(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

// quote quotes a libpq keyword/value connection string value.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
