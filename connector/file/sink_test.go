package file

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// textBatch builds a batch of c from rows of PostgreSQL text ("NULL" is NULL).
func textBatch(t *testing.T, c []types.Column, rows ...string) arrow.RecordBatch {
	t.Helper()
	arrs := make([]arrow.Array, len(c))
	for j, col := range c {
		vals := make([]types.Value, len(rows))
		for i, r := range rows {
			f := strings.Split(r, "|")[j]
			if f == "NULL" {
				continue
			}
			v, err := types.ParseText(f, col.Type, nil)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			vals[i] = v
		}
		a, err := types.MakeArray(memory.DefaultAllocator, col.Type, vals)
		if err != nil {
			t.Fatal(err)
		}
		arrs[j] = a
	}
	return array.NewRecordBatch(types.ArrowSchema(c), arrs, int64(len(rows)))
}

func openSink(t *testing.T, c []types.Column, opts map[string]string, format, enc string, appendOnly bool) *FileSink {
	t.Helper()
	s, err := OpenSink(sink.Spec{Name: "out", ID: 7, Cols: c, AppendOnly: appendOnly, Options: opts, Format: format, Encode: enc})
	if err != nil {
		t.Fatal(err)
	}
	return s.(*FileSink)
}

// visible lists the files of dir (recursively, relative), hidden ones
// included when all.
func listFiles(t *testing.T, dir string, all bool) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if !all && strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	})
	sort.Strings(out)
	return out
}

// readBack reads every visible file of dir with the file source.
func readBack(t *testing.T, dir string, c []types.Column, format string) []string {
	t.Helper()
	var rows []string
	for _, f := range listFiles(t, dir, false) {
		src := mustOpen(t, c, map[string]string{"path": filepath.Join(dir, f)}, format)
		got, _, errs := readAll(t, src)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", f, errs)
		}
		rows = append(rows, got...)
	}
	return rows
}

var ctx = context.Background()

// Every type the sources read comes back from a JSON or CSV file sink as
// it was written. (One value cannot: a jsonb JSON null reads back from
// JSON as SQL NULL, as JSON has one null; docs/sinks.md.)
func TestFileSinkRoundTrip(t *testing.T) {
	c := cols(t, "i int4, b int8, f float8, r float4, n numeric, s text, ts timestamp, tz timestamptz, d date, iv interval, j jsonb, by bytea, a int4[], t2 text[], ok bool")
	rows := []string{
		`1|9007199254740993|0.1|1.5|12345678901234567890.000000001|a "quoted", line` + "\n" + `two|2024-01-02 03:04:05.123456|2024-01-02 03:04:05.5+00|2024-02-29|1 year 2 mons 3 days 04:05:06.7|{"k": [1, null, "x"]}|\x00ff10|{1,NULL,3}|{"a,b","c\"d"}|t`,
		`-2|-1|NaN|-Infinity|NaN|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL`,
		`0|0|1e-300|3.4e+38|-0.5||1999-12-31 23:59:59|1970-01-01 00:00:00+00|0001-01-01|-1 days|[]|\x|{}|{}|f`,
	}
	rec := textBatch(t, c, rows...)
	for _, format := range []string{"JSON", "CSV"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			s := openSink(t, c, map[string]string{"path": dir}, format, "", true)
			w, err := s.NewWriter(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(ctx, rec, nil); err != nil {
				t.Fatal(err)
			}
			p, err := w.PreCommit(ctx, 5)
			if err != nil {
				t.Fatal(err)
			}
			if got := listFiles(t, dir, false); len(got) != 0 {
				t.Fatalf("visible before commit: %v", got)
			}
			if err := w.Commit(ctx, 5, p); err != nil {
				t.Fatal(err)
			}
			want := "out-w0-00000000000000000005-0000.jsonl"
			if format == "CSV" {
				want = strings.Replace(want, "jsonl", "csv", 1)
			}
			if got := listFiles(t, dir, true); !slices.Equal(got, []string{want}) {
				t.Fatalf("files %v, want [%s]", got, want)
			}
			got := readBack(t, dir, c, format)
			var exp []string
			for i := range rows {
				exp = append(exp, rowText(rec, c, i))
			}
			if !slices.Equal(got, exp) {
				t.Fatalf("read back\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(exp, "\n"))
			}
			if st := w.Status(); st.Rows != 3 || st.CommittedEpoch != 5 || st.OpenTxnAgeMs != 0 {
				t.Fatalf("status %+v", st)
			}
			w.Close()
		})
	}
}

