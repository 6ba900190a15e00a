package datagen

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/types"
)

// allTypes has one column of every supported type, with a few options.
func allTypes(t *testing.T) ([]types.Column, map[string]string) {
	cols := []types.Column{
		col(t, "a", "smallint"), col(t, "b", "integer"), col(t, "c", "bigint"),
		col(t, "d", "real"), col(t, "e", "double precision"), col(t, "f", "numeric(8,2)"),
		col(t, "g", "text"), col(t, "h", "varchar(5)"), col(t, "i", "boolean"),
		col(t, "j", "date"), col(t, "k", "timestamp"), col(t, "l", "timestamptz"),
		col(t, "m", "interval"), col(t, "n", "jsonb"), col(t, "o", "character(4)"),
		col(t, "p", "bigint"), col(t, "q", "numeric"),
		col(t, "r", "integer"), col(t, "s", "real"), col(t, "t", "interval"), col(t, "u", "boolean"),
		col(t, "v", "numeric(6,1)"), col(t, "w", "text"), col(t, "x", "double precision"), col(t, "y", "interval"),
		col(t, "z", "date"), col(t, "zz", "numeric(4,3)"), col(t, "uu", "uuid"), col(t, "uv", "uuid"),
	}
	opts := map[string]string{
		"rows": "500", "seed": "42",
		"fields.n.values":    `{"a": 1}, [1]`,
		"fields.p.kind":      "sequence",
		"fields.k.max_past":  "5 seconds",
		"fields.g.null_rate": "0.3",
		"fields.q.min":       "-5.125", "fields.q.max": "5",
		"fields.r.values": "1,2,3,4,5,6,7,8,9", "fields.s.values": "0.5,1.5,2.5,3.5",
		"fields.t.values": "1 day,2 hours,3 mons,4 years", "fields.u.values": "t,f,f",
		"fields.v.kind": "sequence", "fields.w.kind": "sequence", "fields.x.kind": "sequence",
		"fields.z.kind":    "random",
		"fields.uv.values": "550e8400-e29b-41d4-a716-446655440000,A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
	}
	return cols, opts
}

func TestBatchSplitInvariance(t *testing.T) {
	cols, opts := allTypes(t)
	cfg := mustConfig(t, cols, opts)
	whole := drain(t, cfg, 1000, 1000)
	if len(whole) != 500 {
		t.Fatalf("got %d rows, want 500", len(whole))
	}
	for _, sizes := range [][]int{{1}, {7, 3, 100}, {499, 1}, {64}} {
		if got := drain(t, cfg, 1000, sizes...); !reflect.DeepEqual(got, whole) {
			t.Fatalf("batch sizes %v give other rows than one batch", sizes)
		}
	}
	// Another Config from the same options gives the same rows.
	if got := drain(t, mustConfig(t, cols, opts), 1000, 33); !reflect.DeepEqual(got, whole) {
		t.Fatal("equal options give other rows")
	}
	// Resuming at a position continues the stream.
	g := New(cfg)
	g.SetPosition(250)
	rec, err := g.Next(1)
	if err != nil {
		t.Fatal(err)
	}
	for c := range cols {
		if v := types.ValueAt(rec.Column(c), 0, cols[c].Type); !reflect.DeepEqual(v, whole[250][c]) {
			t.Fatalf("column %s at position 250: %v, want %v", cols[c].Name, v, whole[250][c])
		}
	}
	// A different seed changes the random columns but not the sequences.
	opts["seed"] = "43"
	other := drain(t, mustConfig(t, cols, opts), 1000, 1000)
	for c, colm := range cols {
		same := reflect.DeepEqual(column(other, c), column(whole, c))
		seq := strings.Contains(" j l p v w x ", " "+colm.Name+" ")
		if same != seq {
			t.Errorf("column %s (%s): unchanged by the seed = %v", colm.Name, colm.Type, same)
		}
	}
}

// TestValuesAreCanonical checks that every generated value is what
// PostgreSQL's input function makes of its own output, for the column type
// (numeric scale, char(n) padding, varchar(n) length, jsonb normal form).
func TestValuesAreCanonical(t *testing.T) {
	cols, opts := allTypes(t)
	rows := drain(t, mustConfig(t, cols, opts), 1000, 128)
	nulls := 0
	for _, r := range rows {
		for c, v := range r {
			if v == nil {
				nulls++
				continue
			}
			text := types.FormatText(v, cols[c].Type, nil)
			back, err := types.ParseText(text, cols[c].Type, nil)
			if err != nil {
				t.Fatalf("column %s: %q does not read back: %v", cols[c].Name, text, err)
			}
			if again := types.FormatText(back, cols[c].Type, nil); again != text {
				t.Fatalf("column %s: %q reads back as %q", cols[c].Name, text, again)
			}
		}
	}
	if nulls < 100 || nulls > 200 { // column g: 30% of 500
		t.Errorf("%d NULLs, want about 150", nulls)
	}
}

