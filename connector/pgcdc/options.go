package pgcdc

import (
	"fmt"
	"github.com/streamsql/streamsql/connector/internal/pgclient"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/pgerr"
)

// Config is a validated postgres-cdc configuration: immutable once built.
type Config struct {
	Host, User, Password, Database string
	Port                           int
	Schema, Table                  string // the upstream table
	Slot, Publication              string
	// ConnectTimeout bounds each connection attempt.
	ConnectTimeout time.Duration
	// SSLMode is libpq's sslmode (disable, prefer, require, ...).
	SSLMode string
}

// options are the WITH keys the connector takes, with whether each is
// required.
var options = map[string]bool{
	"hostname": true, "port": false, "username": true, "password": false,
	"database.name": true, "schema.name": false, "table.name": true,
	"slot.name": true, "publication.name": false,
	"connect.timeout": false, "ssl.mode": false,
}

// identRe is what slot and publication names may be: PostgreSQL allows
// only lower case letters, digits and underscores in slot names.
var identRe = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

func bad(format string, args ...any) *pgerr.Error {
	return pgerr.New(pgerr.InvalidParameterValue, format, args...)
}

// ParseConfig validates the WITH options (keys lower case, without
// connector). An unknown or missing option is a 22023 error naming it.
func ParseConfig(opts map[string]string) (Config, error) {
	if err := pgclient.CheckOptions(opts, options, "postgres-cdc", "a postgres-cdc source"); err != nil {
		return Config{}, err
	}
	c := Config{Host: opts["hostname"], User: opts["username"], Password: opts["password"],
		Database: opts["database.name"], Port: 5432, Schema: "public", Slot: opts["slot.name"],
		ConnectTimeout: 10 * time.Second, SSLMode: "prefer"}
	if p, ok := opts["port"]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n <= 0 || n > 65535 {
			return Config{}, bad("invalid value for postgres-cdc option \"port\": %q", p).WithHint("A TCP port, 1 to 65535.")
		}
		c.Port = n
	}
	table := opts["table.name"]
	if s, ok := opts["schema.name"]; ok {
		c.Schema = s
		c.Table = table
	} else if i := strings.IndexByte(table, '.'); i >= 0 {
		c.Schema, c.Table = table[:i], table[i+1:]
	} else {
		c.Table = table
	}
	if c.Schema == "" || c.Table == "" {
		return Config{}, bad("invalid value for postgres-cdc option \"table.name\": %q", table).
			WithHint("table.name = 'orders' (with schema.name) or 'public.orders'.")
	}
	if !identRe.MatchString(c.Slot) {
		return Config{}, bad("invalid value for postgres-cdc option \"slot.name\": %q", c.Slot).
			WithHint("PostgreSQL slot names have only lower case letters, digits and underscores.")
	}
	c.Publication = opts["publication.name"]
	if c.Publication == "" {
		c.Publication = c.Slot
	}
	if !identRe.MatchString(c.Publication) {
		return Config{}, bad("invalid value for postgres-cdc option \"publication.name\": %q", c.Publication).
			WithHint("Use lower case letters, digits and underscores.")
	}
	if v, ok := opts["connect.timeout"]; ok {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return Config{}, bad("invalid value for postgres-cdc option \"connect.timeout\": %q", v).WithHint("A duration such as '10s'.")
		}
		c.ConnectTimeout = d
	}
	if v, ok := opts["ssl.mode"]; ok {
		switch v {
		case "disable", "allow", "prefer", "require", "verify-ca", "verify-full":
			c.SSLMode = v
		default:
			return Config{}, bad("invalid value for postgres-cdc option \"ssl.mode\": %q", v).
				WithHint("disable, allow, prefer, require, verify-ca or verify-full.")
		}
	}
	return c, nil
}

// connConfig is a pgconn configuration for c; replication opens a
// walsender connection (replication = database). The session settings
// fix how values are printed (ISO dates, UTC, shortest exact floats) so
// that they parse back exactly.
func (c Config) connConfig(replication bool) (*pgconn.Config, error) {
	dsn := fmt.Sprintf("host=%s port=%d dbname=%s user=%s sslmode=%s connect_timeout=%d",
		quoteDSN(c.Host), c.Port, quoteDSN(c.Database), quoteDSN(c.User), c.SSLMode, max(1, int(c.ConnectTimeout/time.Second)))
	if c.Password != "" {
		dsn += " password=" + quoteDSN(c.Password)
	}
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, bad("invalid postgres-cdc connection options: %v", err)
	}
	cfg.RuntimeParams["DateStyle"] = "ISO, MDY"
	cfg.RuntimeParams["TimeZone"] = "UTC"
	cfg.RuntimeParams["IntervalStyle"] = "postgres"
	cfg.RuntimeParams["extra_float_digits"] = "3"
	cfg.RuntimeParams["application_name"] = "streamsql-cdc"
	if replication {
		cfg.RuntimeParams["replication"] = "database"
	}
	return cfg, nil
}

// addr is host:port, for messages.
func (c Config) addr() string { return net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) }

// qualified is the upstream table as a quoted SQL name.
func (c Config) qualified() string { return quoteIdent(c.Schema) + "." + quoteIdent(c.Table) }

// Quoting, shared with the postgres sink.
var (
	quoteIdent = pgclient.QuoteIdent
	quoteLit   = pgclient.QuoteLit
	quoteDSN   = pgclient.QuoteDSN
)
