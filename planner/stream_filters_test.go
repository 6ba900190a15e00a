package planner

import (
	"testing"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// Equal FILTERs of one aggregation share one expression; the same text
// over another column of the same name does not. (A volatile FILTER would
// not either, but a continuous query refuses volatile functions.)
func TestStreamShareFilters(t *testing.T) {
	d := newNexmarkDB(t)
	q, err := d.planEmit("SELECT channel, count(*) FILTER (WHERE price < 10), count(DISTINCT bidder) FILTER (WHERE price < 10), " +
		"count(DISTINCT auction) FILTER (WHERE price < 10), count(*) FILTER (WHERE price >= 10) FROM bid GROUP BY channel")
	if err != nil {
		t.Fatal(err)
	}
	h := findHashAgg(q.Root)
	if h == nil || len(h.Aggs) != 4 {
		t.Fatalf("no HashAgg of 4 aggregates in %v", q.Root.Explain())
	}
	f := h.Aggs
	if f[0].Filter != f[1].Filter || f[0].Filter != f[2].Filter {
		t.Error("the three FILTER (WHERE price < 10) are not one expression")
	}
	if f[3].Filter == f[0].Filter {
		t.Error("FILTER (WHERE price >= 10) shares price < 10's expression")
	}

	// a.price and b.price render alike; they are other columns
	q, err = d.planEmit("SELECT a.id, count(*) FILTER (WHERE b.price > 10), count(*) FILTER (WHERE c.price > 10) " +
		"FROM auction a JOIN bid b ON a.id = b.auction JOIN bid c ON a.id = c.auction GROUP BY a.id")
	if err != nil {
		t.Fatal(err)
	}
	if h = findHashAgg(q.Root); h == nil || len(h.Aggs) != 2 {
		t.Fatalf("no HashAgg of 2 aggregates")
	}
	if h.Aggs[0].Filter.String() == h.Aggs[1].Filter.String() && h.Aggs[0].Filter == h.Aggs[1].Filter {
		t.Errorf("FILTERs over b.price and c.price share one expression (%s)", h.Aggs[0].Filter)
	}
}

// findNode returns the first node of type T in a plan (preorder).
func findNode[T stream.Node](n stream.Node) (T, bool) {
	if x, ok := n.(T); ok {
		return x, true
	}
	for _, in := range n.Inputs() {
		if x, ok := findNode[T](in); ok {
			return x, true
		}
	}
	var none T
	return none, false
}

func findHashAgg(n stream.Node) *stream.HashAgg {
	h, _ := findNode[*stream.HashAgg](n)
	return h
}

// filterKey tells apart two columns that render alike.
func TestFilterKeyColumns(t *testing.T) {
	a := &expr.ColRef{Idx: 1, T: types.TInt8, Name: "price"}
	b := &expr.ColRef{Idx: 4, T: types.TInt8, Name: "price"}
	if a.String() != b.String() {
		t.Fatalf("the columns render apart: %s, %s", a, b)
	}
	if filterKey(a) == filterKey(b) {
		t.Errorf("columns 1 and 4 named price have one key %q", filterKey(a))
	}
	if filterKey(a) != filterKey(&expr.ColRef{Idx: 1, T: types.TInt8, Name: "price"}) {
		t.Error("equal columns have different keys")
	}
}
