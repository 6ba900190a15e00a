package file

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/connector/internal/position"
	"github.com/streamsql/streamsql/pgerr"
)

// run is one reader's output: its batches with the position and the count
// of errors reported when each was emitted, every error, and the position
// after Run.
type run struct {
	batches []batchAt
	errs    []string
	end     []byte
}

type batchAt struct {
	rows []string
	pos  []byte
	errs int
}

// runFrom runs a reader of s from pos to its end, maxRows rows per batch
// (0: BatchRows).
func runFrom(t *testing.T, s *Source, pos []byte, maxRows int) run {
	t.Helper()
	var out run
	r := s.NewReader(ReaderOptions{Errors: func(err error) { out.errs = append(out.errs, err.Error()) }})
	r.maxRows = maxRows
	if err := r.Seek(pos); err != nil {
		t.Fatalf("Seek(%x): %v", pos, err)
	}
	err := r.Run(context.Background(), func(rec arrow.RecordBatch) error {
		b := batchAt{pos: r.Position(), errs: len(out.errs)}
		for i := range int(rec.NumRows()) {
			b.rows = append(b.rows, rowText(rec, s.cols, i))
		}
		out.batches = append(out.batches, b)
		return nil
	})
	if err != nil {
		t.Fatalf("Run from %x: %v", pos, err)
	}
	out.end = r.Position()
	return out
}

// csvData is n records of "i int, s text" with a header, blank lines, CRLF
// endings, quoted fields spanning lines and bad records among them, and no
// newline at the end.
func csvData(rng *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteString("i,s\n")
	for i := range n {
		switch rng.IntN(12) {
		case 0:
			fmt.Fprintf(&b, "x%d,bad int\n", i)
		case 1:
			fmt.Fprintf(&b, "%d,extra,field\n", i)
		case 2:
			b.WriteString("\n")
		case 3:
			fmt.Fprintf(&b, "%d,\"two\nlines, \"\"%d\"\"\"\r\n", i, i)
		case 4:
			fmt.Fprintf(&b, "%d,crlf\r\n", i)
		default:
			fmt.Fprintf(&b, "%d,%s\n", i, strings.Repeat("v", rng.IntN(30)))
		}
	}
	b.WriteString("-1,last")
	return b.String()
}

// jsonData is n JSON lines of "i int, s text", some blank or bad.
func jsonData(rng *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		switch rng.IntN(10) {
		case 0:
			fmt.Fprintf(&b, "{\"i\": %d, \"s\": \n", i) // malformed
		case 1:
			fmt.Fprintf(&b, "{\"i\": \"x%d\"}\n", i) // bad int
		case 2:
			b.WriteString("  \r\n")
		default:
			fmt.Fprintf(&b, "{\"s\": \"%s\", \"i\": %d}\r\n", strings.Repeat("j", rng.IntN(40)), i)
		}
	}
	return b.String()
}

// A reader resumed at the start or at any position a reader reported
// yields exactly the rows after it, reports exactly the bad records after
// it (with the same line numbers), and ends at the same position.
func TestResumeSplits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, tc := range []struct {
		name, file, data, spec string
		opts                   map[string]string
		maxRows                int
	}{
		{"csv", "t.csv", csvData(rng, 600), "i int, s text", map[string]string{"header": "true"}, 7},
		{"json", "t.json", jsonData(rng, 600), "i int, s text", nil, 5},
		// Bigger than a read: batches are cut inside buffers and at their ends.
		{"big csv", "big.csv", csvData(rng, 40000), "i int, s text", map[string]string{"header": "true"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := map[string]string{"path": writeFile(t, tc.file, tc.data)}
			for k, v := range tc.opts {
				opts[k] = v
			}
			s := mustOpen(t, cols(t, tc.spec), opts, "")
			start := s.NewReader(ReaderOptions{}).Position()
			full := runFrom(t, s, nil, tc.maxRows)
			var rows []string
			for _, b := range full.batches {
				rows = append(rows, b.rows...)
			}
			if len(full.batches) < 4 || len(full.errs) == 0 {
				t.Fatalf("%d batches, %d errors: too few to split", len(full.batches), len(full.errs))
			}
			positions, done, errs := [][]byte{start}, []int{0}, []int{0}
			for _, b := range full.batches {
				positions = append(positions, b.pos)
				done = append(done, done[len(done)-1]+len(b.rows))
				errs = append(errs, b.errs)
			}
			for i, pos := range positions {
				// The big file: a sample of the split points.
				if len(positions) > 40 && i%7 != 0 && i != len(positions)-1 {
					continue
				}
				got := runFrom(t, s, pos, tc.maxRows+i%3)
				var rest []string
				for _, b := range got.batches {
					rest = append(rest, b.rows...)
				}
				if !reflect.DeepEqual(rest, rows[done[i]:]) && len(rest)+len(rows[done[i]:]) > 0 {
					t.Fatalf("after batch %d: %d rows, want the %d after it", i, len(rest), len(rows)-done[i])
				}
				if e := append(append([]string(nil), full.errs[:errs[i]]...), got.errs...); !reflect.DeepEqual(e, full.errs) {
					t.Fatalf("after batch %d: errors before and after the split\n%q\nwant\n%q", i, e, full.errs)
				}
				if !reflect.DeepEqual(got.end, full.end) {
					t.Fatalf("after batch %d: ends at %x, want %x", i, got.end, full.end)
				}
			}
		})
	}
}

