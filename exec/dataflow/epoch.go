package dataflow

import "time"

// Epochs are numbered by wall-clock time, as RisingWave does: the high 48
// bits are Unix milliseconds, the low 16 a sequence within the millisecond.
// So an epoch number is also its timestamp and always grows. The sequence
// stays below 1000, so that an epoch's time (EpochTime, microseconds:
// the millisecond plus the sequence) names exactly one epoch: a subscriber
// resumes from the epoch_time it last saw (EpochAt).
const (
	epochSeqBits = 16
	epochSeqMax  = 1000
)

// nextEpoch returns the epoch after prev at time now.
func nextEpoch(prev uint64, now time.Time) uint64 {
	e := uint64(now.UnixMilli()) << epochSeqBits
	if e <= prev {
		e = prev + 1
		if e&(1<<epochSeqBits-1) >= epochSeqMax { // the next millisecond
			e = (e>>epochSeqBits + 1) << epochSeqBits
		}
	}
	return e
}

// EpochTime is the time of epoch e: the wall-clock millisecond it was
// started, plus its sequence within that millisecond in microseconds.
func EpochTime(e uint64) time.Time {
	return time.UnixMicro(int64(e>>epochSeqBits)*1000 + int64(e&(1<<epochSeqBits-1))).UTC()
}

// EpochAt is the epoch whose EpochTime is t (the inverse of EpochTime for
// the epochs nextEpoch makes; other times map to the epoch just before
// them).
func EpochAt(t time.Time) uint64 {
	us := t.UnixMicro()
	if us < 0 {
		return 0
	}
	return uint64(us/1000)<<epochSeqBits | uint64(us%1000)
}
