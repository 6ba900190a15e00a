package dataflow

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/streamsql/streamsql/connector"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/storage/changelog"
	"github.com/streamsql/streamsql/types"
)

// View changelogs and resuming subscriptions (design: docs/contributing/
// checkpoints.md, "Subscriptions across a restart").
//
// Every materialized view (JobSpec.Changelog) appends the net changes it
// publishes to client subscribers, epoch by epoch, to a durable log
// (storage/changelog), committed (fsynced when a client is subscribed)
// before the epoch is handed to them. A subscriber that lost its
// connection, or the server, resumes with SUBSCRIBE ... WITH (since = the
// epoch_time it last saw): it reads the log's frames after that epoch, then
// follows the log as it grows (SubscribeSince).
//
// After a restart a view resumes from checkpoint C while its subscribers
// were already sent the epochs after C that are in its log. The replay of
// the inputs after C cuts epochs at other places, so it cannot be sent as
// it comes: the view holds its changes back from clients (keeping their
// net sum) until every input has read as far as it had when the last
// logged epoch was cut (each frame records the inputs' positions at its
// epoch), then sends one epoch with the difference between what it
// computed since C and what the log says subscribers saw after C. So
// subscribers see neither a gap nor a change twice. While a view holds, no
// checkpoint is taken (a crash then recovers from C again, with the same
// log), and the hold ends anyway after replayDeadline (an input that cannot
// reach its old position): the difference is still exact, only rows of
// epochs not yet replayed go out as deletes and come back later.

// DefaultChangelogRetention is how long a view's changes stay in its
// changelog (for SUBSCRIBE ... since) unless Config says otherwise.
const DefaultChangelogRetention = time.Hour

// replayDeadline bounds how long a view holds its changes after a restart.
const replayDeadline = 30 * time.Second

// frameRows bounds the rows of one changelog frame.
const frameRows = 4096

// maxCutEpochs bounds the epochs whose input positions are remembered
// (about 50 s at the default epoch length; memory: epochs x roots). A view
// further behind writes frames without positions: after a restart its
// hold then waits for fewer inputs (the difference it sends is exact
// anyway).
const maxCutEpochs = 512

// cutKey names a root reader across restarts: its job and its index among
// the job's roots (the plan is the same when the job resumes).
type cutKey struct {
	job uint32
	idx int
}

// cutPos is a root's position at an epoch's cut.
type cutPos struct {
	table bool
	lsn   uint64 // a table's
	pos   []byte // a source's (nil: its start)
}

// reached reports whether p is at or past target.
func (p cutPos) reached(target cutPos) bool {
	if p.table != target.table {
		return true // not comparable: do not wait for it
	}
	if p.table {
		return p.lsn >= target.lsn
	}
	if target.pos == nil {
		return true
	}
	if p.pos == nil {
		return false
	}
	return connector.PositionReached(p.pos, target.pos)
}

// clState is the runtime's changelog bookkeeping (nil without
// Config.Changelogs). Its methods are safe for concurrent use.
type clState struct {
	dir       string
	retention time.Duration

	mu       sync.Mutex
	cuts     map[uint64]map[cutKey]cutPos // input positions by epoch
	order    []uint64                     // the epochs in cuts, oldest first
	targets  map[cutKey]cutPos            // replay: positions not reached yet
	reachedT uint64                       // replay: the epoch the last target was reached at
	holding  int                          // views holding their changes back
	deadline time.Time                    // replay: set by EndRecovery
}

func newCLState(cfg Config) *clState {
	if cfg.Changelogs == "" {
		return nil
	}
	r := cfg.ChangelogRetention
	if r <= 0 {
		r = DefaultChangelogRetention
	}
	return &clState{dir: cfg.Changelogs, retention: r, cuts: map[uint64]map[cutKey]cutPos{}, targets: map[cutKey]cutPos{}}
}

// noteCut records root r's position at epoch's cut, and whether the
// replay after a restart has reached its target.
func (c *clState) noteCut(epoch uint64, k cutKey, p cutPos) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.cuts[epoch]
	if m == nil {
		m = map[cutKey]cutPos{}
		c.cuts[epoch] = m
		c.order = append(c.order, epoch)
		for len(c.order) > maxCutEpochs {
			delete(c.cuts, c.order[0])
			c.order = c.order[1:]
		}
	}
	m[k] = p
	if t, ok := c.targets[k]; ok && p.reached(t) {
		delete(c.targets, k)
		c.reachedT = max(c.reachedT, epoch)
	}
}

