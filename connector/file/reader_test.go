package file

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/pgerr"
)

func TestCSVRows(t *testing.T) {
	c := cols(t, "id bigint, name text, px numeric(6,2), ts timestamp, ok boolean, n smallint, v varchar(3), tz timestamptz")
	data := "id,name,px,ts,ok,n,v,tz\r\n" +
		"1,plain,1.5,2024-01-01 10:00:00,t,7,abc,2024-01-01 10:00:00+02\r\n" +
		`2,"with ""quotes"", commas",  -2 ,2024-01-02,false,-7,"ab ",2024-01-01 10:00:00` + "\n" +
		"\n" + // blank lines are skipped
		`3,"two` + "\n" + `lines",,,,,"",` + "\n" +
		`4,mixed"quo"ted,0,2024-01-01T00:00:01.5,yes, 12 ,x,` // no final newline
	s := mustOpen(t, c, map[string]string{"path": writeFile(t, "t.csv", data), "header": "true"}, "")
	rows, sizes, errs := readAll(t, s)
	want := []string{
		"1|plain|1.50|2024-01-01 10:00:00|t|7|abc|2024-01-01 08:00:00+00",
		`2|with "quotes", commas|-2.00|2024-01-02 00:00:00|f|-7|ab |2024-01-01 10:00:00+00`,
		"3|two\nlines|NULL|NULL|NULL|NULL||NULL",
		"4|mixedquoted|0.00|2024-01-01 00:00:01.5|t|12|x|NULL",
	}
	if !reflect.DeepEqual(rows, want) || len(errs) != 0 {
		t.Fatalf("rows\n%q\nwant\n%q\nerrors %v", rows, want, errs)
	}
	if !reflect.DeepEqual(sizes, []int{4}) {
		t.Errorf("batch sizes %v", sizes)
	}

	// Another delimiter, no header: the first line is data.
	s = mustOpen(t, cols(t, "a int, b text"), map[string]string{"path": writeFile(t, "t.txt", "1;x,y\n2;\n"), "delimiter": ";"}, "CSV")
	if rows, _, _ := readAll(t, s); !reflect.DeepEqual(rows, []string{"1|x,y", "2|NULL"}) {
		t.Fatalf("delimiter ';': %q", rows)
	}
}

func TestJSONRows(t *testing.T) {
	c := cols(t, "id int, name text, score float8, tags jsonb, doc json, at date, flag boolean, big bigint")
	data := `{"id": 1, "name": "a", "score": 1.5, "tags": ["x", {"k": 1}], "doc": {"a": [1, 2]}, "at": "2024-02-29", "flag": true, "big": -9223372036854775808}` + "\n" +
		`{"ID": 2, "Name": "esc \"q\" \\ \u00e9 \ud83d\ude00 \n", "extra": {"ignored": [1, "}"]}, "doc": "s", "score": -1e3}` + "\n" +
		"   \n" +
		`{"id": 3, "name": null, "name2": 5, "tags": null, "flag": "off", "doc": 12.0}` + "\r\n" +
		`{}` + "\n" +
		`{"name": 42, "score": "NaN", "big": " 7 "}`
	s := mustOpen(t, c, map[string]string{"path": writeFile(t, "t.json", data)}, "")
	rows, sizes, errs := readAll(t, s)
	want := []string{
		`1|a|1.5|["x", {"k": 1}]|{"a": [1, 2]}|2024-02-29|t|-9223372036854775808`,
		"2|esc \"q\" \\ é 😀 \n|-1000|NULL|\"s\"|NULL|NULL|NULL",
		"3|NULL|NULL|NULL|12.0|NULL|f|NULL",
		"NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL",
		"NULL|42|NaN|NULL|NULL|NULL|NULL|7",
	}
	if !reflect.DeepEqual(rows, want) || len(errs) != 0 {
		t.Fatalf("rows\n%q\nwant\n%q\nerrors %v", rows, want, errs)
	}
	if !reflect.DeepEqual(sizes, []int{5}) {
		t.Errorf("batch sizes %v", sizes)
	}
}

