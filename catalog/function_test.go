package catalog

import (
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/types"
)

// TestFunctions: a SQL function is stored with its signature and body,
// survives a reopen, is replaced in place (same OID) unless its return
// type changes, and cannot be dropped while a view depends on it.
func TestFunctions(t *testing.T) {
	dir := t.TempDir()
	st, err := storage.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := openTest(t, dir, st)
	cc := &Function{Name: "count_char", Args: []FuncArg{{Name: "s", Type: types.TText}, {Name: "c", Type: types.TText}},
		Return: types.TInt8, Body: "SELECT length(s) - length(replace(s, c, ''))", Volatility: 'i'}
	fn, err := c.CreateFunction(cc, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateFunction(cc, false); pgerr.As(err) == nil || pgerr.As(err).Code != "42723" {
		t.Fatalf("duplicate: %v", err)
	}
	other := *cc
	other.Return = types.TInt4
	if _, err := c.CreateFunction(&other, true); pgerr.As(err) == nil || pgerr.As(err).Code != "42P13" {
		t.Fatalf("replace changing the return type: %v", err)
	}
	repl := *cc
	repl.Body = "SELECT 0"
	if r, err := c.CreateFunction(&repl, true); err != nil || r.OID != fn.OID {
		t.Fatalf("replace: %v, %+v", err, r)
	}
	// An overload with other argument types is another function.
	one := &Function{Name: "count_char", Args: []FuncArg{{Type: types.TText}}, Return: types.TInt8, Body: "SELECT 1", Volatility: 'v'}
	if _, err := c.CreateFunction(one, false); err != nil {
		t.Fatal(err)
	}
	src, err := c.CreateTable(&Relation{Name: "t", Kind: KindSource, AppendOnly: true, Connector: "nexmark",
		Columns: []Column{{Name: "s", Type: types.TText}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.CreateView(&Relation{Name: "v", Kind: KindMatView, Columns: []Column{{Name: "n", Type: types.TInt8}}, ViewQuery: "SELECT count_char(s, 'c') FROM t"},
		[]uint32{src.OID, fn.OID}, false)
	if err != nil {
		t.Fatal(err)
	}

	c2 := openTest(t, dir, st)
	fns := c2.Functions("", "count_char", []string{"public"})
	if len(fns) != 2 || fns[0].OID != fn.OID || fns[0].Body != "SELECT 0" || fns[0].Return.OID() != types.TInt8.OID() ||
		fns[0].Args[1].Name != "c" || fns[0].Args[1].Type.OID() != types.TText.OID() || fns[0].Volatility != 'i' || len(fns[1].Args) != 1 {
		t.Fatalf("after reopen: %+v", fns)
	}
	if got := c2.Relation(v.OID); got == nil || len(got.DependsOn) != 2 {
		t.Fatalf("view after reopen: %+v", got)
	}
	err = c2.DropFunction("", "count_char", []types.T{types.TText, types.TText}, []string{"public"}, false)
	if pgerr.As(err) == nil || pgerr.As(err).Code != pgerr.DependentObjectsStillExist {
		t.Fatalf("drop with a dependent view: %v", err)
	}
	if err := c2.DropFunction("", "count_char", nil, []string{"public"}, false); pgerr.As(err) == nil || pgerr.As(err).Code != pgerr.AmbiguousFunction {
		t.Fatalf("drop of an overloaded name without arguments: %v", err)
	}
	if err := c2.DropFunction("", "count_char", []types.T{types.TText}, []string{"public"}, false); err != nil {
		t.Fatal(err)
	}
	if err := c2.DropFunction("", "count_char", []types.T{types.TText}, []string{"public"}, true); err != nil {
		t.Fatalf("IF EXISTS: %v", err)
	}
	if err := c2.DropFunction("", "nosuch", nil, []string{"public"}, false); pgerr.As(err) == nil || pgerr.As(err).Code != pgerr.UndefinedFunction {
		t.Fatalf("drop of a missing function: %v", err)
	}
	if err := c2.CreateSchema("s", false); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.CreateFunction(&Function{Schema: "s", Name: "f", Return: types.TInt4, Body: "SELECT 1", Volatility: 'v'}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.DropSchema("s", false, false); pgerr.As(err) == nil || pgerr.As(err).Code != pgerr.DependentObjectsStillExist {
		t.Fatalf("drop of a schema holding a function without CASCADE: %v", err)
	}
	if fs := c2.Functions("s", "f", nil); len(fs) != 1 {
		t.Fatalf("schema s holds %v", fs)
	}
	if n, err := c2.DropSchema("s", false, true); err != nil || n != "drop cascades to function s.f()" {
		t.Fatalf("DROP SCHEMA s CASCADE: %q, %v", n, err)
	}
	if fs := c2.Functions("s", "f", nil); len(fs) != 0 {
		t.Fatalf("schema s dropped, its function left: %v", fs)
	}
	if len(openTest(t, dir, st).Functions("", "count_char", []string{"public"})) != 1 {
		t.Fatal("the dropped overload came back after a reopen")
	}
}
