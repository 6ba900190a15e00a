package file

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/connector/internal/position"
	"github.com/streamsql/streamsql/pgerr"
)

// follower runs a reader of s on its own goroutine, passing its rows and
// idle moments (a look at the end of the file that found nothing) to the
// test. Timeouts only turn a hang into a failure.
type follower struct {
	t      *testing.T
	rows   chan string
	pos    chan []byte // the reader's position after each batch
	events chan error  // files truncated or replaced (01000 reports)
	idle   chan struct{}
	done   chan error
	cancel context.CancelFunc
}

func follow(t *testing.T, s *Source) *follower { return followAt(t, s, nil) }

// followAt is follow with the reader resumed at pos.
func followAt(t *testing.T, s *Source, pos []byte) *follower {
	f := &follower{t: t, rows: make(chan string, 1000), pos: make(chan []byte, 1000), events: make(chan error, 10), idle: make(chan struct{}, 1), done: make(chan error, 1)}
	r := s.NewReader(ReaderOptions{Errors: func(err error) {
		if pgerr.CodeOf(err) == pgerr.Warning {
			f.events <- err
			return
		}
		t.Errorf("skipped: %v", err)
	}})
	if err := r.Seek(pos); err != nil {
		t.Fatal(err)
	}
	r.idle = func() {
		select {
		case f.idle <- struct{}{}:
		default:
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	go func() {
		f.done <- r.Run(ctx, func(rec arrow.RecordBatch) error {
			for i := range int(rec.NumRows()) {
				f.rows <- rowText(rec, s.cols, i)
			}
			f.pos <- r.Position()
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-f.done
	})
	return f
}

const hang = 10 * time.Second

func (f *follower) expect(want ...string) {
	f.t.Helper()
	for _, w := range want {
		select {
		case got := <-f.rows:
			if got != w {
				f.t.Fatalf("row %q, want %q", got, w)
			}
		case err := <-f.done:
			f.t.Fatalf("Run ended (%v) waiting for row %q", err, w)
		case <-time.After(hang):
			f.t.Fatalf("no row %q", w)
		}
	}
}

// caughtUp returns once the reader has looked at the file's end after the
// call: the second idle signal from now follows a read that started after.
func (f *follower) caughtUp() {
	f.t.Helper()
	select {
	case <-f.idle:
	default:
	}
	for range 2 {
		select {
		case <-f.idle:
		case <-time.After(hang):
			f.t.Fatal("the reader never went idle")
		}
	}
	select {
	case got := <-f.rows:
		f.t.Fatalf("unexpected row %q", got)
	default:
	}
}

func (f *follower) end() error {
	f.t.Helper()
	select {
	case err := <-f.done:
		f.done <- err // for the cleanup
		return err
	case <-time.After(hang):
		f.t.Fatal("Run did not end")
	}
	return nil
}

func TestFollowAppends(t *testing.T) {
	path := writeFile(t, "f.csv", "1,a\n2,b\n")
	s := mustOpen(t, cols(t, "i int, s text"), map[string]string{"path": path, "follow": "true"}, "")
	f := follow(t, s)
	f.expect("1|a", "2|b")
	appendFile(t, path, "3,c\n")
	f.expect("3|c")

	// A partial last line waits for its newline.
	appendFile(t, path, "4,d")
	f.caughtUp()
	appendFile(t, path, "d\n5,e\n")
	f.expect("4|dd", "5|e")

	// So does a record whose quoted field holds a newline.
	appendFile(t, path, "6,\"x\n")
	f.caughtUp()
	appendFile(t, path, "y\"\r\n7,z\n")
	f.expect("6|x\ny", "7|z")

	f.cancel()
	if err := f.end(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v", err)
	}
}

func TestFollowJSONAndLateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "later.json")
	s := mustOpen(t, cols(t, "i int"), map[string]string{"path": path, "follow": "true"}, "")
	f := follow(t, s)
	if err := os.WriteFile(path, []byte(`{"i": 1}`+"\n"+`{"i": 2`), 0o644); err != nil {
		t.Fatal(err)
	}
	f.expect("1")
	f.caughtUp()
	appendFile(t, path, "}\n")
	f.expect("2")
}

// event waits for the report of a truncated or replaced file.
func (f *follower) event(want string) {
	f.t.Helper()
	select {
	case err := <-f.events:
		if !strings.Contains(err.Error(), want) {
			f.t.Fatalf("event %q, want %q", err, want)
		}
	case err := <-f.done:
		f.t.Fatalf("Run ended (%v) waiting for the event %q", err, want)
	case <-time.After(hang):
		f.t.Fatalf("no event %q", want)
	}
}

// A followed file truncated in place (logrotate's copytruncate, `: > f`)
// is read again from its start, its header skipped again, and the event
// reported; it used to stop the source for good (55000 "shrank").
func TestFollowTruncated(t *testing.T) {
	path := writeFile(t, "t.csv", "i\n1\n2\n")
	s := mustOpen(t, cols(t, "i int"), map[string]string{"path": path, "follow": "true", "header": "true"}, "")
	f := follow(t, s)
	f.expect("1", "2")
	<-f.pos
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	f.event("was truncated from 6 to 0 bytes while followed: reading it again from its start")
	appendFile(t, path, "i\n3\n")
	f.expect("3")
	if got, want := <-f.pos, position.Encode(position.FileV1, 4, 2, 0); !reflect.DeepEqual(got, want) {
		t.Fatalf("position after the rewind %x, want %x", got, want)
	}
	appendFile(t, path, "4\n")
	f.expect("4")
}

// A followed file rotated by rename and create is left for the new file at
// its path, read from its start; the old one is no longer read.
func TestFollowReplaced(t *testing.T) {
	path := writeFile(t, "r.jsonl", `{"i": 1}`+"\n")
	s := mustOpen(t, cols(t, "i int"), map[string]string{"path": path, "follow": "true"}, "")
	f := follow(t, s)
	f.expect("1")
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	f.caughtUp() // renamed away, nothing at the path yet: still following
	if err := os.WriteFile(path, []byte(`{"i": 2}`+"\n"+`{"i": 3}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.event("was replaced by another file while followed")
	f.expect("2", "3")
	appendFile(t, path+".1", `{"i": 99}`+"\n")
	appendFile(t, path, `{"i": 4}`+"\n")
	f.expect("4")
	f.caughtUp()
}
