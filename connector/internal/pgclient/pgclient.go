// Package pgclient holds what the PostgreSQL connectors (the postgres-cdc
// source in connector/pgcdc and the postgres sink in connector/pgsink)
// share about talking to a PostgreSQL server: quoting for SQL and for
// connection strings, checking WITH options, simple queries, and errors
// that keep the server's SQLSTATE. Everything here is stateless and safe
// for concurrent use.
package pgclient

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/pgerr"
)

// QuoteIdent quotes s as an SQL identifier.
func QuoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// QuoteLit quotes s as an SQL string literal (standard_conforming_strings).
func QuoteLit(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// QuoteDSN quotes s as a value of a key=value connection string.
func QuoteDSN(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// CheckOptions refuses (22023, naming the option) an option of opts that
// known does not list and a required one (known[k] true) that is missing
// or blank. kind names the options in messages ("postgres-cdc", "postgres
// sink"), needer what needs them ("a postgres-cdc source").
func CheckOptions(opts map[string]string, known map[string]bool, kind, needer string) error {
	var unknown []string
	for k := range opts {
		if _, ok := known[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		names := make([]string, 0, len(known))
		for k := range known {
			names = append(names, k)
		}
		sort.Strings(names)
		return pgerr.New(pgerr.InvalidParameterValue, "unknown %s option %q", kind, unknown[0]).
			WithHint("Known options: %s.", strings.Join(names, ", "))
	}
	var missing []string
	for k, req := range known {
		if req && strings.TrimSpace(opts[k]) == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return pgerr.New(pgerr.InvalidParameterValue, "%s needs the option %q", needer, missing[0])
	}
	return nil
}

// Query runs sql (simple protocol) and returns the last result's rows as
// text; errors go through WrapError with prefix.
func Query(ctx context.Context, conn *pgconn.PgConn, sql, prefix string) ([][]string, error) {
	res, err := conn.Exec(ctx, sql).ReadAll()
	if err != nil {
		return nil, WrapError(err, prefix)
	}
	var out [][]string
	if len(res) > 0 {
		for _, r := range res[len(res)-1].Rows {
			row := make([]string, len(r))
			for i, v := range r {
				row[i] = string(v)
			}
			out = append(out, row)
		}
	}
	return out, nil
}

// WrapError wraps an error of a PostgreSQL server or connection as a
// pgerr error: "<prefix>: message", with the server's SQLSTATE when it
// sent one.
func WrapError(err error, prefix string) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pgerr.Wrap(err, pgerr.Code(pe.Code), "%s: %s", prefix, pe.Message)
	}
	return fmt.Errorf("%s: %w", prefix, err)
}
