package wire

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// FuzzFrontendBytes sends arbitrary bytes after a good startup. Whatever
// they are, the server must not crash or hang: afterwards a fresh
// connection still answers a query.
func FuzzFrontendBytes(f *testing.F) {
	encode := func(msgs ...pgproto3.FrontendMessage) []byte {
		var b []byte
		for _, m := range msgs {
			var err error
			if b, err = m.Encode(b); err != nil {
				f.Fatal(err)
			}
		}
		return b
	}
	f.Add(encode(&pgproto3.Query{String: "select 1; select * from generate_series(1, 5)"}))
	f.Add(encode(&pgproto3.Parse{Name: "a", Query: "select $1::int4"}, &pgproto3.Bind{PreparedStatement: "a", ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{1, 2}}}, &pgproto3.Execute{MaxRows: 1}, &pgproto3.Sync{}))
	f.Add(encode(&pgproto3.Query{String: "copy t from stdin"}, &pgproto3.CopyData{Data: []byte("1\t2\n")}, &pgproto3.CopyDone{}))
	f.Add(encode(&pgproto3.Parse{Query: fakeTypes}, &pgproto3.Bind{ResultFormatCodes: []int16{1}}, &pgproto3.Execute{}, &pgproto3.Sync{}))
	f.Add([]byte{'B', 0, 0, 0, 8, 0, 0, 0xff, 0xff})
	f.Add([]byte{'P', 0, 0, 0, 5, 0})
	f.Add([]byte{'E', 0, 0, 0, 4, 'S', 0, 0, 0, 4})
	_, addr, _ := startFake(f, Options{MaxMessageSize: 1 << 16})
	f.Fuzz(func(t *testing.T, data []byte) {
		c := dialRaw(t, fakeURL(addr))
		_ = c.nc.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = c.nc.Write(data)
		c.nc.Close()
		check := dialRaw(t, fakeURL(addr))
		got := check.roundTrip(&pgproto3.Query{String: "select 6"})
		if len(got) != 4 || got[1] != `DataRow "6"` {
			t.Fatalf("server unhealthy after %q: %q", data, got)
		}
	})
}
