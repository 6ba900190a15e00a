package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
)

// Files of a committed checkpoint, for copying it elsewhere (a cluster
// coordinator uploads its part of each checkpoint to the object store,
// docs/contributing/cluster.md "Checkpoints on a cluster") and reading
// it back from a directory the copies were written to.

// File is one file of a checkpoint: its manifest or a segment of its
// chain.
type File struct {
	Name string
	// Epoch is the checkpoint that wrote it (a chain names segments of
	// earlier checkpoints).
	Epoch    uint64
	Manifest bool
}

// ManifestFile is the name of epoch's manifest file.
func ManifestFile(epoch uint64) string { return manifestName(epoch) }

// Files lists the files of checkpoint epoch in dir (its manifest first,
// then its chain's segments, oldest first), reading its manifest. The
// segments stay on disk only while the checkpoint is one of the store's
// last two: read them soon.
func Files(dir string, epoch uint64) ([]File, error) {
	m, err := readManifest(dir, epoch)
	if err != nil {
		return nil, err
	}
	out := []File{{Name: manifestName(epoch), Epoch: epoch, Manifest: true}}
	for _, seg := range m.Segments {
		var e uint64
		if _, err := fmt.Sscanf(seg.Name, segmentPrefix+"%d"+segmentSuffix, &e); err != nil {
			return nil, fmt.Errorf("%w: segment name %s", errCorrupt, seg.Name)
		}
		out = append(out, File{Name: seg.Name, Epoch: e})
	}
	return out, nil
}

// ReadManifest reads the manifest of checkpoint epoch in dir.
func ReadManifest(dir string, epoch uint64) (*Manifest, error) { return readManifest(dir, epoch) }

// ReadFile reads one file of a checkpoint in dir.
func ReadFile(dir, name string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(dir, filepath.Base(name)))
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return b, nil
}

// LoadEpoch reads checkpoint epoch from dir (its manifest and chain, each
// segment verified), without opening the directory as a Store.
func LoadEpoch(dir string, epoch uint64) (*Checkpoint, error) {
	m, err := readManifest(dir, epoch)
	if err != nil {
		return nil, err
	}
	return load(dir, m)
}

// SetOp replaces operator id's state by kv (the keys and values are not
// copied): a cluster restore adds the state of an operator instance that
// another node checkpointed. Not safe while the checkpoint is read.
func (c *Checkpoint) SetOp(id string, kv map[string][]byte) {
	if c.ops == nil {
		c.ops = map[string]*State{}
	}
	c.ops[id] = NewState(kv)
}

// NewState is a State holding kv (not copied).
func NewState(kv map[string][]byte) *State {
	var n int64
	for k, v := range kv {
		n += int64(len(k) + len(v))
	}
	return &State{kv: kv, bytes: n}
}
