package wire

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// oracleURL is the PostgreSQL 15 server the team uses as the reference.
const oracleURL = "postgres://postgres:postgres@127.0.0.1:5432/postgres?sslmode=disable"

// oracleSetup creates, in the oracle's session, the table the fake session
// pretends to have (temporary, so nothing outlives the test).
const oracleSetup = `create temp table t (id int4, note text);
insert into t values (1, 'plain'), (2, E'tab\there, newline\nthere'), (3, E'back\\slash'),
  (null, null), (5, ''), (6, 'say "hi", ok'), (7, E'cr\rlf')`

// exchange is one round of messages, answered up to ReadyForQuery.
type exchange []pgproto3.FrontendMessage

// oracleCases are message sequences whose answers must match PostgreSQL's
// message for message (rendered by describeMsg).
var oracleCases = []struct {
	name       string
	needsTypes bool // values go through types I/O
	rounds     []exchange
}{
	{name: "simple several statements stop at error", rounds: []exchange{
		{&pgproto3.Query{String: "select 1; select * from generate_series(1, 4); select 1/0; select 2"}},
		{&pgproto3.Query{String: "select 2"}},
	}},
	{name: "simple empty queries", rounds: []exchange{
		{&pgproto3.Query{String: ""}}, {&pgproto3.Query{String: "-- ping"}}, {&pgproto3.Query{String: " ; "}},
	}},
	{name: "simple syntax error runs nothing", rounds: []exchange{
		{&pgproto3.Query{String: "select 1; selec 2"}},
		{&pgproto3.Query{String: "select * from nosuchtable"}},
	}},
	{name: "simple mixed text row", rounds: []exchange{
		{&pgproto3.Query{String: fakeMixed}},
	}},
	{name: "insert returning tag", rounds: []exchange{
		{&pgproto3.Query{String: "insert into t values (8, 'a'), (9, 'b') returning id"}},
		{
			&pgproto3.Parse{Query: "insert into t values (8, 'a'), (9, 'b') returning id"},
			&pgproto3.Bind{},
			&pgproto3.Execute{MaxRows: 1},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
		},
	}},
	{name: "transaction status and failed block", rounds: []exchange{
		{&pgproto3.Query{String: "begin"}},
		{&pgproto3.Query{String: "select 1/0"}},
		{&pgproto3.Query{String: "select 1"}},
		{&pgproto3.Query{String: "commit"}},
	}},
	{name: "errors raised in the wire fail the transaction block", rounds: []exchange{
		{&pgproto3.Query{String: "begin"}},
		{&pgproto3.Query{String: "selec 1"}},
		{&pgproto3.Query{String: "rollback"}},
		{&pgproto3.Query{String: "begin"}},
		{&pgproto3.Query{String: fakeLateError}},
		{&pgproto3.Query{String: "rollback"}},
		{&pgproto3.Query{String: "begin"}},
		{&pgproto3.Parse{Query: "select $1::int4"}, &pgproto3.Bind{Parameters: [][]byte{[]byte("x")}}, &pgproto3.Sync{}},
		{&pgproto3.Query{String: "commit"}},
	}},
	{name: "extended named statement portal with row limits", rounds: []exchange{{
		&pgproto3.Parse{Name: "s1", Query: "select * from generate_series(1, 7)"},
		&pgproto3.Describe{ObjectType: 'S', Name: "s1"},
		&pgproto3.Bind{DestinationPortal: "p1", PreparedStatement: "s1"},
		&pgproto3.Describe{ObjectType: 'P', Name: "p1"},
		&pgproto3.Execute{Portal: "p1", MaxRows: 3},
		&pgproto3.Execute{Portal: "p1", MaxRows: 3},
		&pgproto3.Execute{Portal: "p1", MaxRows: 3},
		&pgproto3.Execute{Portal: "p1", MaxRows: 3},
		&pgproto3.Sync{},
	}, {
		// The named statement survives Sync, the portal does not.
		&pgproto3.Bind{PreparedStatement: "s1"},
		&pgproto3.Execute{MaxRows: 7},
		&pgproto3.Execute{Portal: "p1"},
		&pgproto3.Sync{},
	}}},
	{name: "cursor-style fetches across Sync in a transaction (pgjdbc fetch size)", rounds: []exchange{{
		&pgproto3.Parse{Query: "begin"}, &pgproto3.Bind{}, &pgproto3.Execute{},
		&pgproto3.Parse{Name: "S_1", Query: "select * from generate_series(1, 5)"},
		&pgproto3.Bind{DestinationPortal: "C_1", PreparedStatement: "S_1"},
		&pgproto3.Describe{ObjectType: 'P', Name: "C_1"},
		&pgproto3.Execute{Portal: "C_1", MaxRows: 2},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Execute{Portal: "C_1", MaxRows: 2},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Execute{Portal: "C_1", MaxRows: 2},
		&pgproto3.Close{ObjectType: 'P', Name: "C_1"},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Execute{Portal: "C_1", MaxRows: 2},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Parse{Query: "commit"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{},
	}}},
	{name: "extended limit equal to row count", rounds: []exchange{{
		&pgproto3.Parse{Query: "select * from generate_series(1, 3)"},
		&pgproto3.Bind{},
		&pgproto3.Execute{MaxRows: 3},
		&pgproto3.Execute{MaxRows: 3},
		&pgproto3.Sync{},
	}}},
	{name: "extended binary results", rounds: []exchange{{
		&pgproto3.Parse{Query: "select * from generate_series(1, 2)"},
		&pgproto3.Bind{ResultFormatCodes: []int16{1}},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.Parse{Query: fakeMixed},
		&pgproto3.Bind{ResultFormatCodes: []int16{1}},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.Bind{ResultFormatCodes: []int16{0, 1, 1, 1}},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	}}},
	{name: "extended errors skip to sync", rounds: []exchange{{
		&pgproto3.Parse{Name: "bad", Query: "select * from nosuchtable"},
		&pgproto3.Bind{PreparedStatement: "bad"},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Bind{PreparedStatement: "nope"},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Close{ObjectType: 'S'},
		&pgproto3.Bind{},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Describe{ObjectType: 'P', Name: "nope"},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Execute{Portal: "nope"},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Describe{ObjectType: 'S', Name: "nope"},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Parse{Query: "select 1; select 2"},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Parse{Name: "dup", Query: "select 1"},
		&pgproto3.Parse{Name: "dup", Query: "select 1"},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Parse{Query: "selec 1"},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Query{String: "select 2"},
	}}},
	{name: "extended bind checks", rounds: []exchange{{
		&pgproto3.Parse{Name: "p", Query: "select $1::text"},
		&pgproto3.Describe{ObjectType: 'S', Name: "p"},
		&pgproto3.Bind{PreparedStatement: "p", Parameters: [][]byte{[]byte("a"), []byte("b")}},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Bind{PreparedStatement: "p", ParameterFormatCodes: []int16{0, 0}, Parameters: [][]byte{[]byte("a")}},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Bind{PreparedStatement: "p", Parameters: [][]byte{[]byte("a")}, ResultFormatCodes: []int16{0, 1}},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Bind{PreparedStatement: "p", Parameters: [][]byte{[]byte("a")}, ResultFormatCodes: []int16{2}},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Bind{PreparedStatement: "p", Parameters: [][]byte{[]byte("a")}, ResultFormatCodes: []int16{2}},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Bind{PreparedStatement: "p", ParameterFormatCodes: []int16{3}, Parameters: [][]byte{[]byte("a")}},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Bind{DestinationPortal: "x", PreparedStatement: "p", Parameters: [][]byte{nil}},
		&pgproto3.Bind{DestinationPortal: "x", PreparedStatement: "p", Parameters: [][]byte{nil}},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Bind{PreparedStatement: "p", Parameters: [][]byte{nil}},
		&pgproto3.Execute{},
		&pgproto3.Close{ObjectType: 'S', Name: "p"},
		&pgproto3.Close{ObjectType: 'S', Name: "never"},
		&pgproto3.Close{ObjectType: 'P', Name: "never"},
		&pgproto3.Sync{},
	}}},
	{name: "extended parameters", needsTypes: true, rounds: []exchange{{
		&pgproto3.Parse{Query: "select $1::text"},
		&pgproto3.Bind{Parameters: [][]byte{[]byte("héllo")}},
		&pgproto3.Execute{},
		&pgproto3.Parse{Query: "select $1::int4"},
		&pgproto3.Bind{Parameters: [][]byte{[]byte(" 42")}},
		&pgproto3.Execute{},
		&pgproto3.Bind{ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{0, 0, 1, 0}}, ResultFormatCodes: []int16{1}},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Bind{Parameters: [][]byte{[]byte("x1")}},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	}}},
	{name: "every type in text and binary", needsTypes: true, rounds: []exchange{
		{&pgproto3.Query{String: fakeTypes}},
		{
			&pgproto3.Parse{Query: fakeTypes},
			&pgproto3.Bind{ResultFormatCodes: []int16{1}},
			&pgproto3.Describe{ObjectType: 'P'},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
		},
		{&pgproto3.Query{String: "copy (" + fakeTypes + ") to stdout"}},
	}},
	{name: "extended empty query", rounds: []exchange{{
		&pgproto3.Parse{Query: ""},
		&pgproto3.Bind{},
		&pgproto3.Describe{ObjectType: 'S'},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	}}},
	{name: "extended command and parameter status", rounds: []exchange{{
		&pgproto3.Parse{Query: "set timezone = 'Europe/Paris'"},
		&pgproto3.Bind{},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Query{String: "select 1; set timezone = 'Asia/Tokyo'; select 2"},
	}, {
		&pgproto3.Parse{Query: "insert into t values (1, 'x')"},
		&pgproto3.Bind{},
		&pgproto3.Execute{},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	}}},
	{name: "copy to stdout text and csv", rounds: []exchange{
		{&pgproto3.Query{String: "copy t to stdout"}},
		{&pgproto3.Query{String: "copy t to stdout (format csv, header)"}},
		{&pgproto3.Query{String: "copy t to stdout (format csv)"}},
		{&pgproto3.Query{String: "copy (" + fakeLateError + ") to stdout"}},
	}},
	{name: "copy from stdin", rounds: []exchange{
		{&pgproto3.Query{String: "copy t from stdin"}, &pgproto3.CopyData{Data: []byte("10\tx\n11\t")}, &pgproto3.CopyData{Data: []byte("y\n")}, &pgproto3.CopyDone{}},
		{&pgproto3.Query{String: "copy t from stdin"}, &pgproto3.CopyData{Data: []byte("12\tz\n")}, &pgproto3.CopyFail{Message: "client gave up"}},
		{&pgproto3.Query{String: "copy t from stdin"}, &pgproto3.CopyData{Data: []byte("BAD\tz\n")}, &pgproto3.CopyDone{}},
		{&pgproto3.Query{String: "select 2"}},
	}},
	{name: "copy from stdin in extended mode", rounds: []exchange{{
		&pgproto3.Parse{Query: "copy t from stdin"},
		&pgproto3.Bind{},
		&pgproto3.Execute{},
		&pgproto3.CopyData{Data: []byte("20\tq\n")},
		&pgproto3.CopyDone{},
		&pgproto3.Sync{},
	}}},
}

