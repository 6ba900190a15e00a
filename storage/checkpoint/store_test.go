package checkpoint

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// model is what the operators' states should be: op -> key -> value.
type model map[string]map[string]string

func (m model) clone() model {
	c := model{}
	for op, kv := range m {
		c[op] = map[string]string{}
		for k, v := range kv {
			c[op][k] = v
		}
	}
	return c
}

// checkEqual compares a recovered checkpoint with the model.
func checkEqual(t *testing.T, cp *Checkpoint, want model) {
	t.Helper()
	for op, kv := range want {
		st := cp.Op(op)
		if st.Len() != len(kv) {
			t.Fatalf("op %s: %d keys, want %d", op, st.Len(), len(kv))
		}
		for k, v := range kv {
			got, ok := st.Get([]byte(k))
			if !ok || string(got) != v {
				t.Fatalf("op %s key %q: got %q %v, want %q", op, k, got, ok, v)
			}
		}
	}
	for _, op := range cp.Ops() {
		if len(want[op]) == 0 {
			t.Fatalf("op %s has state, want none", op)
		}
	}
}

// writeRandom writes one checkpoint of random changes to m (the whole
// state when the writer is full) and commits it.
func writeRandom(t *testing.T, s *Store, epoch uint64, m model, rng *rand.Rand) Manifest {
	t.Helper()
	w, err := s.Begin(epoch)
	if err != nil {
		t.Fatal(err)
	}
	ops := []string{"a", "b/1", "c"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	changes := make([]func(), len(ops))
	for i, op := range ops {
		seed := rng.Int63()
		full := w.Full()
		wg.Add(1)
		go func() { // operators snapshot concurrently
			defer wg.Done()
			r := rand.New(rand.NewSource(seed))
			o := w.Op(op)
			mu.Lock()
			kv := map[string]string{}
			for k, v := range m[op] {
				kv[k] = v
			}
			mu.Unlock()
			if r.Intn(10) == 0 {
				o.Reset()
				kv = map[string]string{}
			} else if full {
				o.Reset()
				for k, v := range kv {
					o.Put([]byte(k), []byte(v))
				}
			}
			for j := r.Intn(200); j > 0; j-- {
				k := fmt.Sprintf("k%d", r.Intn(300))
				if r.Intn(3) == 0 {
					o.Delete([]byte(k))
					delete(kv, k)
				} else {
					v := strings.Repeat("v", r.Intn(50)) + fmt.Sprint(epoch)
					o.Put([]byte(k), []byte(v))
					kv[k] = v
				}
			}
			if err := o.Close(); err != nil {
				t.Error(err)
			}
			changes[i] = func() { m[op] = kv }
		}()
	}
	wg.Wait()
	for _, f := range changes {
		f()
	}
	man, err := w.Commit([]byte(fmt.Sprintf(`{"e":%d}`, epoch)))
	if err != nil {
		t.Fatal(err)
	}
	return man
}

func TestIncrementalChainsRecover(t *testing.T) {
	old, oldChain := minDeltaBytes, maxChain
	minDeltaBytes, maxChain = 1<<10, 8
	defer func() { minDeltaBytes, maxChain = old, oldChain }()
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(1))
	s, cp, err := Open(dir, t.Logf)
	if err != nil || cp != nil {
		t.Fatalf("fresh open: %v %v", cp, err)
	}
	m := model{}
	fulls := 0
	for epoch := uint64(1); epoch <= 60; epoch++ {
		man := writeRandom(t, s, epoch*3, m, rng)
		if man.Full() {
			fulls++
		}
		if len(man.Segments) > maxChain {
			t.Fatalf("chain of %d segments", len(man.Segments))
		}
		if epoch%7 == 0 {
			s2, cp, err := Open(dir, t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			if cp.Manifest.Epoch != epoch*3 || string(cp.Manifest.Meta) != fmt.Sprintf(`{"e":%d}`, epoch*3) {
				t.Fatalf("recovered epoch %d meta %s", cp.Manifest.Epoch, cp.Manifest.Meta)
			}
			checkEqual(t, cp, m)
			s = s2
		}
	}
	if fulls < 2 || fulls > 40 {
		t.Errorf("%d full checkpoints of 60", fulls)
	}
	// Only the last two checkpoints' files remain.
	entries, _ := os.ReadDir(dir)
	manifests := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), manifestPrefix) {
			manifests++
		}
	}
	if manifests != 2 {
		t.Errorf("%d manifests left, want 2", manifests)
	}
}