func TestRandomBounds(t *testing.T) {
	cols := []types.Column{
		col(t, "i", "integer"), col(t, "f", "double precision"), col(t, "n", "numeric(6,2)"),
		col(t, "d", "date"), col(t, "ts", "timestamptz"), col(t, "iv", "interval"),
		col(t, "s", "smallint"), col(t, "r", "real"),
	}
	cfg := mustConfig(t, cols, map[string]string{
		"rows":         "2000",
		"fields.i.min": "-3", "fields.i.max": "3",
		"fields.f.min": "10", "fields.f.max": "10.5",
		"fields.n.min": "-1.5", "fields.n.max": "1.5",
		"fields.d.kind": "random",
		"fields.d.min":  "2024-02-27", "fields.d.max": "2024-03-02",
		"fields.ts.kind": "random",
		"fields.ts.min":  "2024-01-01 00:00:00+00", "fields.ts.max": "2024-01-01 00:00:01+00",
		"fields.iv.min": "1 minute", "fields.iv.max": "2 minutes",
		"fields.s.min": "32766",
	})
	rows := drain(t, cfg, 10000, 300)
	if len(rows) != 2000 {
		t.Fatalf("got %d rows, want 2000", len(rows))
	}
	parse := func(s string, ty types.T) types.Value {
		v, err := types.ParseText(s, ty, nil)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		c      int
		lo, hi string
		all    int // distinct values expected (0: don't count)
	}{
		{0, "-3", "3", 7},
		{1, "10", "10.5", 0},
		{2, "-1.50", "1.50", 301},
		{3, "2024-02-27", "2024-03-02", 5},
		{4, "2024-01-01 00:00:00+00", "2024-01-01 00:00:01+00", 0},
		{5, "1 minute", "2 minutes", 0},
		{6, "32766", "32767", 2},
		{7, "0", "1", 0},
	}
	for _, k := range cases {
		ty := cols[k.c].Type
		lo, hi := parse(k.lo, ty), parse(k.hi, ty)
		seen := map[string]bool{}
		for _, v := range column(rows, k.c) {
			if types.Compare(v, lo, ty) < 0 || types.Compare(v, hi, ty) > 0 {
				t.Fatalf("column %s: %s outside [%s, %s]", cols[k.c].Name, types.FormatText(v, ty, nil), k.lo, k.hi)
			}
			seen[types.FormatText(v, ty, nil)] = true
		}
		if k.all > 0 && len(seen) != k.all {
			t.Errorf("column %s: %d distinct values, want all %d", cols[k.c].Name, len(seen), k.all)
		}
		if k.all == 0 && len(seen) < 1900 {
			t.Errorf("column %s: only %d distinct values in 2000 rows", cols[k.c].Name, len(seen))
		}
	}
}

