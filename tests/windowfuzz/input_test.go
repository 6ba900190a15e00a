package windowfuzz

// input is one view's reader of one table and the watermark it computes
// (docs/watermarks.md): max(ts) - delay over the rows of every batch so
// far, NULLs and deleted rows ignored, moved after the batch's rows; with
// idle_timeout, at each barrier an input that has delivered no row for
// that long moves it to the one at its last row plus the processing time
// since that row. Times are seconds (processing time: the manual clock).
type input struct {
	// external: the watermark is set from outside (the Kafka test's, the
	// minimum over partitions); note leaves it
	external         bool
	delay, idle      int64
	wm               int64
	hasWM, hasRow    bool
	lastRow, wmAtRow int64
}

// note takes a batch's ops, delivered at processing time clock.
func (in *input) note(ops []op, clock int64) {
	if in.external {
		return
	}
	for _, o := range ops {
		if o.del {
			continue
		}
		if r := o.r; !r.tN && (!in.hasWM || r.t-in.delay > in.wm) {
			in.wm, in.hasWM = r.t-in.delay, true
		}
		in.hasRow, in.lastRow, in.wmAtRow = true, clock, in.wm
	}
}

// tick is a barrier at processing time clock.
func (in *input) tick(clock int64) {
	if in.idle > 0 && in.hasRow && in.hasWM && clock-in.lastRow >= in.idle {
		in.wm = max(in.wm, in.wmAtRow+clock-in.lastRow)
	}
}

// restart is a restart at processing time clock: the watermark goes on
// from where it was, and idleness is measured from now.
func (in *input) restart(clock int64) {
	if in.hasRow {
		in.lastRow, in.wmAtRow = clock, in.wm
	}
}

// below reports whether time t is below the watermark (late for an input
// whose rows below it are freed).
func (in *input) below(t int64) bool { return in.hasWM && t < in.wm }
