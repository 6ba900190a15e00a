package engine

import (
	"reflect"
	"testing"

	"github.com/streamsql/streamsql/catalog"
)

func TestCopySplitText(t *testing.T) {
	c := &copyIn{opts: copyOptions{format: "text", delimiter: "\t", null: `\N`}}
	if err := c.splitText([]byte("1\ta\\tb\t\\N\t\\\\N\t\\101\\x41")); err != nil {
		t.Fatal(err)
	}
	want := []string{"1", "a\tb", "N", `\N`, "AA"}
	wantNull := []bool{false, false, true, false, false}
	if !reflect.DeepEqual(c.fields, want) || !reflect.DeepEqual(c.isNull, wantNull) {
		t.Fatalf("fields %q nulls %v", c.fields, c.isNull)
	}
}

func TestCopySplitCSV(t *testing.T) {
	c := &copyIn{rel: &catalog.Relation{Name: "t"}, opts: copyOptions{format: "csv", delimiter: ",", null: "", quote: `"`, escape: `"`}}
	if err := c.splitCSV([]byte(`1,"a,b","say ""hi""",,""`)); err != nil {
		t.Fatal(err)
	}
	want := []string{"1", "a,b", `say "hi"`, "", ""}
	wantNull := []bool{false, false, false, true, false}
	if !reflect.DeepEqual(c.fields, want) || !reflect.DeepEqual(c.isNull, wantNull) {
		t.Fatalf("fields %q nulls %v", c.fields, c.isNull)
	}
	if err := c.splitCSV([]byte(`"open`)); err == nil {
		t.Fatal("unterminated quote accepted")
	}
}

func TestCopyCSVLineEnd(t *testing.T) {
	c := &copyIn{opts: copyOptions{format: "csv", quote: `"`, escape: `"`}}
	data := []byte("1,\"two\nlines\"\n2,x\n")
	if got := c.lineEnd(data); got != 13 {
		t.Fatalf("line end %d", got)
	}
}