func TestSequenceEnds(t *testing.T) {
	cols := []types.Column{col(t, "id", "integer"), col(t, "s", "text"), col(t, "n", "numeric(5,1)"), col(t, "f", "real")}
	cfg := mustConfig(t, cols, map[string]string{
		"fields.id.kind": "sequence", "fields.id.start": "5", "fields.id.end": "14",
		"fields.s.kind": "sequence", "fields.s.start": "-2", "fields.s.step": "3",
		"fields.n.kind": "sequence", "fields.n.start": "0.5", "fields.n.step": "0.25",
		"fields.f.kind": "sequence", "fields.f.start": "0.5", "fields.f.step": "0.5", "fields.f.end": "100",
	})
	if cfg.Limit() != 10 {
		t.Fatalf("Limit() = %d, want 10", cfg.Limit())
	}
	rows := drain(t, cfg, 100, 3)
	var got []string
	for _, r := range rows {
		got = append(got, types.FormatText(r[0], cols[0].Type, nil)+"|"+r[1].(string)+"|"+
			types.FormatText(r[2], cols[2].Type, nil)+"|"+types.FormatText(r[3], cols[3].Type, nil))
	}
	// numeric(5,1) rounds the step 0.25 to 0.3, as PostgreSQL's input does.
	want := []string{"5|-2|0.5|0.5", "6|1|0.8|1", "7|4|1.1|1.5", "8|7|1.4|2", "9|10|1.7|2.5",
		"10|13|2.0|3", "11|16|2.3|3.5", "12|19|2.6|4", "13|22|2.9|4.5", "14|25|3.2|5"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rows\n got %v\nwant %v", got, want)
	}
	// A smaller rows option wins; an empty tail is io.EOF at once.
	cfg = mustConfig(t, cols[:1], map[string]string{"rows": "3", "fields.id.kind": "sequence"})
	g := New(cfg)
	rec, err := g.Next(100)
	if err != nil || rec.NumRows() != 3 {
		t.Fatalf("Next = %v rows, %v; want 3 rows", rec, err)
	}
	if _, err := g.Next(100); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last row: %v, want io.EOF", err)
	}
	// A float end reached up to rounding still counts.
	cfg = mustConfig(t, []types.Column{col(t, "f", "double precision")}, map[string]string{
		"fields.f.kind": "sequence", "fields.f.start": "0.1", "fields.f.step": "0.1", "fields.f.end": "0.3"})
	if cfg.Limit() != 3 {
		t.Fatalf("0.1 to 0.3 by 0.1: Limit() = %d, want 3", cfg.Limit())
	}
	// char(n) sequences are blank-padded as char(n) input is.
	cfg = mustConfig(t, []types.Column{col(t, "c", "character(4)")}, map[string]string{
		"fields.c.kind": "sequence", "fields.c.start": "98", "fields.c.end": "1000"})
	if rows := drain(t, cfg, 2000, 64); len(rows) != 903 || rows[0][0] != "98  " || rows[902][0] != "1000" {
		t.Fatalf("char(4) sequence: %d rows, first %q, last %q", len(rows), rows[0][0], rows[len(rows)-1][0])
	}
	// A sequence to the type's maximum ends there instead of wrapping.
	cfg = mustConfig(t, []types.Column{col(t, "s", "smallint")}, map[string]string{"fields.s.kind": "sequence", "fields.s.start": "32760"})
	if rows := drain(t, cfg, 100, 4); len(rows) != 8 || rows[7][0] != int64(32767) {
		t.Fatalf("smallint sequence from 32760: %v", rows)
	}
}

func TestPicks(t *testing.T) {
	cols := []types.Column{col(t, "host", "text"), col(t, "n", "integer"), col(t, "b", "boolean"), col(t, "j", "json")}
	cfg := mustConfig(t, cols, map[string]string{
		"rows": "1000", "fields.host.values": "a, b,c", "fields.n.values": "7,-1",
		"fields.b.values": "true", "fields.j.values": `{"x":1}`,
	})
	rows := drain(t, cfg, 2000, 256)
	count := map[types.Value]int{}
	for _, r := range rows {
		count[r[0]]++
		count[r[1]]++
		if r[2] != true || r[3] != `{"x":1}` {
			t.Fatalf("row %v: picks outside the values", r)
		}
	}
	for _, v := range []types.Value{"a", "b", "c", int64(7), int64(-1)} {
		if count[v] < 250 {
			t.Errorf("value %v picked %d times in 1000 rows", v, count[v])
		}
	}
	if len(count) != 5 {
		t.Errorf("picked values %v, want only a, b, c, 7, -1", count)
	}
}

func TestTimestampsAdvanceByStep(t *testing.T) {
	cols := []types.Column{col(t, "ts", "timestamptz"), col(t, "late", "timestamp"), col(t, "d", "date"), col(t, "iv", "interval")}
	cfg := mustConfig(t, cols, map[string]string{
		"rows":             "300",
		"fields.ts.start":  "2024-03-01 12:00:00+02",
		"fields.ts.step":   "1.5 seconds",
		"fields.ts.end":    "2024-03-01 10:05:00+00",
		"fields.late.step": "1 minute", "fields.late.max_past": "10 seconds",
		"fields.d.step":  "2 days",
		"fields.iv.kind": "sequence", "fields.iv.start": "1 mon", "fields.iv.step": "1 day 1 hour",
	})
	if cfg.Limit() != 201 { // 300 s / 1.5 s + 1
		t.Fatalf("Limit() = %d, want 201", cfg.Limit())
	}
	rows := drain(t, cfg, 1000, 50)
	base := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC).UnixMicro()
	def := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	jittered := 0
	for i, r := range rows {
		if got, want := r[0], types.TimestampValue(base+int64(i)*1_500_000); got != want {
			t.Fatalf("row %d ts = %v, want %v", i, got, want)
		}
		clock := types.TimestampValue(def.UnixMicro() + int64(i)*60_000_000)
		late := r[1].(types.TimestampValue)
		if late > clock || late < clock-10_000_000 {
			t.Fatalf("row %d late = %v, want within 10 s before %v", i, late, clock)
		}
		if late != clock {
			jittered++
		}
		if got, want := r[2], types.DateValue(def.Unix()/86400+int64(2*i)); got != want {
			t.Fatalf("row %d d = %v, want %v", i, got, want)
		}
		if got, want := r[3], (types.IntervalValue{Months: 1, Days: int32(i), Micros: int64(i) * 3_600_000_000}); got != want {
			t.Fatalf("row %d iv = %v, want %v", i, got, want)
		}
	}
	if jittered < len(rows)*9/10 {
		t.Errorf("only %d of %d rows jittered", jittered, len(rows))
	}
	// Without a step, the clock follows rows_per_second.
	cfg = mustConfig(t, cols[:1], map[string]string{"rows_per_second": "1000"})
	if rows := drain(t, cfg, 2, 2); rows[1][0].(types.TimestampValue)-rows[0][0].(types.TimestampValue) != 1000 {
		t.Fatalf("rows_per_second 1000: step %v", rows)
	}
}

