package catalog

import (
	"fmt"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// A source's connector, options and FORMAT survive a reopen: views over it
// are rebuilt from them at start.
func TestSourceDefinitionPersists(t *testing.T) {
	dir := t.TempDir()
	st := newStore(t)
	c := openTest(t, dir, st)
	src := mustCreate(t, c, &Relation{Name: "bid", Kind: KindSource, AppendOnly: true,
		Columns:   []Column{{Name: "auction", Type: types.TInt8}, {Name: "date_time", Type: types.TTimestamp}},
		Watermark: &Watermark{Column: "date_time", Expr: "date_time - '4 seconds'::interval"},
		Connector: "nexmark", Options: map[string]string{"table": "bid", "events": "50000"}, Format: "JSON"})

	got := openTest(t, dir, st).Relation(src.OID)
	if got == nil {
		t.Fatal("source lost on reopen")
	}
	if got.Kind != KindSource || !got.AppendOnly || got.Connector != "nexmark" || got.Format != "JSON" ||
		fmt.Sprint(got.Options) != fmt.Sprint(src.Options) || got.Watermark == nil || got.Watermark.Expr != src.Watermark.Expr {
		t.Fatalf("reopened %+v, want %+v", got, src)
	}
}
