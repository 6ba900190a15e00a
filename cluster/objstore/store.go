// Package objstore keeps a cluster's checkpoints in an S3-compatible
// object store: each node uploads its operators' state for an epoch as
// objects, the coordinator writes the epoch's manifest and then moves the
// committed pointer in etcd with a fenced transaction (cluster.Fence).
// A checkpoint exists exactly when the pointer names its manifest; objects
// of epochs that never committed are garbage that Collect removes.
//
// Layout under s3://bucket/prefix (docs/contributing/cluster.md):
//
//	epochs/<epoch:020d>/nodes/<node>-<incarnation>/<op>.<lo>-<hi>   one operator's state for vnodes lo..hi
//	epochs/<epoch:020d>/MANIFEST                                   JSON, then a line with its CRC-32C
//
// # Concurrency
//
// A Store is safe for concurrent use: nodes upload concurrently, and the
// coordinator commits and collects.
package objstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/failpoint"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is wrapped by errors about a manifest or object whose bytes
// are not what was committed (missing, wrong size, CRC mismatch).
var ErrCorrupt = errors.New("objstore: checkpoint damaged")

// Store is a checkpoint store in one bucket under one prefix.
type Store struct {
	cli    *s3.Client
	bucket string
	prefix string // "" or ending in "/"
	// Logf logs recovery fallbacks (nil: none).
	Logf func(format string, args ...any)

	mu sync.Mutex
	// written are the last manifests this store committed (by key), which
	// Collect reads from memory instead of the store: a commit's garbage
	// collection needs the new manifest and the one before, both written
	// here on a steady coordinator.
	written [2]writtenManifest
}

// writtenManifest is a manifest Commit wrote.
type writtenManifest struct {
	key string
	m   *Manifest
}

// Open makes a store for u with the standard AWS configuration from the
// environment (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_REGION, profiles) and checks that the bucket can be reached with
// those credentials. With AWS_ENDPOINT_URL (an S3-compatible store) it
// uses path-style addressing.
func Open(ctx context.Context, u cluster.CheckpointURL) (*Store, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("objstore: AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	custom := os.Getenv("AWS_ENDPOINT_URL") != "" || os.Getenv("AWS_ENDPOINT_URL_S3") != ""
	cli := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = custom
		// S3-compatible stores do not all take the newer streamed
		// checksums; the store checks its own CRC-32C of every object.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	s := New(cli, u)
	if _, err := cli.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(u.Bucket)}); err != nil {
		return nil, fmt.Errorf("objstore: bucket %s: %w", u.Bucket, err)
	}
	return s, nil
}

// New makes a store on an S3 client.
func New(cli *s3.Client, u cluster.CheckpointURL) *Store {
	p := u.Prefix
	if p != "" {
		p += "/"
	}
	return &Store{cli: cli, bucket: u.Bucket, prefix: p}
}

func (s *Store) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

func (s *Store) epochDir(epoch uint64) string { return fmt.Sprintf("%sepochs/%020d/", s.prefix, epoch) }

// ManifestKey is the object key of epoch's manifest.
func (s *Store) ManifestKey(epoch uint64) string { return s.epochDir(epoch) + "MANIFEST" }

// Object is one state object named by a manifest.
type Object struct {
	Key   string `json:"key"`
	Epoch uint64 `json:"epoch"` // the epoch that wrote it (an incremental checkpoint names older ones)
	Node  string `json:"node"`
	Op    string `json:"op"`
	// Lo and Hi are the vnodes (inclusive) whose state it holds.
	Lo   int    `json:"lo"`
	Hi   int    `json:"hi"`
	Size int64  `json:"size"`
	CRC  uint32 `json:"crc"`
}

// Manifest is one epoch's checkpoint: every state object it is made of
// and the runtime's record (source positions, jobs, assignment).
type Manifest struct {
	Epoch   uint64          `json:"epoch"`
	Time    time.Time       `json:"time"`
	Objects []Object        `json:"objects"`
	Meta    json.RawMessage `json:"meta,omitempty"`
}

// PutState uploads one operator's state of epoch for vnodes lo..hi as
// node's incarnation (its lease). The returned Object goes into the
// epoch's manifest.
func (s *Store) PutState(ctx context.Context, epoch uint64, node string, incarnation int64, op string, lo, hi int, data []byte) (Object, error) {
	if lo < 0 || hi < lo {
		return Object{}, fmt.Errorf("objstore: bad vnode range %d-%d", lo, hi)
	}
	key := fmt.Sprintf("%snodes/%s-%x/%s.%d-%d", s.epochDir(epoch), node, incarnation, url.PathEscape(op), lo, hi)
	if err := s.put(ctx, key, data); err != nil {
		return Object{}, err
	}
	return Object{Key: key, Epoch: epoch, Node: node, Op: op, Lo: lo, Hi: hi, Size: int64(len(data)), CRC: crc32.Checksum(data, castagnoli)}, nil
}

