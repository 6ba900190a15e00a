package slt

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// result is what one SQL text returned: the rows and columns of its last
// row-returning statement and the affected-row count of its last statement.
type result struct {
	Rows     Rows
	Columns  int
	OIDs     []uint32 // column type OIDs
	Affected int64
}

// conn is one connection. It uses the simple query protocol, or with
// extended set the extended one (Parse/Bind/Describe/Execute of the unnamed
// statement); results are text either way.
type conn struct {
	pg       *pgconn.PgConn
	extended bool
}

func connect(ctx context.Context, connString string, extended bool) (*conn, error) {
	pg, err := pgconn.Connect(ctx, connString)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return &conn{pg: pg, extended: extended}, nil
}

// run executes sql and reads every result. A *pgconn.PgError is an error the
// server reported for the SQL; any other error means the connection is
// unusable.
func (c *conn) run(ctx context.Context, sql string) (*result, error) {
	if c.extended {
		return c.runExtended(ctx, sql)
	}
	return c.runSimple(ctx, sql)
}

// runExtended runs one statement through the extended protocol.
func (c *conn) runExtended(ctx context.Context, sql string) (*result, error) {
	res := &result{}
	rr := c.pg.ExecParams(ctx, sql, nil, nil, nil, nil)
	if err := res.read(rr); err != nil {
		return nil, err
	}
	return res, nil
}

// runSimple sends sql as one simple Query message (it may hold several
// statements; the last row-returning one gives the rows).
func (c *conn) runSimple(ctx context.Context, sql string) (*result, error) {
	res := &result{}
	mrr := c.pg.Exec(ctx, sql)
	for mrr.NextResult() {
		if err := res.read(mrr.ResultReader()); err != nil {
			_ = mrr.Close()
			return nil, err
		}
	}
	if err := mrr.Close(); err != nil {
		return nil, err
	}
	return res, nil
}

// read reads one statement's result into res; a statement that returns rows
// replaces the rows of earlier ones.
func (res *result) read(rr *pgconn.ResultReader) error {
	fields := rr.FieldDescriptions()
	if len(fields) > 0 {
		res.Columns, res.Rows, res.OIDs = len(fields), nil, make([]uint32, len(fields))
		for i, f := range fields {
			res.OIDs[i] = f.DataTypeOID
		}
	}
	for rr.NextRow() {
		vals := rr.Values()
		row := make([]Value, len(vals))
		for i, b := range vals {
			if b == nil {
				row[i].Null = true
			} else {
				row[i].Text = string(b)
			}
		}
		res.Rows = append(res.Rows, row)
	}
	tag, err := rr.Close()
	if err != nil {
		return err
	}
	res.Affected = tag.RowsAffected()
	return nil
}

// broken reports whether err left the connection unusable.
func (c *conn) broken(err error) bool {
	var pe *pgconn.PgError
	return !errors.As(err, &pe) || c.pg.IsClosed()
}

func (c *conn) close() {
	if c != nil && c.pg != nil {
		ctx, cancel := context.WithTimeout(context.Background(), defaultCloseTimeout)
		defer cancel()
		_ = c.pg.Close(ctx)
	}
}
