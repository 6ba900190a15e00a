package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Manifest describes one committed checkpoint.
type Manifest struct {
	// Epoch is the checkpoint barrier's epoch.
	Epoch uint64 `json:"epoch"`
	// Time is when the checkpoint was committed.
	Time time.Time `json:"time"`
	// Duration is how long writing it took, from Begin to the manifest's
	// rename.
	Duration time.Duration `json:"duration"`
	// Segments is the chain whose records, oldest first, make up the state;
	// the last one is this checkpoint's own.
	Segments []Segment `json:"segments"`
	// Meta is the runtime's own record (source positions, jobs).
	Meta json.RawMessage `json:"meta,omitempty"`
}

// Segment names one segment file of a chain and its size.
type Segment struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// Bytes is the size of this checkpoint's own segment (what it wrote).
func (m *Manifest) Bytes() int64 {
	if len(m.Segments) == 0 {
		return 0
	}
	return m.Segments[len(m.Segments)-1].Size
}

// ChainBytes is the size of every segment of the chain: what recovery reads.
func (m *Manifest) ChainBytes() int64 {
	var n int64
	for _, s := range m.Segments {
		n += s.Size
	}
	return n
}

// Full reports whether the checkpoint is a full one (a chain of one).
func (m *Manifest) Full() bool { return len(m.Segments) == 1 }

const (
	manifestPrefix = "MANIFEST-"
	segmentPrefix  = "seg-"
	segmentSuffix  = ".dat"
	tmpSuffix      = ".tmp"
)

func manifestName(epoch uint64) string { return fmt.Sprintf("%s%020d", manifestPrefix, epoch) }
func segmentName(epoch uint64) string {
	return fmt.Sprintf("%s%020d%s", segmentPrefix, epoch, segmentSuffix)
}

// manifestEpoch parses a manifest file name.
func manifestEpoch(name string) (uint64, bool) {
	if !strings.HasPrefix(name, manifestPrefix) {
		return 0, false
	}
	e, err := strconv.ParseUint(strings.TrimPrefix(name, manifestPrefix), 10, 64)
	return e, err == nil
}

// encodeManifest renders m as its JSON followed by a line with the JSON's
// CRC-32C in hex.
func encodeManifest(m *Manifest) ([]byte, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: encode manifest: %w", err)
	}
	out := append(body, '\n')
	out = append(out, fmt.Sprintf("%08x\n", crc32.Checksum(body, castagnoli))...)
	return out, nil
}

// decodeManifest checks and parses a manifest file's content.
func decodeManifest(b []byte) (*Manifest, error) {
	b = bytes.TrimSuffix(b, []byte("\n"))
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 {
		return nil, fmt.Errorf("%w: manifest without CRC line", errCorrupt)
	}
	body, sumText := b[:i], string(b[i+1:])
	sum, err := strconv.ParseUint(sumText, 16, 32)
	if err != nil || len(sumText) != 8 {
		return nil, fmt.Errorf("%w: manifest CRC line %q", errCorrupt, sumText)
	}
	if crc32.Checksum(body, castagnoli) != uint32(sum) {
		return nil, fmt.Errorf("%w: manifest CRC mismatch", errCorrupt)
	}
	m := new(Manifest)
	if err := json.Unmarshal(body, m); err != nil {
		return nil, fmt.Errorf("%w: manifest: %v", errCorrupt, err)
	}
	if len(m.Segments) == 0 {
		return nil, fmt.Errorf("%w: manifest names no segment", errCorrupt)
	}
	return m, nil
}

// writeFileSync writes data to dir/name atomically: a temporary file,
// fsynced, renamed into place, then the directory fsynced.
func writeFileSync(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+tmpSuffix)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

// syncDir fsyncs a directory so that renames and creations in it are
// durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