// After a crash, Recover makes the checkpoint's files visible once
// (whether or not their commit ran) and deletes the rest.
func TestFileSinkRecover(t *testing.T) {
	c := cols(t, "k int8")
	for _, committed := range []bool{false, true} {
		dir := t.TempDir()
		s := openSink(t, c, map[string]string{"path": dir, "max_file_bytes": "4"}, "JSON", "", true)
		w, _ := s.NewWriter(ctx, 0)
		w.Write(ctx, textBatch(t, c, "1", "2"), nil)
		w.Write(ctx, textBatch(t, c, "3"), nil) // rolled: a second file
		p1, err := w.PreCommit(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if committed {
			if err := w.Commit(ctx, 10, p1); err != nil {
				t.Fatal(err)
			}
		}
		w.Write(ctx, textBatch(t, c, "4"), nil)
		w.PreCommit(ctx, 11) // staged, but checkpoint 11 never became durable
		w.Write(ctx, textBatch(t, c, "5"), nil)
		w.Close() // the crash

		w2, err := s.Recover(ctx, 0, 10, p1)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"out-w0-00000000000000000010-0000.jsonl", "out-w0-00000000000000000010-0001.jsonl"}
		if got := listFiles(t, dir, true); !slices.Equal(got, want) {
			t.Fatalf("committed=%v: files after recovery %v, want %v", committed, got, want)
		}
		if got := readBack(t, dir, c, "JSON"); strings.Join(got, ",") != "1,2,3" {
			t.Fatalf("rows %v", got)
		}
		// The writer goes on after the recovery.
		w2.Write(ctx, textBatch(t, c, "4"), nil)
		p, _ := w2.PreCommit(ctx, 12)
		w2.Commit(ctx, 12, p)
		if got := readBack(t, dir, c, "JSON"); strings.Join(got, ",") != "1,2,3,4" {
			t.Fatalf("rows %v", got)
		}
	}
}

// A checkpoint that failed leaves its files staged: the next one's pending
// covers them and its commit renames them.
func TestFileSinkFailedCheckpoint(t *testing.T) {
	c := cols(t, "k int8")
	dir := t.TempDir()
	s := openSink(t, c, map[string]string{"path": dir}, "JSON", "", true)
	w, _ := s.NewWriter(ctx, 0)
	w.Write(ctx, textBatch(t, c, "1"), nil)
	w.PreCommit(ctx, 1) // never durable
	w.Write(ctx, textBatch(t, c, "2"), nil)
	p2, _ := w.PreCommit(ctx, 2)
	w.Close() // crash before any commit: recovery from checkpoint 2
	if _, err := s.Recover(ctx, 0, 2, p2); err != nil {
		t.Fatal(err)
	}
	if got := readBack(t, dir, c, "JSON"); strings.Join(got, ",") != "1,2" {
		t.Fatalf("rows %v", got)
	}
}

