package e2e

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// crashSub is a client that keeps a copy of a view from SUBSCRIBE and
// resumes after each crash with WITH (since = the last epoch_time whose
// rows it has all), as docs/streaming.md tells clients to. It applies an
// epoch's rows only once a row of a later epoch arrives (progress = true
// sends one every epoch): rows of an epoch cut off by the crash are
// dropped and come again. Its copy must equal the view at the end: a gap
// or a duplicate would show.
type crashSub struct {
	view       string
	appendOnly bool // EMIT ON WINDOW CLOSE: inserts only, each row once
	rows       map[string]int
	last       string // epoch_time of the last applied epoch ("": none)
	pendEpoch  string
	pend       []subChange
	problems   []string
	resumes    int // subscriptions resumed with since
	applied    int // changes applied
}

type subChange struct {
	op, row string
}

// run subscribes (resuming after c.last if set) and applies changes until
// the connection fails (the server was killed: its error is returned) or,
// with until set, a row of an epoch after until arrives (nil).
func (c *crashSub) run(ctx context.Context, conn string, until time.Time) error {
	q := fmt.Sprintf("SUBSCRIBE TO %s WITH (progress = true)", c.view)
	if c.last != "" {
		q = fmt.Sprintf("SUBSCRIBE TO %s WITH (since = '%s', progress = true)", c.view, c.last)
		c.resumes++
	} else {
		c.rows = map[string]int{}
	}
	c.pend, c.pendEpoch = nil, ""
	pc, err := pgx.Connect(ctx, conn)
	if err != nil {
		return err
	}
	defer pc.Close(context.Background())
	qctx, qcancel := context.WithCancel(ctx)
	rows, err := pc.Query(qctx, q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		qcancel()
		return err
	}
	defer rows.Close()
	defer qcancel() // first: a subscription never ends by itself

	for rows.Next() {
		raw := rows.RawValues()
		ep := string(raw[1])
		if ep != c.pendEpoch {
			c.apply()
			c.pendEpoch = ep
			if !until.IsZero() {
				t, err := time.Parse("2006-01-02 15:04:05.999999-07", ep)
				if err != nil {
					return fmt.Errorf("epoch_time %q: %w", ep, err)
				}
				// A fresh subscription's first epoch is its snapshot:
				// applied even when it is after until (the server may
				// have completed an epoch since until was taken).
				if t.After(until) && c.last != "" {
					c.pendEpoch = ""
					return nil
				}
			}
		}
		op := string(raw[0])
		if op == "progress" {
			continue
		}
		c.pend = append(c.pend, subChange{op, rowText(raw[2:])})
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return errors.New("subscription ended")
}

// apply folds the pending (complete) epoch into the copy.
func (c *crashSub) apply() {
	if c.pendEpoch == "" {
		return
	}
	for _, ch := range c.pend {
		switch ch.op {
		case "insert", "update_after":
			c.rows[ch.row]++
			if c.appendOnly && (ch.op != "insert" || c.rows[ch.row] > 1) {
				c.problems = append(c.problems, fmt.Sprintf("epoch %s: %s %s again in an append-only view", c.pendEpoch, ch.op, ch.row))
			}
		case "delete", "update_before":
			c.rows[ch.row]--
			if c.appendOnly {
				c.problems = append(c.problems, fmt.Sprintf("epoch %s: %s %s in an append-only view", c.pendEpoch, ch.op, ch.row))
			}
		default:
			c.problems = append(c.problems, "unknown op "+ch.op)
		}
		if c.rows[ch.row] == 0 {
			delete(c.rows, ch.row)
		}
		c.applied++
	}
	for r, n := range c.rows {
		if n < 0 {
			c.problems = append(c.problems, fmt.Sprintf("epoch %s: row %s removed more often than added (%d)", c.pendEpoch, r, n))
			delete(c.rows, r)
		}
	}
	c.last = c.pendEpoch
	c.pend = nil
}

// diff compares the copy with the view's rows (text, "|"-joined).
func (c *crashSub) diff(ctx context.Context, pc *pgx.Conn) ([]string, error) {
	rows, err := pc.Query(ctx, "SELECT * FROM "+c.view, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, err
	}
	want := map[string]int{}
	for rows.Next() {
		want[rowText(rows.RawValues())]++
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []string
	for r, n := range want {
		if c.rows[r] != n {
			out = append(out, fmt.Sprintf("%s: view has %d, subscriber %d", r, n, c.rows[r]))
		}
	}
	for r, n := range c.rows {
		if want[r] == 0 {
			out = append(out, fmt.Sprintf("%s: view has 0, subscriber %d", r, n))
		}
	}
	sort.Strings(out)
	return out, nil
}

// rowText joins a row's text values with "|" (NULL for null).
func rowText(raw [][]byte) string {
	f := make([]string, len(raw))
	for i, v := range raw {
		f[i] = "NULL"
		if v != nil {
			f[i] = string(v)
		}
	}
	return strings.Join(f, "|")
}
