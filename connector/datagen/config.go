package datagen

import (
	"github.com/streamsql/streamsql/types"
)

// Batch sizes of Generator.Next.
const (
	// DefaultBatchRows is the rows of a Next call given no maximum.
	DefaultBatchRows = 4096
	// MaxBatchRows caps the rows of one Next call.
	MaxBatchRows = 1 << 20
)

// Config is a validated datagen source: built by ConfigFromOptions, then
// immutable and safe to share between goroutines and Generators.
type Config struct {
	// Columns are the generated columns, in output order.
	Columns []types.Column
	// Rows is the number of rows asked for; 0 means unbounded. Sequences
	// with an end may stop the source earlier (see Limit).
	Rows int64
	// RowsPerSecond is the wall-clock pace a Reader keeps; 0 means
	// unpaced. The Generator does not use it.
	RowsPerSecond float64
	// Seed selects the random values.
	Seed uint64

	fields []field
	limit  int64 // rows the source yields; -1 = unbounded
}

// Limit is the number of rows the source yields: Rows, or fewer when a
// sequence column reaches its end first; -1 means unbounded.
func (c Config) Limit() int64 { return c.limit }

// storage is how a column's values are produced and stored.
type storage uint8

const (
	stInt      storage = iota // smallint, integer, bigint, date, timestamp(tz): int64 domain
	stFloat                   // real, double precision
	stNumeric                 // numeric: int64 count of 10^-scale units, printed as text
	stText                    // text, varchar, char: random strings, or sequence numbers
	stBool                    // boolean
	stInterval                // interval
	stPick                    // any type: only picks among values (json, jsonb)
	stUUID                    // uuid: random version 4 uuids, or picks among values
)

type kind uint8

const (
	kindRandom kind = iota
	kindSequence
)

// field is one column's resolved generation rule. Only the members of its
// storage are used.
type field struct {
	t        types.T
	st       storage
	kind     kind
	seed     uint64 // per-column random stream
	nullSeed uint64 // stream deciding NULLs
	nullCut  uint64 // a row is NULL when its draw < nullCut; 0 = never

	// stInt, stNumeric, stText sequences: start + row*step; random [lo, hi].
	start, step int64
	lo, hi      int64
	jitter      int64 // stInt timestamps: subtract a draw in [0, jitter]
	scale       int   // stNumeric
	// stFloat
	fstart, fstep, flo, fhi float64
	// stInterval
	ivStart, ivStep types.IntervalValue
	// stText random strings
	length, pad int // pad: blank-pad to this many characters (char(n))

	// picks (kind random with values): by storage
	ints   []int64
	floats []float64
	strs   []string
	bools  []bool
	ivs    []types.IntervalValue
	picks  int // number of values; 0 = no picks
}

// Watermark returns, for column col generated as a sequence of integers,
// dates or timestamps, a value no row at index row or later is below: the
// sequence's value at row minus its max_past. The value is the column's
// int64 storage (µs for timestamps, days for dates); ok is false for other
// columns. Source runtimes use it to emit watermarks after a batch.
func (c Config) Watermark(col int, row int64) (v int64, ok bool) {
	if col < 0 || col >= len(c.fields) {
		return 0, false
	}
	f := &c.fields[col]
	if f.st != stInt || f.kind != kindSequence || f.picks > 0 {
		return 0, false
	}
	return f.start + row*f.step - f.jitter, true
}