// force_append_only writes inserts and update_after rows only; Debezium
// writes every change.
func TestFileSinkRetractions(t *testing.T) {
	c := cols(t, "k text, v int8")
	rec := textBatch(t, c, "a|1", "a|1", "a|2", "b|3")
	ops := []stream.Op{stream.Insert, stream.UpdateBefore, stream.UpdateAfter, stream.Delete}
	dir := t.TempDir()
	s := openSink(t, c, map[string]string{"path": dir, "force_append_only": "true"}, "JSON", "", false)
	w, _ := s.NewWriter(ctx, 0)
	w.Write(ctx, rec, ops)
	p, _ := w.PreCommit(ctx, 1)
	w.Commit(ctx, 1, p)
	if got := readBack(t, dir, c, "JSON"); strings.Join(got, ",") != "a|1,a|2" {
		t.Fatalf("rows %v", got)
	}
	if _, err := OpenSink(sink.Spec{Name: "x", Cols: c, Options: map[string]string{"path": dir}, Format: "JSON"}); pgerr.CodeOf(err) != pgerr.InvalidObjectDefinition {
		t.Fatalf("plain JSON over a retracting query: %v", err)
	}
	if _, err := OpenSink(sink.Spec{Name: "x", Cols: c, Key: []int{0}, Options: map[string]string{"path": dir}, Format: "UPSERT", Encode: "JSON"}); pgerr.CodeOf(err) != pgerr.FeatureNotSupported {
		t.Fatalf("upsert file sink: %v", err)
	}
	_, err := OpenSink(sink.Spec{Name: "x", Cols: c, AppendOnly: true, Options: map[string]string{"path": dir, "colour": "x"}, Format: "JSON"})
	if pgerr.CodeOf(err) != pgerr.InvalidParameterValue || pgerr.As(err).Hint != "Options are path, format, partition_by, max_file_bytes, header, force_append_only and primary_key." {
		t.Fatalf("unknown option: %v", err)
	}
}

// Parquet files read back with pqarrow; partition_by puts rows in
// col=value directories.
func TestFileSinkParquetPartitioned(t *testing.T) {
	c := cols(t, "day text, n int8, ts timestamptz")
	dir := t.TempDir()
	s := openSink(t, c, map[string]string{"path": dir, "partition_by": "day"}, "PARQUET", "", true)
	// Several columns nest.
	s2 := openSink(t, c, map[string]string{"path": filepath.Join(dir, "two"), "partition_by": "day, n"}, "JSON", "", true)
	w2, _ := s2.NewWriter(ctx, 0)
	w2.Write(ctx, textBatch(t, c, "d1|1|NULL", "d1|2|NULL", "d1|1|NULL"), nil)
	p2, _ := w2.PreCommit(ctx, 1)
	w2.Commit(ctx, 1, p2)
	if got := listFiles(t, filepath.Join(dir, "two"), true); strings.Join(got, " ") !=
		"day=d1/n=1/out-w0-00000000000000000001-0000.jsonl day=d1/n=2/out-w0-00000000000000000001-0001.jsonl" {
		t.Fatalf("nested partitions: %v", got)
	}
	os.RemoveAll(filepath.Join(dir, "two"))
	w, _ := s.NewWriter(ctx, 0)
	w.Write(ctx, textBatch(t, c, "2024-01-01|1|2024-01-01 10:00:00+00", "2024-01-01|2|NULL", "2024/01/02|3|2024-01-02 00:00:00+00", "NULL|4|NULL"), nil)
	p, err := w.PreCommit(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx, 3, p); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"day=2024%2F01%2F02/out-w0-00000000000000000003-0000.parquet",
		"day=2024-01-01/out-w0-00000000000000000003-0001.parquet",
		"day=__HIVE_DEFAULT_PARTITION__/out-w0-00000000000000000003-0002.parquet",
	}
	got := listFiles(t, dir, true)
	if !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	rf, err := file.OpenParquetFile(filepath.Join(dir, want[1]), false)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	fr, err := pqarrow.NewFileReader(rf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	if tbl.NumRows() != 2 {
		t.Fatalf("table has %d rows, want 2", tbl.NumRows())
	}
	for i, f := range types.ArrowSchema(c).Fields() {
		if got := tbl.Schema().Field(i); got.Name != f.Name || !arrow.TypeEqual(got.Type, f.Type) {
			t.Fatalf("field %d: %v, want %v", i, got, f)
		}
	}
	ts := tbl.Column(2).Data().Chunk(0).(*array.Timestamp)
	if ts.Value(0) != 1704103200000000 || !ts.IsNull(1) {
		t.Fatalf("ts column %v", ts)
	}
}
