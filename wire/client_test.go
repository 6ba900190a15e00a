package wire

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// rawClient speaks the protocol message by message, for tests that need
// control over what is sent (pipelining, row limits, COPY, broken input).
type rawClient struct {
	t      *testing.T
	nc     net.Conn
	fe     *pgproto3.Frontend
	pid    uint32
	secret []byte
	params map[string]string
}

// dialRaw connects with pgconn (which handles authentication) and takes
// over its socket.
func dialRaw(t *testing.T, connString string) *rawClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pc, err := pgconn.Connect(ctx, connString)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	h, err := pc.Hijack()
	if err != nil {
		t.Fatal(err)
	}
	c := &rawClient{t: t, nc: h.Conn, fe: h.Frontend, pid: h.PID, secret: h.SecretKey, params: h.ParameterStatuses}
	t.Cleanup(func() { c.nc.Close() })
	return c
}

func fakeURL(addr string) string {
	return "postgres://streamsql@" + addr + "/streamsql?sslmode=disable"
}

// send sends messages and flushes.
func (c *rawClient) send(msgs ...pgproto3.FrontendMessage) {
	c.t.Helper()
	for _, m := range msgs {
		c.fe.Send(m)
	}
	if err := c.fe.Flush(); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// untilReady receives messages up to and including ReadyForQuery and
// returns them rendered by describeMsg.
func (c *rawClient) untilReady() []string {
	c.t.Helper()
	return c.until(func(m pgproto3.BackendMessage) bool {
		_, ok := m.(*pgproto3.ReadyForQuery)
		return ok
	})
}

// until receives messages up to and including the first one stop accepts.
func (c *rawClient) until(stop func(pgproto3.BackendMessage) bool) []string {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	var out []string
	for {
		m, err := c.fe.Receive()
		if err != nil {
			c.t.Fatalf("receive after %q: %v", out, err)
		}
		out = append(out, describeMsg(m))
		if stop(m) {
			return out
		}
	}
}

// roundTrip sends messages and returns everything up to ReadyForQuery.
func (c *rawClient) roundTrip(msgs ...pgproto3.FrontendMessage) []string {
	c.t.Helper()
	c.send(msgs...)
	return c.untilReady()
}

// describeMsg renders a backend message with the fields that must agree
// with PostgreSQL (not File/Line/Routine, not table OIDs).
func describeMsg(m pgproto3.BackendMessage) string {
	switch m := m.(type) {
	case *pgproto3.RowDescription:
		var fs []string
		for _, f := range m.Fields {
			fs = append(fs, fmt.Sprintf("%s:%d:%d:%d:%d", f.Name, f.DataTypeOID, f.DataTypeSize, f.TypeModifier, f.Format))
		}
		return "RowDescription " + strings.Join(fs, ",")
	case *pgproto3.DataRow:
		var vs []string
		for _, v := range m.Values {
			if v == nil {
				vs = append(vs, "NULL")
			} else {
				vs = append(vs, fmt.Sprintf("%q", v))
			}
		}
		return "DataRow " + strings.Join(vs, ",")
	case *pgproto3.CommandComplete:
		return "CommandComplete " + string(m.CommandTag)
	case *pgproto3.ErrorResponse:
		return fmt.Sprintf("ErrorResponse %s %s %s P%d D%q H%q", m.Severity, m.Code, m.Message, m.Position, m.Detail, m.Hint)
	case *pgproto3.NoticeResponse:
		return fmt.Sprintf("NoticeResponse %s %s %s", m.Severity, m.Code, m.Message)
	case *pgproto3.ReadyForQuery:
		return "ReadyForQuery " + string(m.TxStatus)
	case *pgproto3.ParameterDescription:
		return fmt.Sprint("ParameterDescription ", m.ParameterOIDs)
	case *pgproto3.ParameterStatus:
		return "ParameterStatus " + m.Name + "=" + m.Value
	case *pgproto3.CopyInResponse:
		return fmt.Sprint("CopyInResponse ", m.OverallFormat, m.ColumnFormatCodes)
	case *pgproto3.CopyOutResponse:
		return fmt.Sprint("CopyOutResponse ", m.OverallFormat, m.ColumnFormatCodes)
	case *pgproto3.CopyData:
		return fmt.Sprintf("CopyData %q", m.Data)
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", m), "*pgproto3.")
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
