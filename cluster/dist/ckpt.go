package dist

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/streamsql/streamsql/cluster/failpoint"
	"github.com/streamsql/streamsql/cluster/objstore"
	"github.com/streamsql/streamsql/exec/stream"
)

// Checkpoints of the instances a worker runs (docs/contributing/cluster.md,
// "Checkpoints on a cluster"). At a checkpoint barrier each stateful
// operator of an instance writes its state into one state object,
// uploaded to the object store in the background
// (objstore.Store.PutState, named by job, operator, instance and the
// operator's position in the instance, for the instance's vnode range).
// Uploads are incremental: each operator keeps a chain of the objects it
// uploaded since the instance started, a base (its whole state, after a
// reset) followed by deltas (the keys it put or deleted since its
// previous snapshot: stream.Stateful.Snapshot with full false); the
// instance's report of an epoch names the whole chain, oldest first, and
// a restore applies its objects in that order (ApplyState). A snapshot is
// a new base (opChain.needsFull) at the operator's first checkpoint, when
// an upload of its chain failed, when the chain is maxChain objects long
// (its first chain shorter by an offset of the instance and operator, so
// that the instances of a view, which start together, do not upload
// their whole states at the same checkpoints),
// or when the deltas' bytes outgrew the base's; so the bytes uploaded
// stay within about twice the changes and a restore reads at most about
// twice the state in at most maxChain objects.
// When the barrier leaves the instance every operator of it has
// snapshotted; once their chains' uploads are done the worker reports
// the instance's objects in etcd under
//
//	<prefix>/reports/<epoch:020d>/<job>.p<op>.i<k>
//
// The coordinator commits the epoch when every instance it placed has
// reported it (Runner.CommitEpoch). Objects of an epoch that did not
// commit stay named by the next epochs' chains, whose manifests keep
// them from objstore.Store.Collect.

// maxChain is the longest chain of objects an operator's state is
// uploaded as before a new base (a variable for tests).
var maxChain = 16

// instanceName names instance k of parallel operator op of job in reports
// and state objects.
func instanceName(job uint32, op, k int) string { return fmt.Sprintf("%d.p%d.i%d", job, op, k) }

func reportPrefix(prefix string) string { return prefix + "/reports/" }

func reportKey(prefix string, epoch uint64, inst string) string {
	return fmt.Sprintf("%s%020d/%s", reportPrefix(prefix), epoch, inst)
}

// instanceVNodes is the inclusive vnode range instance k of n owns (the
// v with v*n/256 == k, stream.VNodeOwner).
func instanceVNodes(k, n int) (lo, hi int) {
	lo, hi = -1, -1
	for v := range stream.VNodes {
		if v*n/stream.VNodes == k {
			if lo < 0 {
				lo = v
			}
			hi = v
		}
	}
	return lo, hi
}

// upload is one state object's upload.
type upload struct {
	done chan struct{}
	size int64 // its bytes
	obj  objstore.Object
	err  error // set before done is closed
}

// failed says whether u is done and failed (it does not wait).
func (u *upload) failed() bool {
	select {
	case <-u.done:
		return u.err != nil
	default:
		return false
	}
}

// opChain is the chain of uploads one operator of an instance restores
// from: links[0] a base, the rest deltas on it.
type opChain struct {
	links        []*upload
	base, deltas int64 // bytes of the base and of the deltas
	limit        int   // the most objects the chain may have
}

// firstLimit is the length of the first chain of the operator at
// position id of instance k: maxChain less an offset below maxChain/2
// that differs between neighbouring instances and operators.
func firstLimit(k, id int) int { return maxChain - (k+id)%max(maxChain/2, 1) }

// needsFull says whether the operator's next snapshot must be a new
// base (see the comment at the top of the file).
func (ch *opChain) needsFull() bool {
	if len(ch.links) == 0 || len(ch.links) >= ch.limit || ch.deltas > ch.base {
		return true
	}
	for _, u := range ch.links {
		if u.failed() { // a delta on it would never restore
			return true
		}
	}
	return false
}

