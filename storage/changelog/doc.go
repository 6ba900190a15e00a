// Package changelog keeps each materialized view's recent published
// changes on disk, so that a subscriber can resume after a disconnect or a
// server restart from the last epoch it saw (SUBSCRIBE TO v WITH (since =
// ...)), and so that recovery knows what subscribers were already sent
// after the checkpoint it restores (docs/contributing/checkpoints.md,
// "Subscriptions across a restart").
//
// # Model
//
// A Log is a sequence of frames, each an epoch number and an opaque payload
// (the runtime encodes a view's net changes and its inputs' positions).
// Epochs only grow; one epoch may have several frames. A log covers the
// epochs after From(): every change published in an epoch e > From() is in
// it, so a reader resuming after any epoch since >= From() misses nothing.
// Reset starts the log over (a rebuilt view, a lost frame); Trim drops old
// segments (retention) and raises From.
//
// # On disk (<datadir>/changelog/<view oid>/)
//
//	<from, 16 hex digits>.log   a segment: a header, then frames
//
// A segment's header is the magic "SSQLCL1\n" and a u64 (little endian):
// the epoch the segment starts after. A frame is
//
//	u32 payload length | u32 CRC-32C of epoch and payload | u64 epoch | payload
//
// Appends go to the newest segment; past SegmentBytes a new one starts. A
// frame is visible to readers once Commit has returned (after an fsync when
// asked): a reader never sees a frame a crash could still lose. Open
// truncates a torn or corrupt tail of the newest segment (kill -9 leaves at
// most the frame being written): the frames after it were never committed
// durably. A bad frame with a valid frame after it (found by scanning the
// rest of the segment) is damage in the middle, not a torn tail: Open fails
// with ErrDamaged instead of cutting committed frames, and the owner drops
// the log (subscribers then cannot resume from before the restart, which
// they are told, rather than resume past a gap).
//
// # Concurrency
//
// A Log's methods are safe for concurrent use; one goroutine appends (the
// view's). Cursors read concurrently with appends, each on its own file
// handle, one goroutine per Cursor.
package changelog
