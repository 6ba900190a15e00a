package dataflow

import "time"

// Epochs are numbered by wall-clock time, as RisingWave does: the high 48
// bits are Unix milliseconds, the low 16 a sequence within the millisecond.
// So an epoch number is also its timestamp and always grows.
const epochSeqBits = 16

// nextEpoch returns the epoch after prev at time now.
func nextEpoch(prev uint64, now time.Time) uint64 {
	e := uint64(now.UnixMilli()) << epochSeqBits
	if e <= prev {
		e = prev + 1
	}
	return e
}

// EpochTime is the wall-clock time epoch e was started.
func EpochTime(e uint64) time.Time {
	return time.UnixMilli(int64(e >> epochSeqBits)).UTC()
}