// A followed file resumed at a position reads what was appended after it,
// with the csv header not skipped again.
func TestFollowResume(t *testing.T) {
	path := writeFile(t, "f.csv", "i\n1\n2\n")
	s := mustOpen(t, cols(t, "i int"), map[string]string{"path": path, "follow": "true", "header": "true"}, "")
	a := followAt(t, s, nil)
	a.expect("1", "2")
	a.caughtUp()
	var pos []byte
	for len(a.pos) > 0 {
		pos = <-a.pos
	}
	a.cancel()
	if err := a.end(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v", err)
	}

	appendFile(t, path, "3\n4") // while no reader runs; 4 is unfinished
	b := followAt(t, s, pos)
	b.expect("3")
	b.caughtUp()
	appendFile(t, path, "\n5\n")
	b.expect("4", "5")
	b.caughtUp()
	for len(b.pos) > 0 {
		pos = <-b.pos
	}

	// Resumed at the end, it waits for more.
	c := followAt(t, s, pos)
	c.caughtUp()
	appendFile(t, path, "6\n")
	c.expect("6")
}

// A file shorter than the position it is resumed at was truncated or
// replaced: Run reads it from its start, followed or not, and reports it
// (it used to fail with 55000 for good).
func TestResumeShorterFile(t *testing.T) {
	path := writeFile(t, "s.csv", "1\n2\n3\n")
	for _, follow := range []string{"false", "true"} {
		s := mustOpen(t, cols(t, "i int"), map[string]string{"path": path, "follow": follow}, "")
		pos := position.Encode(position.FileV1, 6, 3, 0)
		if err := os.WriteFile(path, []byte("1\n2\n3\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, 4); err != nil {
			t.Fatal(err)
		}
		var events []error
		r := s.NewReader(ReaderOptions{Errors: func(err error) { events = append(events, err) }})
		if err := r.Seek(pos); err != nil {
			t.Fatal(err)
		}
		var rows []string
		ctx, cancel := context.WithCancel(context.Background())
		err := r.Run(ctx, func(rec arrow.RecordBatch) error {
			for i := range int(rec.NumRows()) {
				rows = append(rows, rowText(rec, s.cols, i))
			}
			if len(rows) == 2 {
				cancel()
			}
			return nil
		})
		cancel()
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("follow=%s: %v", follow, err)
		}
		if strings.Join(rows, ",") != "1,2" || len(events) != 1 || r.Rewinds() != 1 ||
			!strings.Contains(events[0].Error(), "has 4 bytes, fewer than the 6 already read before the restart") {
			t.Fatalf("follow=%s: rows %q, events %v", follow, rows, events)
		}
		if want := position.Encode(position.FileV1, 4, 2, 0); !reflect.DeepEqual(r.Position(), want) {
			t.Fatalf("follow=%s: position %x", follow, r.Position())
		}
	}
}

func TestSeekErrors(t *testing.T) {
	s := mustOpen(t, cols(t, "i int"), map[string]string{"path": writeFile(t, "e.csv", "1\n")}, "")
	for _, pos := range [][]byte{
		{},
		position.Encode(position.DatagenV1, 1),
		position.Encode(position.FileV1, 1, 1), // too few values
		position.Encode(position.FileV1, 1, 1, 2), // unknown flag
		position.Encode(position.FileV1, 1<<63, 1, 0),
	} {
		wantCode(t, s.NewReader(ReaderOptions{}).Seek(pos), pgerr.DataCorrupted)
	}
}

// A run canceled with rows read but not yet emitted keeps the position of
// the last batch emitted.
func TestPositionAfterCancel(t *testing.T) {
	s := mustOpen(t, cols(t, "i int"), map[string]string{"path": writeFile(t, "c.csv", "1\n2\n3\n4\n5\n6\n7\n")}, "")
	r := s.NewReader(ReaderOptions{})
	r.maxRows = 3
	ctx, cancel := context.WithCancel(context.Background())
	var last []byte
	err := r.Run(ctx, func(rec arrow.RecordBatch) error {
		last = r.Position()
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	if want := position.Encode(position.FileV1, 6, 3, 0); !reflect.DeepEqual(last, want) || !reflect.DeepEqual(r.Position(), want) {
		t.Fatalf("position in emit %x, after the run %x, want %x", last, r.Position(), want)
	}
}
