package expr

import (
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// TestToCharTimestampKernel checks the batch to_char(timestamp, text)
// against formatting each row on its own: runs of rows within one second
// (reused text), second and day boundaries, negative timestamps,
// infinities, formats with and without fractions of a second, and the
// format changing between rows.
func TestToCharTimestampKernel(t *testing.T) {
	formats := []string{"YYYY-MM-DD", "HH:mm", "HH24:MI:SS.MS", "SS.US", "FF3 Dy J", "YYYY-MM-DD HH24:MI:SS"}
	r := rand.New(rand.NewSource(7))
	tb := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond})
	fb := array.NewStringBuilder(memory.DefaultAllocator)
	var want []types.Value
	ts := int64(1_700_000_000_000_000) - 3*usPerSec
	f := formats[0]
	for i := 0; i < 5000; i++ {
		switch r.Intn(50) {
		case 0:
			f = formats[r.Intn(len(formats))]
		case 1:
			ts = -ts
		case 2:
			ts += 86_400 * usPerSec
		}
		ts += int64(r.Intn(300_000)) // several rows a second
		v := ts
		if r.Intn(200) == 0 {
			v = int64(types.TimestampInfinity)
		}
		tb.Append(arrow.Timestamp(v))
		fb.Append(f)
		w, err := toCharTimestampRow(nil, []types.Value{types.TimestampValue(v), f})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, w)
	}
	ta, fa := tb.NewArray(), fb.NewArray()
	defer ta.Release()
	defer fa.Release()
	got, err := toCharTimestampKernel(testCtx(), []arrow.Array{ta, fa}, ta.Len())
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	s := got.(*array.String)
	for i, w := range want {
		switch {
		case w == nil && s.IsValid(i):
			t.Fatalf("row %d: %q, want NULL", i, s.Value(i))
		case w != nil && (s.IsNull(i) || s.Value(i) != w.(string)):
			t.Fatalf("row %d (%s): %q, want %q", i, fa.(*array.String).Value(i), s.Value(i), w)
		}
	}
}
