package checkpoint

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// TestFilesCopiedElsewhere: the files Files lists for a checkpoint of an
// incremental chain (its manifest, then the chain's segments, each with
// the epoch that wrote it), copied into another directory, load there
// with LoadEpoch to the same state; a missing segment fails the load;
// SetOp adds an operator's state.
func TestFilesCopiedElsewhere(t *testing.T) {
	old, oldChain := minDeltaBytes, maxChain
	minDeltaBytes, maxChain = 1<<30, 64 // never full after the first
	defer func() { minDeltaBytes, maxChain = old, oldChain }()
	dir := t.TempDir()
	s, _, err := Open(dir, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(7))
	m := model{}
	var man Manifest
	for epoch := uint64(10); epoch <= 14; epoch++ {
		man = writeRandom(t, s, epoch, m, rng)
	}
	if len(man.Segments) != 5 {
		t.Fatalf("chain of %d segments, want 5", len(man.Segments))
	}
	files, err := Files(dir, 14)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 6 || !files[0].Manifest || files[0].Name != ManifestFile(14) || files[0].Epoch != 14 {
		t.Fatalf("files %+v", files)
	}
	for i, f := range files[1:] {
		if f.Manifest || f.Name != man.Segments[i].Name || f.Epoch != uint64(10+i) {
			t.Fatalf("file %d: %+v, want segment %s of epoch %d", i+1, f, man.Segments[i].Name, 10+i)
		}
	}
	other := t.TempDir()
	for _, f := range files {
		b, err := ReadFile(dir, f.Name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(other, f.Name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cp, err := LoadEpoch(other, 14)
	if err != nil {
		t.Fatal(err)
	}
	checkEqual(t, cp, m)
	cp.SetOp("z", map[string][]byte{"k": []byte("v")})
	if v, ok := cp.Op("z").Get([]byte("k")); !ok || string(v) != "v" || cp.Op("z").Bytes() != 2 {
		t.Fatalf("SetOp: %q %v", v, ok)
	}
	os.Remove(filepath.Join(other, files[2].Name))
	if _, err := LoadEpoch(other, 14); err == nil {
		t.Fatal("a chain with a missing segment loaded")
	}
	if _, err := Files(dir, 99); err == nil {
		t.Fatal("Files of a checkpoint that does not exist")
	}
}
