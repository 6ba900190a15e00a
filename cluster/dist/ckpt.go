package dist

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/streamsql/streamsql/cluster/failpoint"
	"github.com/streamsql/streamsql/cluster/objstore"
	"github.com/streamsql/streamsql/exec/stream"
)

// Checkpoints of the instances a worker runs (docs/contributing/cluster.md,
// "Checkpoints on a cluster"). At a checkpoint barrier each stateful
// operator of an instance writes its whole state (full snapshots only:
// a restore reads one object per instance, no chain) into one
// state object, uploaded to the object store in the background
// (objstore.Store.PutState, named by job, operator, instance and the
// operator's position in the instance, for the instance's vnode range).
// When the barrier leaves the instance every operator of it has
// snapshotted; once their uploads are done the worker reports the
// instance's objects in etcd under
//
//	<prefix>/reports/<epoch:020d>/<job>.p<op>.i<k>
//
// The coordinator commits the epoch when every instance it placed has
// reported it (Runner.CommitEpoch).

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
	obj  objstore.Object
	err  error
}

// instanceCkpt is the stream.Checkpointer of one instance on a worker.
// Snapshot is called from the instance's operator goroutines, passed from
// its output's; both lock mu.
type instanceCkpt struct {
	r      *Runner
	name   string
	lo, hi int
	ids    map[stream.Node]int // the instance's nodes, preorder
	// restored is the state its operator (position 0) restores, from a
	// cluster checkpoint (nil: it starts empty).
	restored stream.StateReader

	mu      sync.Mutex
	pending map[uint64][]*upload // by epoch
}

func newInstanceCkpt(r *Runner, job uint32, op, k int, p *stream.Parallel) *instanceCkpt {
	c := &instanceCkpt{r: r, name: instanceName(job, op, k), ids: map[stream.Node]int{}, pending: map[uint64][]*upload{}}
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

// Snapshot implements stream.Checkpointer: st's whole state, encoded, is
// uploaded in the background.
func (c *instanceCkpt) Snapshot(n stream.Node, b stream.Barrier, st stream.Stateful) error {
	failpoint.Hit(failpoint.WorkerBeforeSnapshot, "instance %s, checkpoint %d", c.name, b.Epoch)
	var w stateWriter
	if err := st.Snapshot(&w, true); err != nil {
		return err
	}
	id, ok := c.ids[n]
	if !ok {
		return fmt.Errorf("cluster: %s is not an operator of instance %s", n.Explain(), c.name)
	}
	u := &upload{done: make(chan struct{})}
	c.mu.Lock()
	c.pending[b.Epoch] = append(c.pending[b.Epoch], u)
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
// operator of it has snapshotted; once their uploads are done, the
// instance's report is written. A failed upload is logged and reported
// as a failure (failedReport), so that the coordinator gives the epoch
// up at once instead of waiting for a report that will not come.
func (c *instanceCkpt) passed(epoch uint64) {
	c.mu.Lock()
	ups := c.pending[epoch]
	delete(c.pending, epoch)
	c.mu.Unlock()
	go func() {
		var val []byte
		var err error
		objs := []objstore.Object{}
		for _, u := range ups {
			<-u.done
			if u.err != nil {
				c.r.logf("cluster: checkpoint %d of instance %s failed: %v", epoch, c.name, u.err)
				val, err = json.Marshal(failedReport{Error: u.err.Error()})
				break
			}
			objs = append(objs, u.obj)
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

// errBadState is returned by DecodeState for bytes it cannot read.
var errBadState = errors.New("cluster: bad state object")

// DecodeState calls put for every key and value of a state object that
// stateWriter wrote (full snapshots: a reset, then puts).
func DecodeState(data []byte, put func(key, value []byte)) error {
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
		case 'P':
			k, err := field()
			if err != nil {
				return err
			}
			v, err := field()
			if err != nil {
				return err
			}
			put(k, v)
		case 'D':
			if _, err := field(); err != nil {
				return err
			}
		default:
			return errBadState
		}
	}
	return nil
}
