package dist

import (
	"context"
	"fmt"
	"time"
)

// Bounded reads of a restart's checkpoint and the fall back to the
// committed pointer's previous checkpoint when the newest one is damaged
// (docs/contributing/cluster.md, "Failure cases": object store stalls
// during a restart, object missing or corrupt at restart).

// ReadContext bounds one attempt to read a restart's checkpoint (the
// coordinator's read of the pointer and manifest, then of each view's
// part; a worker's read of its instances' state) by UploadTimeout (--cluster-checkpoint-timeout): a
// GET the store never answers is given up, and the attempt is retried
// (a worker's openRestore) or the restart postponed (the coordinator's)
// instead of waiting forever.
func (r *Runner) ReadContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d := r.UploadTimeout
	if d <= 0 {
		d = 30 * time.Second
	}
	return context.WithTimeout(ctx, d)
}

// Key is the object key of the checkpoint's manifest (what a restart
// entry names).
func (rs *Restore) Key() string { return rs.key }

// Previous opens the committed pointer's previous checkpoint, for views
// whose part of the pointer's checkpoint is damaged (objstore.ErrCorrupt):
// it is kept (never collected) for this. nil, nil when there is none, or
// when the plan already restores from it (the pointer's manifest was
// damaged: BeginRestart fell back already). The result is kept.
func (pl *Plan) Previous(ctx context.Context) (*Restore, error) {
	if pl.previous != nil || pl.Restore == nil {
		return pl.previous, nil
	}
	p := pl.Pointer
	if p.PreviousManifest == "" || pl.Restore.Key() == p.PreviousManifest {
		return nil, nil
	}
	rs, err := OpenRestore(ctx, pl.r.store, p.PreviousManifest)
	if err != nil {
		return nil, fmt.Errorf("the previous checkpoint, %d: %w", p.Previous, err)
	}
	pl.previous = rs
	return rs, nil
}

// LogFrom is Log for a view that restores from rs, the pointer's
// checkpoint or its previous one (nil: from its inputs).
func (pl *Plan) LogFrom(ctx context.Context, job uint32, rs *Restore) error {
	return pl.log(ctx, job, rs)
}

// FellBack says whether the plan restores from the pointer's previous
// checkpoint because the pointer's own manifest is damaged
// (BeginRestart).
func (pl *Plan) FellBack() bool {
	return pl.Restore != nil && pl.Pointer.PreviousManifest != "" && pl.Restore.Key() == pl.Pointer.PreviousManifest
}