// TestCorruptionFallsBack damages the newest checkpoint in each way a crash
// or a bad disk can and checks that recovery returns the previous one.
func TestCorruptionFallsBack(t *testing.T) {
	damages := map[string]func(t *testing.T, dir string, m Manifest){
		"flipped segment byte": func(t *testing.T, dir string, m Manifest) {
			p := filepath.Join(dir, m.Segments[len(m.Segments)-1].Name)
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 0x40
			os.WriteFile(p, b, 0o644)
		},
		"truncated segment": func(t *testing.T, dir string, m Manifest) {
			p := filepath.Join(dir, m.Segments[len(m.Segments)-1].Name)
			st, _ := os.Stat(p)
			os.Truncate(p, st.Size()-3)
		},
		"missing segment": func(t *testing.T, dir string, m Manifest) {
			os.Remove(filepath.Join(dir, m.Segments[len(m.Segments)-1].Name))
		},
		"torn manifest": func(t *testing.T, dir string, m Manifest) {
			p := filepath.Join(dir, manifestName(m.Epoch))
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/2], 0o644)
		},
		"manifest bit flip": func(t *testing.T, dir string, m Manifest) {
			p := filepath.Join(dir, manifestName(m.Epoch))
			b, _ := os.ReadFile(p)
			b[5] ^= 1
			os.WriteFile(p, b, 0o644)
		},
	}
	for name, damage := range damages {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			rng := rand.New(rand.NewSource(2))
			s, _, _ := Open(dir, nil)
			m := model{}
			var before model
			var last Manifest
			for e := uint64(1); e <= 5; e++ {
				before = m.clone()
				last = writeRandom(t, s, e, m, rng)
			}
			damage(t, dir, last)
			var logs bytes.Buffer
			s2, cp, err := Open(dir, func(f string, a ...any) { fmt.Fprintf(&logs, f+"\n", a...) })
			if err != nil {
				t.Fatal(err)
			}
			if cp == nil || cp.Manifest.Epoch != 4 {
				t.Fatalf("recovered %v, want epoch 4", cp)
			}
			checkEqual(t, cp, before)
			if !strings.Contains(logs.String(), "skipping checkpoint 5") {
				t.Errorf("no log line for the damaged checkpoint: %q", logs.String())
			}
			// The store goes on from the recovered checkpoint.
			writeRandom(t, s2, 5, before, rng)
			_, cp, err = Open(dir, nil)
			if err != nil || cp.Manifest.Epoch != 5 {
				t.Fatalf("after going on: %v %v", cp, err)
			}
			checkEqual(t, cp, before)
		})
	}
}

