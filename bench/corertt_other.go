//go:build !linux

package bench

import "time"

// CoreRoundTrip needs Linux's thread affinity: elsewhere it reports false.
func CoreRoundTrip(rounds int) (time.Duration, bool) { return 0, false }