// TestAgainstPostgres runs each case against the oracle and against a
// fake-backed server and compares the answers.
func TestAgainstPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	probe, err := pgconn.Connect(ctx, oracleURL)
	cancel()
	if err != nil {
		t.Skipf("PostgreSQL oracle not reachable: %v", err)
	}
	probe.Close(context.Background())
	_, addr, _ := startFake(t, Options{})
	for _, tc := range oracleCases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needsTypes {
				requireTypesIO(t)
			}
			pg := dialRaw(t, oracleURL)
			if got := pg.roundTrip(&pgproto3.Query{String: oracleSetup}); got[len(got)-2] != "CommandComplete INSERT 0 7" {
				t.Fatalf("oracle setup: %q", got)
			}
			ours := dialRaw(t, fakeURL(addr))
			for i, round := range tc.rounds {
				want := pg.roundTrip(round...)
				got := ours.roundTrip(round...)
				if !equalStrings(got, want) {
					t.Errorf("round %d:\n got %s\nwant %s", i, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
				}
			}
		})
	}
}

// TestProtocolViolationsAgainstPostgres sends broken bytes to both servers:
// each must answer with the same FATAL and close the connection.
func TestProtocolViolationsAgainstPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	probe, err := pgconn.Connect(ctx, oracleURL)
	cancel()
	if err != nil {
		t.Skipf("PostgreSQL oracle not reachable: %v", err)
	}
	probe.Close(context.Background())
	_, addr, _ := startFake(t, Options{})
	for _, tc := range []struct {
		raw  []byte
		want []string // nil: what PostgreSQL answers
	}{
		{raw: []byte{'z', 0, 0, 0, 4}}, // unknown message type
		// PostgreSQL closes silently on a bad length; we send the reason first.
		{raw: []byte{'Q', 0, 0, 0, 2}, want: []string{`ErrorResponse FATAL 08P01 invalid message length P0 D"" H""`, "closed"}},
		{raw: []byte{'d', 0, 0, 0, 5, 'x', 'S'}},    // CopyData outside COPY is ignored; then 'S' starts a Sync
		{raw: []byte{'P', 0, 0, 0, 5, 'a', 'S'}},    // a string without its NUL: ERROR, then the Sync
		{raw: []byte{'C', 0, 0, 0, 6, 'X', 0, 'S'}}, // a bad Close subtype
	} {
		raw := tc.raw
		var answers [2][]string
		for i, url := range []string{oracleURL, fakeURL(addr)} {
			c := dialRaw(t, url)
			if _, err := c.nc.Write(append(raw, 0, 0, 0, 4)); err != nil {
				t.Fatal(err)
			}
			_ = c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			for {
				m, err := c.fe.Receive()
				if err != nil {
					answers[i] = append(answers[i], "closed")
					break
				}
				answers[i] = append(answers[i], describeMsg(m))
				if _, ok := m.(*pgproto3.ReadyForQuery); ok {
					break
				}
			}
		}
		want := answers[0]
		if tc.want != nil {
			want = tc.want
		}
		if !equalStrings(answers[1], want) {
			t.Errorf("bytes %q:\n got %q\nwant %q", raw, answers[1], want)
		}
	}
}