// cutsAt returns the positions recorded for epoch.
func (c *clState) cutsAt(epoch uint64) map[cutKey]cutPos {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[cutKey]cutPos, len(c.cuts[epoch]))
	for k, v := range c.cuts[epoch] {
		out[k] = v
	}
	return out
}

// caughtUp reports whether a view may stop holding at epoch e: every input
// read as far as before the crash by e's cut, or the deadline passed.
func (c *clState) caughtUp(e uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.targets) == 0 && e >= c.reachedT {
		return true
	}
	return !c.deadline.IsZero() && time.Now().After(c.deadline)
}

// hold registers a holding view with the positions its log's frames
// after the checkpoint were cut at.
func (c *clState) hold(targets map[cutKey]cutPos) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holding++
	for k, t := range targets {
		furthest(c.targets, k, t)
	}
}

// furthest records p as root k's position in m unless m has one at or
// past it.
func furthest(m map[cutKey]cutPos, k cutKey, p cutPos) {
	if old, ok := m[k]; !ok || !old.reached(p) {
		m[k] = p
	}
}

func (c *clState) unhold(rt *Runtime) {
	c.mu.Lock()
	c.holding--
	c.mu.Unlock()
	rt.progressed() // CHECKPOINT may wait for it
}

// isHolding reports whether a view holds its changes (no checkpoints).
func (c *clState) isHolding() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.holding > 0
}

// endRecovery drops the targets of roots no resumed job has (they will
// never be reached) and starts the deadline. rt.mu is held.
func (rt *Runtime) endReplayTargets() {
	c := rt.cl
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.targets {
		j := rt.jobs[k.job]
		if j == nil || !j.resumed || k.idx >= len(j.roots) {
			delete(c.targets, k)
		}
	}
	c.deadline = time.Now().Add(replayDeadline)
}

// recordCutPos notes a root's position at every barrier (cl set).
func (j *Job) recordCutPos(r *root, epoch uint64, p cutPos) {
	if j.rt.cl != nil {
		j.rt.cl.noteCut(epoch, cutKey{job: j.spec.ID, idx: r.idx}, p)
	}
}

// viewLog is a view's changelog writer; used on the view's goroutine
// (onEpoch) with the job's subMu held, and at start.
type viewLog struct {
	dir  string
	log  *changelog.Log // nil while inactive with nothing on disk
	cols []types.Column
	// active: the log is kept (a client subscribed within the retention);
	// a view nobody subscribes to writes nothing.
	active     bool
	lastClient time.Time // when a client was last subscribed
	bad        bool      // a write failed: the log restarts after the last epoch
	prev       uint64    // the last epoch handled
	hold       *viewHold
	trim       time.Time // the last Trim
}

// usable reports whether the log holds every change sent to clients
// since its From (readers may follow it). vl may be nil.
func (vl *viewLog) usable() bool {
	return vl != nil && vl.active && !vl.bad && vl.log != nil
}

// viewHold is what a view resumed after a restart holds back.
type viewHold struct {
	pub   stream.ChangeSet // the net changes the log says subscribers saw after the checkpoint
	acc   stream.ChangeSet // the net changes computed since the restart
	since time.Time        // when the view started holding
}