// instanceCkpt is the stream.Checkpointer of one instance on a worker.
// Snapshot is called from the instance's operator goroutines (one per
// operator, so one at a time for each chain), passed from its output's;
// both lock mu.
type instanceCkpt struct {
	r      *Runner
	name   string
	k      int // the instance
	lo, hi int
	ids    map[stream.Node]int // the instance's nodes, preorder
	// restored is the state its operator (position 0) restores, from a
	// cluster checkpoint (nil: it starts empty).
	restored stream.StateReader

	mu     sync.Mutex
	chains map[int]*opChain // by position
	// pending are, by epoch, the chains the epoch's snapshots ended
	// (a copy of each at its snapshot).
	pending map[uint64][][]*upload
}

func newInstanceCkpt(r *Runner, job uint32, op, k int, p *stream.Parallel) *instanceCkpt {
	c := &instanceCkpt{r: r, name: instanceName(job, op, k), k: k, ids: map[stream.Node]int{},
		chains: map[int]*opChain{}, pending: map[uint64][][]*upload{}}
	c.lo, c.hi = instanceVNodes(k, max(p.N, 1))
	var walk func(n stream.Node)
	walk = func(n stream.Node) {
		c.ids[n] = len(c.ids)
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(p.Input)
	return c
}

// Restored implements stream.Checkpointer: the instance's operator
// restores the state of the checkpoint its view restarted from (Restore),
// if any.
func (c *instanceCkpt) Restored(n stream.Node) stream.StateReader {
	if c.restored == nil || c.ids[n] != 0 {
		return nil
	}
	return c.restored
}

// Snapshot implements stream.Checkpointer: st's state, encoded (its
// changes since its previous snapshot, or all of it when its chain needs
// a new base), is uploaded in the background.
func (c *instanceCkpt) Snapshot(n stream.Node, b stream.Barrier, st stream.Stateful) error {
	failpoint.Hit(failpoint.WorkerBeforeSnapshot, "instance %s, checkpoint %d", c.name, b.Epoch)
	id, ok := c.ids[n]
	if !ok {
		return fmt.Errorf("cluster: %s is not an operator of instance %s", n.Explain(), c.name)
	}
	c.mu.Lock()
	ch := c.chains[id]
	if ch == nil {
		ch = &opChain{limit: firstLimit(c.k, id)}
		c.chains[id] = ch
	}
	full := ch.needsFull()
	c.mu.Unlock()
	var w stateWriter
	if err := st.Snapshot(&w, full); err != nil {
		return err
	}
	u := &upload{done: make(chan struct{}), size: int64(len(w.buf))}
	c.mu.Lock()
	if full {
		if len(ch.links) > 0 {
			ch.limit = maxChain
		}
		ch.links, ch.base, ch.deltas = nil, u.size, 0
	} else {
		ch.deltas += u.size
	}
	ch.links = append(ch.links, u)
	c.pending[b.Epoch] = append(c.pending[b.Epoch], slices.Clone(ch.links))
	c.mu.Unlock()
	op := fmt.Sprintf("%s.n%d", c.name, id)
	go func() {
		defer close(u.done)
		timeout := c.r.UploadTimeout
		if timeout <= 0 {
			timeout = 30 * time.Second
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		u.obj, u.err = c.r.store.PutState(ctx, b.Epoch, c.r.node.ID(), c.r.node.Lease(), op, c.lo, c.hi, w.buf)
	}()
	return nil
}

// failedReport is the report of an instance whose upload failed: a JSON
// object where a report of objects is a JSON list.
type failedReport struct {
	Error string `json:"error"`
}

// passed is called when checkpoint barrier epoch left the instance: every
// operator of it has snapshotted; once the uploads of their chains are
// done, the instance's report (every object of the chains) is written.
// A failed upload is logged and reported as a failure (failedReport), so
// that the coordinator gives the epoch up at once instead of waiting for
// a report that will not come; the chain's next snapshot is a new base.
func (c *instanceCkpt) passed(epoch uint64) {
	c.mu.Lock()
	chains := c.pending[epoch]
	delete(c.pending, epoch)
	c.mu.Unlock()
	go func() {
		var val []byte
		var err error
		objs := []objstore.Object{}
	wait:
		for _, chain := range chains {
			for _, u := range chain {
				<-u.done
				if u.err != nil {
					c.r.logf("cluster: checkpoint %d of instance %s failed: %v", epoch, c.name, u.err)
					val, err = json.Marshal(failedReport{Error: u.err.Error()})
					break wait
				}
				objs = append(objs, u.obj)
			}
		}
		if val == nil && err == nil {
			failpoint.Hit(failpoint.WorkerAfterUpload, "instance %s, checkpoint %d", c.name, epoch)
			val, err = json.Marshal(objs)
		}
		if err == nil {
			_, err = c.r.node.Client().Put(context.Background(), reportKey(c.r.node.Target().Prefix, epoch, c.name), string(val))
			if err == nil {
				failpoint.Hit(failpoint.WorkerAfterReport, "instance %s, checkpoint %d", c.name, epoch)
			}
		}
		if err != nil {
			c.r.logf("cluster: checkpoint %d of instance %s not reported: %v", epoch, c.name, err)
		}
	}()
}

// watchBarriers passes out on until it ends or ctx does, calling
// c.passed for each checkpoint barrier once it went out.
func (c *instanceCkpt) watchBarriers(ctx context.Context, out <-chan stream.Message) <-chan stream.Message {
	next := make(chan stream.Message, stream.ChannelSize)
	go func() {
		defer close(next)
		for m := range out {
			select {
			case next <- m:
			case <-ctx.Done():
				return
			}
			if m.Kind == stream.KindBarrier && m.Barrier.Checkpoint {
				c.passed(m.Barrier.Epoch)
			}
		}
	}()
	return next
}

// The encoding of a state object: a sequence of records, each a kind
// byte ('P' put, 'D' delete, 'R' reset), then for P the key and the
// value and for D the key, each as a uvarint length and its bytes.
type stateWriter struct{ buf []byte }

func (w *stateWriter) bytes(b []byte) {
	w.buf = binary.AppendUvarint(w.buf, uint64(len(b)))
	w.buf = append(w.buf, b...)
}

func (w *stateWriter) Put(key, value []byte) {
	w.buf = append(w.buf, 'P')
	w.bytes(key)
	w.bytes(value)
}

func (w *stateWriter) Delete(key []byte) {
	w.buf = append(w.buf, 'D')
	w.bytes(key)
}

func (w *stateWriter) Reset() { w.buf = append(w.buf, 'R') }

// errBadState is returned by DecodeState and ApplyState for bytes they
// cannot read.
var errBadState = errors.New("cluster: bad state object")

// decodeState calls fn for every record of a state object that
// stateWriter wrote: kind 'R' (key and value nil), 'P' or 'D' (value
// nil).
func decodeState(data []byte, fn func(kind byte, key, value []byte)) error {
	field := func() ([]byte, error) {
		n, k := binary.Uvarint(data)
		if k <= 0 || uint64(len(data)-k) < n {
			return nil, errBadState
		}
		b := data[k : k+int(n)]
		data = data[k+int(n):]
		return b, nil
	}
	for len(data) > 0 {
		kind := data[0]
		data = data[1:]
		switch kind {
		case 'R':
			fn(kind, nil, nil)
		case 'P':
			k, err := field()
			if err != nil {
				return err
			}
			v, err := field()
			if err != nil {
				return err
			}
			fn(kind, k, v)
		case 'D':
			k, err := field()
			if err != nil {
				return err
			}
			fn(kind, k, nil)
		default:
			return errBadState
		}
	}
	return nil
}

// DecodeState calls put for every key and value a state object puts, in
// order (its resets and deletes skipped: the keys of one object, a base
// or a delta).
func DecodeState(data []byte, put func(key, value []byte)) error {
	return decodeState(data, func(kind byte, key, value []byte) {
		if kind == 'P' {
			put(key, value)
		}
	})
}

// ApplyState applies a state object to kv: a reset empties it, a put
// sets a key, a delete removes one. Applying a chain's objects in order
// (its base, then its deltas) gives the state of the chain's last
// snapshot. The values kept in kv are slices of data.
func ApplyState(kv map[string][]byte, data []byte) error {
	return decodeState(data, func(kind byte, key, value []byte) {
		switch kind {
		case 'R':
			clear(kv)
		case 'P':
			kv[string(key)] = value
		case 'D':
			delete(kv, string(key))
		}
	})
}