func TestRandomText(t *testing.T) {
	cols := []types.Column{col(t, "s", "text"), col(t, "v", "varchar(3)"), col(t, "c", "character(6)")}
	cfg := mustConfig(t, cols, map[string]string{"rows": "200", "fields.s.length": "17", "fields.c.length": "2"})
	for _, r := range drain(t, cfg, 1000, 64) {
		s, v, c := r[0].(string), r[1].(string), r[2].(string)
		if len(s) != 17 || len(v) != 3 || len(c) != 6 || strings.TrimRight(c, " ") != c[:2] {
			t.Fatalf("lengths of %q %q %q", s, v, c)
		}
		if strings.Trim(s+v+c[:2], alphabet) != "" {
			t.Fatalf("characters outside [A-Za-z0-9] in %q %q %q", s, v, c)
		}
	}
}

func TestNullRate(t *testing.T) {
	cols := []types.Column{col(t, "x", "integer"), col(t, "y", "boolean")}
	cfg := mustConfig(t, cols, map[string]string{"rows": "4000", "fields.x.null_rate": "0.25", "fields.y.null-rate": "1"})
	nulls := 0
	for _, r := range drain(t, cfg, 10000, 1000) {
		if r[0] == nil {
			nulls++
		}
		if r[1] != nil {
			t.Fatalf("null_rate 1 gave %v", r[1])
		}
	}
	if nulls < 850 || nulls > 1150 {
		t.Fatalf("%d NULLs in 4000 rows at rate 0.25", nulls)
	}
}

func TestWatermark(t *testing.T) {
	cols := []types.Column{col(t, "ts", "timestamptz"), col(t, "x", "integer"), col(t, "d", "date")}
	cfg := mustConfig(t, cols, map[string]string{"rows": "1000", "fields.ts.max_past": "3 seconds", "fields.ts.step": "1 second"})
	rows := drain(t, cfg, 2000, 1000)
	for _, at := range []int64{0, 1, 10, 500, 999} {
		w, ok := cfg.Watermark(0, at)
		if !ok {
			t.Fatal("no watermark for a timestamp sequence")
		}
		lowest := int64(rows[at][0].(types.TimestampValue))
		for _, r := range rows[at:] {
			lowest = min(lowest, int64(r[0].(types.TimestampValue)))
		}
		if w > lowest || w < lowest-3_000_000 {
			t.Fatalf("watermark at row %d = %d, lowest later value %d", at, w, lowest)
		}
	}
	if w, ok := cfg.Watermark(2, 5); !ok || types.DateValue(w) != rows[5][2] {
		t.Fatalf("date watermark at row 5 = %d, %v; want %v", w, ok, rows[5][2])
	}
	if _, ok := cfg.Watermark(1, 0); ok {
		t.Fatal("watermark for a random column")
	}
}

// TestRandomUUIDs: a random uuid column gives version 4 uuids (the
// version and variant bits set, as gen_random_uuid's), all different,
// the same ones for the same seed; picks read their values as uuids.
func TestRandomUUIDs(t *testing.T) {
	cols := []types.Column{col(t, "u", "uuid"), col(t, "p", "uuid")}
	opts := map[string]string{"rows": "2000", "seed": "7", "fields.p.values": "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"}
	rows := drain(t, mustConfig(t, cols, opts), 3000, 100)
	again := drain(t, mustConfig(t, cols, opts), 3000, 333)
	seen := map[string]bool{}
	for i, r := range rows {
		u := r[0].(string)
		if len(u) != 36 || u[14] != '4' || !strings.ContainsRune("89ab", rune(u[19])) {
			t.Fatalf("row %d: %s is not a version 4 uuid", i, u)
		}
		if seen[u] {
			t.Fatalf("row %d: %s twice", i, u)
		}
		seen[u] = true
		if again[i][0] != u {
			t.Fatalf("row %d: %s, then %v for the same seed", i, u, again[i][0])
		}
		if r[1] != "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11" {
			t.Fatalf("row %d: picked %v", i, r[1])
		}
	}
	if len(rows) != 2000 {
		t.Fatalf("%d rows", len(rows))
	}
}