// openViewLog opens j's changelog at start (rt.mu held). resumed is the
// checkpoint epoch the job resumes from (0: it starts from its inputs).
func (rt *Runtime) openViewLog(j *Job, resumed uint64) {
	now := time.Now()
	vl := &viewLog{dir: filepath.Join(rt.cl.dir, strconv.FormatUint(uint64(j.spec.ID), 10)), cols: j.spec.Cols, prev: rt.epoch, trim: now}
	j.clog = vl
	// A log this view cannot continue (it is new or rebuilt, or the log
	// does not cover the epochs after its checkpoint) is removed: no
	// subscriber may resume from its history. The log starts again when a
	// client subscribes.
	drop := func() {
		if vl.log != nil {
			vl.log.Close()
			vl.log = nil
		}
		if err := os.RemoveAll(vl.dir); err != nil {
			rt.cfg.Logf("materialized view %s: removing its changelog: %v", j.spec.Name, err)
		}
	}
	if resumed == 0 {
		drop()
		return
	}
	vl.prev = resumed
	if _, err := os.Stat(vl.dir); err != nil {
		return // no log: nobody subscribed within the retention
	}
	// A log left without segments (discarded after a failed write) must
	// not cover the checkpoint: opened so, it starts after it (and goes).
	l, err := changelog.Open(vl.dir, resumed+1)
	if err != nil {
		rt.cfg.Logf("materialized view %s: changelog unreadable, subscribers cannot resume from before now: %v", j.spec.Name, err)
		drop()
		return
	}
	vl.log = l
	if l.From() > resumed {
		// The log does not cover the epochs after the checkpoint (it
		// started after it, or a write failed): subscribers cannot resume
		// from before now.
		drop()
		return
	}
	h, targets, n, err := readHold(l, resumed, vl.cols)
	if err != nil {
		rt.cfg.Logf("materialized view %s: changelog after checkpoint %d unreadable, subscribers cannot resume from before now: %v", j.spec.Name, resumed, err)
		drop()
		return
	}
	recent := EpochAt(now.Add(-rt.cl.retention))
	if max(l.From(), l.Last()) >= recent {
		vl.active, vl.lastClient = true, now
	}
	if n == 0 {
		return
	}
	vl.hold, vl.active, vl.lastClient = h, true, now
	rt.cl.hold(targets)
	rt.cfg.Logf("materialized view %s: %d changelog frames after checkpoint %d were sent to subscribers; holding its changes until the replay has caught up", j.spec.Name, n, resumed)
}

// readHold reads the log's frames after epoch: their net changes and the
// furthest input positions they record.
func readHold(l *changelog.Log, after uint64, cols []types.Column) (*viewHold, map[cutKey]cutPos, int, error) {
	c, err := l.NewCursor(after)
	if err != nil {
		return nil, nil, 0, err
	}
	defer c.Close()
	h := &viewHold{pub: stream.ChangeSet{}, acc: stream.ChangeSet{}, since: time.Now()}
	targets := map[cutKey]cutPos{}
	n := 0
	for {
		_, payload, ok, err := c.Next()
		if err != nil {
			return nil, nil, 0, err
		}
		if !ok {
			return h, targets, n, nil
		}
		cuts, ch, err := decodeFrame(payload, cols)
		if err != nil {
			return nil, nil, 0, err
		}
		n++
		h.pub.Add(ch, cols)
		for k, p := range cuts {
			furthest(targets, k, p)
		}
	}
}

// restartLog empties the log (creating it if needed): it covers the
// epochs after from.
func (vl *viewLog) restartLog(j *Job, from uint64) {
	var err error
	if vl.log == nil {
		vl.log, err = changelog.Open(vl.dir, from)
	}
	if err == nil {
		err = vl.log.Reset(from)
	}
	if err != nil {
		vl.bad = true
		j.rt.cfg.Logf("materialized view %s: changelog: %v", j.spec.Name, err)
		return
	}
	vl.bad = false
}

