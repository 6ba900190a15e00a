package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrNotCoordinator is returned by a commit whose coordinator is no
// longer the elected one (its leader key is gone or belongs to a newer
// term): a stale coordinator cannot commit.
var ErrNotCoordinator = errors.New("cluster: not the coordinator")

// ErrStalePointer is returned by a commit of an epoch that is not newer
// than the committed one, or when the pointer moved between the read and
// the transaction.
var ErrStalePointer = errors.New("cluster: committed pointer moved or is newer")

// Term identifies one coordinator's leadership: its election key and that
// key's create revision. A new leadership always has another revision.
type Term struct {
	Key string
	Rev int64
}

// Pointer is the committed checkpoint, <prefix>/checkpoint/committed.
type Pointer struct {
	Epoch    uint64 `json:"epoch"`
	Manifest string `json:"manifest"` // the manifest's object key
	// Previous and PreviousManifest name the checkpoint committed
	// before this one: recovery falls back to it when an object of this
	// one is missing or corrupt, so it is never garbage.
	Previous         uint64    `json:"previous,omitempty"`
	PreviousManifest string    `json:"previous_manifest,omitempty"`
	Coordinator      string    `json:"coordinator"`
	Term             int64     `json:"term"`
	Time             time.Time `json:"time"`
}

func pointerKey(prefix string) string { return prefix + "/checkpoint/committed" }

// ReadPointer reads the committed pointer; ok is false when nothing was
// ever committed. rev is the key's mod revision (0 when absent).
func ReadPointer(ctx context.Context, cli *clientv3.Client, prefix string) (p Pointer, rev int64, ok bool, err error) {
	resp, err := cli.Get(ctx, pointerKey(prefix))
	if err != nil {
		return p, 0, false, fmt.Errorf("cluster: read committed pointer: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return p, 0, false, nil
	}
	if err := json.Unmarshal(resp.Kvs[0].Value, &p); err != nil {
		return p, 0, false, fmt.Errorf("cluster: committed pointer: %w", err)
	}
	return p, resp.Kvs[0].ModRevision, true, nil
}

// Fence commits on behalf of one coordinator term. A Fence is immutable
// and safe for concurrent use; it stays usable after the term ended, but
// every commit through it then fails with ErrNotCoordinator.
type Fence struct {
	cli    *clientv3.Client
	prefix string
	term   Term
	node   string
}

// NewFence is a fence for term on cli (tests, tools; a node gets its
// own from Node.Fence).
func NewFence(cli *clientv3.Client, prefix string, term Term, node string) *Fence {
	return &Fence{cli: cli, prefix: prefix, term: term, node: node}
}

// Term is the fence's term.
func (f *Fence) Term() Term { return f.term }

// Pointer reads the committed pointer (see ReadPointer).
func (f *Fence) Pointer(ctx context.Context) (Pointer, bool, error) {
	p, _, ok, err := ReadPointer(ctx, f.cli, f.prefix)
	return p, ok, err
}

// CommitPointer moves the committed pointer to epoch with its manifest,
// in one etcd transaction that succeeds only if the fence's leader key
// still exists with the term's create revision and the pointer is the one
// just read. epoch must be newer than the committed one. The previous
// pointer becomes the new one's Previous.
func (f *Fence) CommitPointer(ctx context.Context, epoch uint64, manifest string) (Pointer, error) {
	cur, rev, ok, err := ReadPointer(ctx, f.cli, f.prefix)
	if err != nil {
		return Pointer{}, err
	}
	if ok && epoch <= cur.Epoch {
		return Pointer{}, fmt.Errorf("%w: epoch %d is not after the committed epoch %d", ErrStalePointer, epoch, cur.Epoch)
	}
	p := Pointer{Epoch: epoch, Manifest: manifest, Coordinator: f.node, Term: f.term.Rev, Time: time.Now().UTC()}
	if ok {
		p.Previous, p.PreviousManifest = cur.Epoch, cur.Manifest
	}
	val, err := json.Marshal(p)
	if err != nil {
		return Pointer{}, fmt.Errorf("cluster: encode pointer: %w", err)
	}
	key := pointerKey(f.prefix)
	err = f.fencedPut(ctx, key, clientv3.Compare(clientv3.ModRevision(key), "=", rev), string(val),
		fmt.Sprintf("epoch %d not committed", epoch), fmt.Sprintf("the pointer moved while epoch %d was committed", epoch))
	if err != nil {
		return Pointer{}, err
	}
	return p, nil
}

// fencedPut puts val at key in one transaction that succeeds only while
// f's term holds and cond is true. It fails with ErrNotCoordinator when
// the term ended ("...; " + notDone) and with ErrStalePointer (conflict)
// when cond was false.
func (f *Fence) fencedPut(ctx context.Context, key string, cond clientv3.Cmp, val, notDone, conflict string) error {
	resp, err := f.cli.Txn(ctx).If(
		clientv3.Compare(clientv3.CreateRevision(f.term.Key), "=", f.term.Rev),
		cond,
	).Then(clientv3.OpPut(key, val)).
		Else(clientv3.OpGet(f.term.Key)).Commit()
	if err != nil {
		return fmt.Errorf("cluster: %s: %w", notDone, err)
	}
	if !resp.Succeeded {
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 || kvs[0].CreateRevision != f.term.Rev {
			return fmt.Errorf("%w: node %s's term %d has ended; %s", ErrNotCoordinator, f.node, f.term.Rev, notDone)
		}
		return fmt.Errorf("%w: %s", ErrStalePointer, conflict)
	}
	return nil
}
