package windowfuzz

import "math/rand/v2"

// A windowed aggregation over the UNION ALL of ev and ew: its watermark is
// the minimum of the two tables' (docs/watermarks.md: an operator with
// several inputs uses the minimum over them, and an input that has not
// reported one yet holds it back), each with its own delay and idle time.
type unionModel struct {
	m  *model
	in [2]input
}

const unionRel = "(SELECT id, k, v, ts FROM ev UNION ALL SELECT id, k, v, ts FROM ew)"

func randUnion(r *rand.Rand, ins [2]input, clock int64) *unionModel {
	var s spec
	for {
		s = randSpec(r)
		if s.kind != bucket && s.topN == 0 && !s.outer {
			break
		}
	}
	s.table = unionRel
	return &unionModel{m: newModel(s, input{}, clock), in: ins}
}

// sync gives the aggregation the union's watermark.
func (u *unionModel) sync() {
	u.m.hasWM = u.in[0].hasWM && u.in[1].hasWM
	if u.m.hasWM {
		u.m.wm = min(u.in[0].wm, u.in[1].wm)
	}
}

func (u *unionModel) sql() string { return u.m.sql() }

// replayLateExact: a replay after a restart reads the two tables' writes
// since the checkpoint in an order of its own, so which rows the union's
// watermark (their minimum) finds late may differ from the first run's
// (docs/watermarks.md); the view is not compared after a replay.
func (u *unionModel) replayLateExact() bool { return false }

func (u *unionModel) apply(table int, ops []op) {
	u.sync()
	u.m.batch(ops)
	u.in[table].note(ops, u.m.clock)
	u.sync()
}

func (u *unionModel) barrier() {
	u.in[0].tick(u.m.clock)
	u.in[1].tick(u.m.clock)
	u.sync()
	u.m.barrier()
}

func (u *unionModel) advance(d int64) { u.m.clock += d; u.barrier() }
func (u *unionModel) checkpoint()     { u.m.checkpoint() }
func (u *unionModel) restartAt(clock int64) {
	u.m.restartAt(clock)
	u.in[0].restart(clock)
	u.in[1].restart(clock)
	u.sync()
}
func (u *unionModel) rows() [][]string { return u.m.rows() }
func (u *unionModel) lateRows() int    { return u.m.late }
func (u *unionModel) mark() string {
	return "left " + stamp(u.in[0].wm) + ", right " + stamp(u.in[1].wm)
}