// logEpoch runs on the view's goroutine with subMu held, before epoch e is
// handed to subscribers. It returns the changes client subscribers get
// (send false: none, the view holds them back after a restart).
func (j *Job) logEpoch(e uint64, changes *stream.Chunk) (out *stream.Chunk, send bool) {
	vl := j.clog
	if vl == nil {
		return changes, true
	}
	out, send = changes, true
	if h := vl.hold; h != nil {
		h.acc.Add(changes, vl.cols)
		if !j.rt.cl.caughtUp(e) {
			vl.prev = e
			return nil, false
		}
		vl.hold = nil
		j.rt.cl.unhold(j.rt)
		diff, err := h.acc.Minus(h.pub).Chunk(vl.cols)
		if err != nil {
			j.endClients(fmt.Errorf("resuming subscribers after the restart: %w", err))
			vl.restartLog(j, e)
			vl.prev = e
			return nil, false
		}
		out = diff
		rows := 0
		if diff != nil {
			rows = diff.Len()
		}
		j.rt.cfg.Logf("materialized view %s: replay caught up at epoch %d after %v; subscribers get %d rows of difference", j.spec.Name, e, time.Since(h.since).Round(time.Millisecond), rows)
	}
	hasClient := false
	for _, s := range j.subs {
		hasClient = hasClient || (s.client != nil && !s.dead)
	}
	switch {
	case hasClient:
		vl.lastClient = time.Now()
	case vl.active && vl.hold == nil && time.Since(vl.lastClient) > j.rt.cl.retention:
		// Nobody subscribed within the retention: the log goes (a
		// restart then finds none and keeps the view's log inactive).
		vl.active = false
		if vl.log != nil {
			if err := vl.log.Remove(); err != nil {
				j.rt.cfg.Logf("materialized view %s: removing its changelog: %v", j.spec.Name, err)
			}
			vl.log = nil
		}
	}
	switch {
	case !vl.active && !hasClient:
		vl.prev = e
		return out, send
	case !vl.active:
		// The first client: the log covers the epochs after the one it
		// subscribed at. A restart can resume its subscribers only from a
		// checkpoint taken after that (CoverChangelog).
		vl.restartLog(j, vl.prev)
		vl.active = !vl.bad
	case vl.bad:
		vl.restartLog(j, vl.prev)
	}
	if !vl.bad && out != nil && out.Len() > 0 {
		if err := j.appendFrames(e, out); err != nil {
			// The clients get epoch e anyway (a full disk must not stop
			// subscriptions), so the log must never look as if it covered
			// e: Reset discards its files at once (removing needs no
			// space) and starts it after e if it can; a restart finds no
			// log covering its checkpoint and refuses since values from
			// before (55000) rather than sending e twice.
			j.rt.cfg.Logf("materialized view %s: changelog write failed (subscribers resuming with since from before now must take a snapshot): %v", j.spec.Name, err)
			j.endTails(err)
			vl.restartLog(j, e)
		}
	}
	vl.prev = e
	if vl.active && vl.log != nil && vl.hold == nil && time.Since(vl.trim) > 10*time.Second {
		vl.trim = time.Now()
		keep := EpochAt(time.Now().Add(-j.rt.cl.retention))
		if ck := j.rt.ck; ck != nil {
			keep = min(keep, ck.oldestKept())
		}
		if err := vl.log.Trim(keep); err != nil {
			j.rt.cfg.Logf("materialized view %s: changelog trim: %v", j.spec.Name, err)
		}
	}
	return out, send
}

// appendFrames writes epoch e's changes in frames of at most frameRows
// rows and commits them, fsynced (the log is written only while clients
// subscribe, or may come back: they must never see an epoch a crash loses).
func (j *Job) appendFrames(e uint64, c *stream.Chunk) error {
	vl := j.clog
	cuts := j.rt.cl.cutsAt(e)
	for lo := 0; lo < c.Len(); lo += frameRows {
		hi := min(lo+frameRows, c.Len())
		if err := vl.log.Append(e, encodeFrame(cuts, c, lo, hi, vl.cols)); err != nil {
			return err
		}
	}
	return vl.log.Commit(true) // a client is subscribed (logEpoch)
}

// endClients ends every client subscription (subMu held).
func (j *Job) endClients(err error) {
	for _, s := range j.subs {
		if s.client != nil && !s.dead {
			s.client.finish(err)
			s.dead = true
		}
	}
}

// endTails ends the subscriptions that read the log (subMu held): they
// would miss the epoch it could not keep.
func (j *Job) endTails(err error) {
	for _, s := range j.subs {
		if s.client != nil && s.client.tail != nil && !s.dead {
			s.client.finish(fmt.Errorf("the view's changelog could not be written: %w", err))
			s.dead = true
		}
	}
}

// encodeFrame encodes a frame: a version byte, the input positions at the
// epoch's cut, then rows [lo, hi) of c with their ops.
func encodeFrame(cuts map[cutKey]cutPos, c *stream.Chunk, lo, hi int, cols []types.Column) []byte {
	b := []byte{1}
	b = binary.AppendUvarint(b, uint64(len(cuts)))
	for k, p := range cuts {
		b = binary.AppendUvarint(b, uint64(k.job))
		b = binary.AppendUvarint(b, uint64(k.idx))
		if p.table {
			b = append(b, 1)
			b = binary.AppendUvarint(b, p.lsn)
			continue
		}
		b = append(b, 2)
		b = binary.AppendUvarint(b, uint64(len(p.pos)))
		b = append(b, p.pos...)
	}
	b = binary.AppendUvarint(b, uint64(hi-lo))
	return stream.AppendChangeRows(b, c, lo, hi, cols)
}