func TestUnfinishedCheckpointIsIgnored(t *testing.T) {
	dir := t.TempDir()
	s, _, _ := Open(dir, nil)
	m := model{}
	rng := rand.New(rand.NewSource(3))
	writeRandom(t, s, 1, m, rng)
	w, err := s.Begin(2)
	if err != nil {
		t.Fatal(err)
	}
	o := w.Op("a")
	o.Put([]byte("x"), []byte("never committed"))
	o.Close()
	// A crash before Commit: the segment exists, the manifest does not.
	os.WriteFile(filepath.Join(dir, manifestName(2)+tmpSuffix), []byte("partial"), 0o644)
	_, cp, err := Open(dir, nil)
	if err != nil || cp.Manifest.Epoch != 1 {
		t.Fatalf("recovered %v %v", cp, err)
	}
	checkEqual(t, cp, m)
	if _, err := os.Stat(filepath.Join(dir, segmentName(2))); !os.IsNotExist(err) {
		t.Errorf("unfinished segment left behind: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, manifestName(2)+tmpSuffix)); !os.IsNotExist(err) {
		t.Errorf("temporary manifest left behind: %v", err)
	}
}

// TestFailedCommitKeepsLast makes the segment's writes fail (as on a full
// disk): Commit reports it, the last checkpoint stays, and the next
// checkpoint works once writes succeed again.
func TestFailedCommitKeepsLast(t *testing.T) {
	dir := t.TempDir()
	s, _, _ := Open(dir, nil)
	m := model{}
	rng := rand.New(rand.NewSource(4))
	writeRandom(t, s, 1, m, rng)
	w, err := s.Begin(2)
	if err != nil {
		t.Fatal(err)
	}
	w.f.Close() // every write now fails
	o := w.Op("a")
	o.Put(bytes.Repeat([]byte("k"), 10), bytes.Repeat([]byte("v"), frameTarget))
	if err := o.Close(); err == nil {
		t.Fatal("write to a closed segment succeeded")
	}
	if _, err := w.Commit(nil); err == nil || !strings.Contains(err.Error(), "checkpoint 2") {
		t.Fatalf("commit error = %v", err)
	}
	if s.Last().Epoch != 1 {
		t.Fatalf("last = %d", s.Last().Epoch)
	}
	w, err = s.Begin(3)
	if err != nil {
		t.Fatal(err)
	}
	if !w.Full() {
		t.Error("the checkpoint after a failed one is not full")
	}
	w.Abort()
	writeRandom(t, s, 3, m, rng)
	_, cp, err := Open(dir, nil)
	if err != nil || cp.Manifest.Epoch != 3 {
		t.Fatalf("recovered %v %v", cp, err)
	}
	checkEqual(t, cp, m)
	if _, err := s.Begin(3); err == nil {
		t.Error("Begin accepted an epoch that is not after the last")
	}
}

func TestLargeRecordsSpanFrames(t *testing.T) {
	dir := t.TempDir()
	s, _, _ := Open(dir, nil)
	w, _ := s.Begin(1)
	o := w.Op("big")
	want := map[string][]byte{}
	for i := 0; i < 5; i++ {
		v := bytes.Repeat([]byte{byte('a' + i)}, frameTarget*3/2-i) // a frame of its own (putLarge)
		if i == 2 {
			v = v[:frameTarget]
		}
		k := fmt.Sprintf("k%d", i)
		o.Put([]byte(k), v)
		want[k] = v
		small := fmt.Sprintf("s%d", i) // small records between them keep their order
		o.Put([]byte(small), []byte(small))
		want[small] = []byte(small)
		o.Delete([]byte(fmt.Sprintf("s%d", i-1)))
		delete(want, fmt.Sprintf("s%d", i-1))
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(nil); err != nil {
		t.Fatal(err)
	}
	_, cp, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		if got, _ := cp.Op("big").Get([]byte(k)); !bytes.Equal(got, v) {
			t.Fatalf("key %s: %d bytes", k, len(got))
		}
	}
	if _, ok := cp.Op("big").Get([]byte("s3")); ok {
		t.Error("s3 was deleted after it was written")
	}
}

func BenchmarkCheckpointWrite(b *testing.B) {
	dir := b.TempDir()
	s, _, _ := Open(dir, nil)
	key := make([]byte, 16)
	val := make([]byte, 48)
	const n = 100000
	b.SetBytes(n * 64)
	for i := 0; i < b.N; i++ {
		w, err := s.Begin(uint64(i + 1))
		if err != nil {
			b.Fatal(err)
		}
		o := w.Op("agg")
		for j := 0; j < n; j++ {
			key[0], key[1], key[2] = byte(j), byte(j>>8), byte(j>>16)
			o.Put(key, val)
		}
		o.Close()
		if _, err := w.Commit(nil); err != nil {
			b.Fatal(err)
		}
	}
}
