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

// conn is one connection using the simple query protocol (text results).
type conn struct {
	pg *pgconn.PgConn
}

func connect(ctx context.Context, connString string) (*conn, error) {
	pg, err := pgconn.Connect(ctx, connString)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return &conn{pg: pg}, nil
}

// run sends sql as one simple Query message and reads every result. A
// *pgconn.PgError is an error the server reported for the SQL; any other
// error means the connection is unusable.
func (c *conn) run(ctx context.Context, sql string) (*result, error) {
	res := &result{}
	mrr := c.pg.Exec(ctx, sql)
	for mrr.NextResult() {
		rr := mrr.ResultReader()
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
			_ = mrr.Close()
			return nil, err
		}
		res.Affected = tag.RowsAffected()
	}
	if err := mrr.Close(); err != nil {
		return nil, err
	}
	return res, nil
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