// decodeFrame decodes what encodeFrame encoded.
func decodeFrame(b []byte, cols []types.Column) (map[cutKey]cutPos, *stream.Chunk, error) {
	bad := func(what string) error { return fmt.Errorf("changelog frame: %s", what) }
	if len(b) == 0 || b[0] != 1 {
		return nil, nil, bad("unknown version")
	}
	b = b[1:]
	uv := func() (uint64, bool) {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return 0, false
		}
		b = b[k:]
		return v, true
	}
	n, ok := uv()
	if !ok || n > uint64(len(b)) {
		return nil, nil, bad("truncated positions")
	}
	cuts := make(map[cutKey]cutPos, n)
	for i := uint64(0); i < n; i++ {
		job, ok1 := uv()
		idx, ok2 := uv()
		if !ok1 || !ok2 || len(b) == 0 {
			return nil, nil, bad("truncated position")
		}
		kind := b[0]
		b = b[1:]
		var p cutPos
		switch kind {
		case 1:
			lsn, ok := uv()
			if !ok {
				return nil, nil, bad("truncated lsn")
			}
			p = cutPos{table: true, lsn: lsn}
		case 2:
			l, ok := uv()
			if !ok || l > uint64(len(b)) {
				return nil, nil, bad("truncated source position")
			}
			if l > 0 {
				p.pos = append([]byte(nil), b[:l]...)
			}
			b = b[l:]
		default:
			return nil, nil, bad("unknown position kind")
		}
		cuts[cutKey{job: uint32(job), idx: int(idx)}] = p
	}
	rows, ok := uv()
	if !ok || rows > uint64(len(b)) {
		return nil, nil, bad("truncated rows")
	}
	c, rest, err := stream.DecodeChangeRows(b, int(rows), cols)
	if err != nil {
		return nil, nil, err
	}
	if len(rest) != 0 {
		return nil, nil, bad("trailing bytes")
	}
	return cuts, c, nil
}

// CoverChangelog returns once view id's changelog is kept and a committed
// checkpoint comes after its start, taking one if needed: only then can a
// restart resume its subscribers (recovery needs the log to cover the
// epochs after the checkpoint it restores). A new subscription calls it
// before its first row goes out, so a client never holds an epoch it
// could not resume after. Without automatic checkpoints (a negative
// interval: tests that place them) it does nothing; a failed checkpoint is
// logged, not returned (the subscription works, a crash before the next
// checkpoint makes resuming it fail with 55000).
func (rt *Runtime) CoverChangelog(ctx context.Context, id uint32) error {
	if rt.cl == nil || rt.ck == nil || rt.ck.interval <= 0 {
		return nil
	}
	j := rt.Job(id)
	if j == nil {
		return nil
	}
	// The log starts at the first epoch after the client registered, at
	// the latest the checkpoint's own.
	j.subMu.Lock()
	active, from := j.clog != nil && j.clog.active, uint64(0)
	if active {
		from = j.clog.log.From()
	}
	j.subMu.Unlock()
	if st, _ := rt.CheckpointStats(); active && st.Epoch >= from {
		return nil
	}
	if _, err := rt.Checkpoint(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rt.cfg.Logf("materialized view %s: checkpoint after its first subscriber: %v", j.spec.Name, err)
	}
	return nil
}

// ChangesKept reports, for a view that keeps its changes for resuming
// subscribers (SubscribeSince), the epoch after which it keeps them and
// their size on disk.
func (j *Job) ChangesKept() (since uint64, bytes int64, ok bool) {
	j.subMu.Lock()
	defer j.subMu.Unlock()
	vl := j.clog
	if !vl.usable() {
		return 0, 0, false
	}
	return vl.log.From(), vl.log.Bytes(), true
}

// DropChangelog removes a dropped view's changelog.
func (rt *Runtime) DropChangelog(id uint32) {
	if rt.cl == nil {
		return
	}
	if err := os.RemoveAll(filepath.Join(rt.cl.dir, strconv.FormatUint(uint64(id), 10))); err != nil {
		rt.cfg.Logf("changelog of view %d: %v", id, err)
	}
}

// PruneChangelogs removes the changelogs of views that keep reports
// false for (dropped while the server was down).
func (rt *Runtime) PruneChangelogs(keep func(id uint32) bool) {
	if rt.cl == nil {
		return
	}
	ents, err := os.ReadDir(rt.cl.dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		id, err := strconv.ParseUint(e.Name(), 10, 32)
		if err == nil && !keep(uint32(id)) {
			rt.DropChangelog(uint32(id))
		}
	}
}