func TestBadRecordsAreSkipped(t *testing.T) {
	c := cols(t, "a int, b date")
	csvData := "1,2024-01-01\n" +
		"x,2024-01-01\n" + // line 2: bad integer
		"3,2024-13-01\n" + // line 3: bad date
		"4\n" + // line 4: missing column
		"5,2024-01-01,9\n" + // line 5: extra column
		"99999999999,2024-01-01\n" + // line 6: out of range
		"7,\"2024-01-01\n" // line 7: unterminated quote at the end of the file
	s := mustOpen(t, c, map[string]string{"path": writeFile(t, "bad.csv", csvData)}, "")
	rows, _, errs := readAll(t, s)
	if !reflect.DeepEqual(rows, []string{"1|2024-01-01"}) {
		t.Fatalf("rows %q", rows)
	}
	wantErrs := []struct {
		code pgerr.Code
		msg  string
	}{
		{pgerr.InvalidTextRepresentation, `line 2, column a: invalid input syntax for type integer: "x"`},
		{pgerr.DatetimeFieldOverflow, "line 3, column b: "},
		{pgerr.BadCopyFileFormat, `line 4: missing data for column "b"`},
		{pgerr.BadCopyFileFormat, "line 5: extra data after last expected column"},
		{pgerr.NumericValueOutOfRange, "line 6, column a: "},
		{pgerr.BadCopyFileFormat, "line 7: unterminated CSV quoted field"},
	}
	if len(errs) != len(wantErrs) {
		t.Fatalf("errors %v", errs)
	}
	for i, w := range wantErrs {
		e := pgerr.As(errs[i])
		if e == nil || e.Code != w.code || !strings.HasPrefix(e.Message, fmt.Sprintf("file %q, ", s.Path())) || !strings.Contains(e.Message, w.msg) {
			t.Errorf("error %d: %v (%s), want %s %q", i, errs[i], pgerr.CodeOf(errs[i]), w.code, w.msg)
		}
	}

	jsonData := `{"a": 1}` + "\n" +
		`{"a": 1` + "\n" +
		`{"a": 1} x` + "\n" +
		`[1]` + "\n" +
		`{"a": [1]}` + "\n" +
		`{"a": 01}` + "\n" +
		`{"a": "1", "b": "\ud800"}` + "\n" +
		`{"a": tru}` + "\n" +
		`{"b": "someday"}` + "\n" +
		`{"a": 2}`
	s = mustOpen(t, c, map[string]string{"path": writeFile(t, "bad.json", jsonData)}, "")
	rows, _, errs = readAll(t, s)
	if !reflect.DeepEqual(rows, []string{"1|NULL", "2|NULL"}) || len(errs) != 8 {
		t.Fatalf("rows %q errors %v", rows, errs)
	}
	for i, e := range errs {
		if !strings.Contains(e.Error(), fmt.Sprintf(", line %d", i+2)) || pgerr.CodeOf(e) != pgerr.InvalidTextRepresentation && pgerr.CodeOf(e) != pgerr.InvalidDatetimeFormat {
			t.Errorf("error %d: %v (%s)", i, e, pgerr.CodeOf(e))
		}
	}
	if !strings.Contains(errs[3].Error(), "column a: a JSON array cannot be read as type integer") {
		t.Errorf("array into integer: %v", errs[3])
	}
}

func TestBatchSizes(t *testing.T) {
	var b strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&b, "%d,v%d\n", i, i)
	}
	s := mustOpen(t, cols(t, "i int, v text"), map[string]string{"path": writeFile(t, "big.csv", b.String())}, "")
	rows, sizes, _ := readAll(t, s)
	if !reflect.DeepEqual(sizes, []int{BatchRows, BatchRows, 10000 - 2*BatchRows}) {
		t.Fatalf("batch sizes %v", sizes)
	}
	for i, r := range rows {
		if r != fmt.Sprintf("%d|v%d", i, i) {
			t.Fatalf("row %d = %q", i, r)
		}
	}
}

func TestRunStops(t *testing.T) {
	var b strings.Builder
	for i := range 3 * BatchRows {
		fmt.Fprintf(&b, "%d\n", i)
	}
	s := mustOpen(t, cols(t, "i int"), map[string]string{"path": writeFile(t, "n.csv", b.String())}, "")
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := s.NewReader(ReaderOptions{}).Run(ctx, func(arrow.RecordBatch) error { n++; cancel(); return nil })
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Fatalf("cancel: %v after %d batches", err, n)
	}
	gone := errors.New("gone")
	if err := s.NewReader(ReaderOptions{}).Run(context.Background(), func(arrow.RecordBatch) error { return gone }); !errors.Is(err, gone) {
		t.Fatalf("emit error: %v", err)
	}
	// The file vanished after CREATE SOURCE: not following, Run fails.
	if err := os.Remove(s.Path()); err != nil {
		t.Fatal(err)
	}
	err = s.NewReader(ReaderOptions{}).Run(context.Background(), func(arrow.RecordBatch) error { return nil })
	wantCode(t, err, pgerr.UndefinedFile)
}

func TestFloats(t *testing.T) {
	c := cols(t, "r real, d double precision")
	data := "1.5,-2.25e3\n 7 ,+.5\nInfinity,-inf\nNaN,0\n0.1,1e-3\n3.4028236e38,1\n1,1e-400\n1,1e309\n1,0x10\n1,x\n"
	s := mustOpen(t, c, map[string]string{"path": writeFile(t, "f.csv", data)}, "")
	rows, _, errs := readAll(t, s)
	want := []string{"1.5|-2250", "7|0.5", "Infinity|-Infinity", "NaN|0", "0.1|0.001", "1|16"}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("rows %q, want %q (errors %v)", rows, want, errs)
	}
	codes := []pgerr.Code{pgerr.NumericValueOutOfRange, pgerr.NumericValueOutOfRange, pgerr.NumericValueOutOfRange, pgerr.InvalidTextRepresentation}
	if len(errs) != len(codes) {
		t.Fatalf("errors %v", errs)
	}
	for i, e := range errs {
		if pgerr.CodeOf(e) != codes[i] {
			t.Errorf("error %v (%s), want %s", e, pgerr.CodeOf(e), codes[i])
		}
	}
}
