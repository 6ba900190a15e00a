package nexmark

import (
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestStrColGrow writes far more than the estimate (both buffers grow) and
// checks every value of the resulting Arrow array.
func TestStrColGrow(t *testing.T) {
	c := newStrCol(1, 1, 2)
	var want []string
	for i := 0; i < 500; i++ {
		s := strings.Repeat("x", i%7)
		c.writeString(s)
		c.writeByte('-')
		c.writeInt(int64(-i))
		c.write([]byte("!"))
		c.end()
		want = append(want, s+"-"+strconv.Itoa(-i)+"!")
	}
	a := c.array(false).(*array.String)
	if a.Len() != len(want) {
		t.Fatalf("%d values, want %d", a.Len(), len(want))
	}
	for i, w := range want {
		if a.Value(i) != w {
			t.Fatalf("value %d = %q, want %q", i, a.Value(i), w)
		}
	}
}