func (s *Store) put(ctx context.Context, key string, data []byte) error {
	_, err := s.cli.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key),
		Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))})
	if err != nil {
		return fmt.Errorf("objstore: put s3://%s/%s: %w", s.bucket, key, err)
	}
	return nil
}

func (s *Store) get(ctx context.Context, key string) ([]byte, error) {
	out, err := s.cli.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	if err != nil {
		var nsk *types.NoSuchKey
		if errors.As(err, &nsk) {
			return nil, fmt.Errorf("%w: s3://%s/%s is missing", ErrCorrupt, s.bucket, key)
		}
		return nil, fmt.Errorf("objstore: get s3://%s/%s: %w", s.bucket, key, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, fmt.Errorf("objstore: read s3://%s/%s: %w", s.bucket, key, err)
	}
	return b, nil
}

// Committer moves the committed pointer (a *cluster.Fence).
type Committer interface {
	CommitPointer(ctx context.Context, epoch uint64, manifest string) (cluster.Pointer, error)
}

// Commit writes m as its epoch's manifest, then moves the pointer to it
// through f. The manifest is written only by the caller after every
// object it names was uploaded; if the pointer move fails (f's term
// ended, etcd unreachable) the epoch is not committed and its objects
// and manifest are garbage.
func (s *Store) Commit(ctx context.Context, f Committer, m Manifest) (cluster.Pointer, error) {
	if m.Time.IsZero() {
		m.Time = time.Now().UTC()
	}
	body, err := json.Marshal(m)
	if err != nil {
		return cluster.Pointer{}, fmt.Errorf("objstore: encode manifest: %w", err)
	}
	data := append(body, '\n')
	data = append(data, fmt.Sprintf("%08x\n", crc32.Checksum(body, castagnoli))...)
	key := s.ManifestKey(m.Epoch)
	if err := s.put(ctx, key, data); err != nil {
		return cluster.Pointer{}, fmt.Errorf("objstore: epoch %d not committed: %w", m.Epoch, err)
	}
	s.mu.Lock()
	s.written[0], s.written[1] = s.written[1], writtenManifest{key: key, m: &m}
	s.mu.Unlock()
	failpoint.Hit(failpoint.CoordinatorAfterManifest, "checkpoint %d", m.Epoch)
	return f.CommitPointer(ctx, m.Epoch, key)
}

// ReadManifest reads and checks a manifest.
func (s *Store) ReadManifest(ctx context.Context, key string) (*Manifest, error) {
	b, err := s.get(ctx, key)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 {
		return nil, fmt.Errorf("%w: manifest %s without CRC line", ErrCorrupt, key)
	}
	sum, err := strconv.ParseUint(string(b[i+1:]), 16, 32)
	if err != nil || crc32.Checksum(b[:i], castagnoli) != uint32(sum) {
		return nil, fmt.Errorf("%w: manifest %s CRC mismatch", ErrCorrupt, key)
	}
	m := new(Manifest)
	if err := json.Unmarshal(b[:i], m); err != nil {
		return nil, fmt.Errorf("%w: manifest %s: %v", ErrCorrupt, key, err)
	}
	return m, nil
}

// collectManifest is the manifest at key for Collect: one this store
// wrote, from memory, else read from the store.
func (s *Store) collectManifest(ctx context.Context, key string) (*Manifest, error) {
	s.mu.Lock()
	for _, w := range s.written {
		if w.key == key && w.m != nil {
			s.mu.Unlock()
			return w.m, nil
		}
	}
	s.mu.Unlock()
	return s.ReadManifest(ctx, key)
}

// Checkpoint is a committed checkpoint read back: its manifest and every
// object's bytes, verified. Read-only; safe for concurrent use.
type Checkpoint struct {
	Manifest Manifest
	data     map[string][]byte // by object key
}

// State returns op's objects that hold vnode, in manifest order: what an
// instance that owns vnode after a restore reads, whichever node wrote it.
func (c *Checkpoint) State(op string, vnode int) [][]byte {
	var out [][]byte
	for _, o := range c.Manifest.Objects {
		if o.Op == op && o.Lo <= vnode && vnode <= o.Hi {
			out = append(out, c.data[o.Key])
		}
	}
	return out
}

// Fetch reads one object a manifest names, checking its size and CRC
// (ErrCorrupt when they differ or it is missing): a restore reads only
// the objects it needs.
func (s *Store) Fetch(ctx context.Context, o Object) ([]byte, error) {
	b, err := s.get(ctx, o.Key)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != o.Size || crc32.Checksum(b, castagnoli) != o.CRC {
		return nil, fmt.Errorf("%w: object %s has %d bytes or another CRC than its manifest says (%d)", ErrCorrupt, o.Key, len(b), o.Size)
	}
	return b, nil
}

// Load reads the manifest at key and every object it names, checking
// sizes and CRCs.
func (s *Store) Load(ctx context.Context, key string) (*Checkpoint, error) {
	m, err := s.ReadManifest(ctx, key)
	if err != nil {
		return nil, err
	}
	c := &Checkpoint{Manifest: *m, data: make(map[string][]byte, len(m.Objects))}
	for _, o := range m.Objects {
		b, err := s.Fetch(ctx, o)
		if err != nil {
			return nil, err
		}
		c.data[o.Key] = b
	}
	return c, nil
}

// Recover loads the checkpoint p names; if it is damaged (ErrCorrupt) it
// logs why and loads p's previous one. Other errors (the store
// unreachable) are returned: recovery must not fall back past a
// checkpoint it merely could not read.
func (s *Store) Recover(ctx context.Context, p cluster.Pointer) (*Checkpoint, error) {
	c, err := s.Load(ctx, p.Manifest)
	if err == nil || !errors.Is(err, ErrCorrupt) || p.PreviousManifest == "" {
		return c, err
	}
	s.logf("objstore: checkpoint of epoch %d is damaged (%v); recovering from the previous one, epoch %d", p.Epoch, err, p.Previous)
	return s.Load(ctx, p.PreviousManifest)
}

// Collect deletes what no kept checkpoint needs. It keeps the committed
// checkpoint (p) and its previous one: their manifests and every object
// they name, written in their epochs or in older ones (an incremental
// checkpoint names the objects of earlier epochs that still hold its
// state). Of the epochs up to p's, one that holds none of those is
// deleted whole; in the others, except p's own, the objects neither
// manifest names are deleted (the superseded parts of incremental
// chains, uploads of epochs that did not commit). Epochs after p (uploads
// in flight) stay. It returns the epochs deleted whole.
//
// It relies on what the writers of manifests keep to: a later manifest
// names no object of an epoch up to p's that p's manifest does not name
// (a chain that goes on from before p passed through p).
func (s *Store) Collect(ctx context.Context, p cluster.Pointer) ([]uint64, error) {
	keep := map[uint64]bool{p.Epoch: true}
	named := map[string]bool{}
	for _, key := range []string{p.Manifest, p.PreviousManifest} {
		if key == "" {
			continue
		}
		m, err := s.collectManifest(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("objstore: collect: %w", err)
		}
		keep[m.Epoch] = true
		named[key] = true
		for _, o := range m.Objects {
			keep[o.Epoch] = true
			named[o.Key] = true
		}
	}
	root := s.prefix + "epochs/"
	whole := map[uint64]bool{}
	pg := s3.NewListObjectsV2Paginator(s.cli, &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(root)})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("objstore: list %s: %w", root, err)
		}
		for _, o := range page.Contents {
			key := aws.ToString(o.Key)
			dir, _, ok := strings.Cut(strings.TrimPrefix(key, root), "/")
			e, err := strconv.ParseUint(dir, 10, 64)
			if !ok || err != nil || e > p.Epoch || (keep[e] && (e == p.Epoch || named[key])) {
				continue
			}
			if _, err := s.cli.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: o.Key}); err != nil {
				return nil, fmt.Errorf("objstore: delete %s: %w", key, err)
			}
			if !keep[e] {
				whole[e] = true
			}
		}
	}
	deleted := make([]uint64, 0, len(whole))
	for e := range whole {
		deleted = append(deleted, e)
	}
	slices.Sort(deleted)
	return deleted, nil
}

// listEpochs lists the epoch directories, ascending.
func (s *Store) listEpochs(ctx context.Context) ([]uint64, error) {
	var out []uint64
	pg := s3.NewListObjectsV2Paginator(s.cli, &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket),
		Prefix: aws.String(s.prefix + "epochs/"), Delimiter: aws.String("/")})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("objstore: list epochs: %w", err)
		}
		for _, cp := range page.CommonPrefixes {
			name := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(cp.Prefix), s.prefix+"epochs/"), "/")
			if e, err := strconv.ParseUint(name, 10, 64); err == nil {
				out = append(out, e)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}
