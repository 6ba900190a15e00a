package pgcdc

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/connector/internal/position"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

func base() map[string]string {
	return map[string]string{"hostname": "h", "username": "u", "database.name": "d", "table.name": "public.orders", "slot.name": "s1"}
}

// TestParseConfig: defaults, schema from table.name or schema.name, and
// every bad option refused naming it (22023).
func TestParseConfig(t *testing.T) {
	c, err := ParseConfig(base())
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 5432 || c.Schema != "public" || c.Table != "orders" || c.Publication != "s1" || c.SSLMode != "prefer" {
		t.Fatalf("%+v", c)
	}
	o := base()
	o["table.name"], o["schema.name"], o["publication.name"], o["port"] = "Orders", "shop", "p", "6543"
	if c, err = ParseConfig(o); err != nil || c.Schema != "shop" || c.Table != "Orders" || c.Port != 6543 || c.Publication != "p" {
		t.Fatalf("%+v %v", c, err)
	}
	for key, val := range map[string]string{"colour": "red", "port": "99999", "slot.name": "Bad-Slot", "publication.name": "a b",
		"connect.timeout": "soon", "ssl.mode": "maybe", "hostname": "", "table.name": ".x"} {
		o := base()
		o[key] = val
		_, err := ParseConfig(o)
		if pgerr.CodeOf(err) != pgerr.InvalidParameterValue || !strings.Contains(err.Error(), key) {
			t.Errorf("%s = %q: %v", key, val, err)
		}
	}
	if _, err := Open([]types.Column{{Name: "id", Type: types.TInt4}}, base(), "JSON"); pgerr.CodeOf(err) != pgerr.InvalidParameterValue {
		t.Errorf("FORMAT: %v", err)
	}
	if _, err := Open([]types.Column{{Name: DeleteColumn, Type: types.TInt4}}, base(), ""); pgerr.CodeOf(err) != pgerr.DuplicateColumn {
		t.Errorf("reserved column: %v", err)
	}
}

// TestTableOptions: a table FROM a shared source gets the source's
// options, its table, and a slot of its own.
func TestTableOptions(t *testing.T) {
	o := base()
	delete(o, "table.name")
	src, err := Open(nil, o, "")
	if err != nil || !src.Shared() {
		t.Fatalf("%v %v", src, err)
	}
	got, err := TableOptions(o, "Public.Order-Lines")
	if err != nil || got["slot.name"] != "s1_public_order_lines" || got["table.name"] != "Public.Order-Lines" || got["publication.name"] != "s1" || got["hostname"] != "h" {
		t.Fatalf("%v %v", got, err)
	}
	long, _ := TableOptions(o, strings.Repeat("t", 100))
	if len(long["slot.name"]) != 63 {
		t.Errorf("slot %q", long["slot.name"])
	}
	if _, err := TableOptions(base(), "x"); err == nil {
		t.Errorf("a source with table.name taken as shared")
	}
}

// TestPositions: a position says whether the reader starts with a
// snapshot; a malformed one is XX001.
func TestPositions(t *testing.T) {
	src, err := Open([]types.Column{{Name: "id", Type: types.TInt4}}, base(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pos  []byte
		snap bool
	}{{nil, true}, {position.Encode(position.PgCDCV1, 100, 0), true}, {position.Encode(position.PgCDCV1, 100, 1), false}} {
		r := src.NewReader(ReaderOptions{})
		if err := r.Seek(c.pos); err != nil || NeedsSnapshot(c.pos) != c.snap || r.fresh != c.snap {
			t.Errorf("%x: %v %v", c.pos, err, NeedsSnapshot(c.pos))
		}
		if string(r.Position()) != string(c.pos) {
			t.Errorf("%x: position %x", c.pos, r.Position())
		}
	}
	for _, bad := range [][]byte{{0x41, 1}, position.Encode(position.PgCDCV1, 1), {position.PgCDCV1, 0xff}} {
		if err := src.NewReader(ReaderOptions{}).Seek(bad); pgerr.CodeOf(err) != pgerr.DataCorrupted {
			t.Errorf("%x: %v", bad, err)
		}
	}
	if u, old, err := ParseUnchanged("old:3,7"); err != nil || !old || len(u) != 2 || u[1] != 7 {
		t.Errorf("ParseUnchanged: %v %v %v", u, old, err)
	}
}
