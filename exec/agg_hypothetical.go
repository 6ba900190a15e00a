package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Hypothetical-set aggregates: rank, dense_rank, percent_rank and
// cume_dist (h1, ..., hn) WITHIN GROUP (ORDER BY x1, ..., xn) place the
// hypothetical row (h1, ..., hn) among the group's rows under the ORDER BY
// and give its rank as the window function of the same name would. The
// planner passes h1..hn then x1..xn as Args (each pair of one type) and the
// x keys as OrderBy; newAggState hands the keys' directions to the state
// (no sorting: each row is only compared with the hypothetical one). The
// direct arguments are taken from a group's first row, as PostgreSQL
// evaluates them once per group. Rows with NULL keys count, placed as the
// ORDER BY places NULLs. A state is owned by one operator goroutine.

// hypotheticalNames are the hypothetical-set aggregates.
var hypotheticalNames = map[string]bool{"rank": true, "dense_rank": true, "percent_rank": true, "cume_dist": true}

// IsHypothetical reports whether name is a hypothetical-set aggregate.
func IsHypothetical(name string) bool { return hypotheticalNames[name] }

// ResolveHypothetical resolves a hypothetical-set aggregate over args: n
// direct arguments then the n ORDER BY values, pairwise of one type (the
// planner unifies them).
func ResolveHypothetical(name string, args []types.T) (*AggFunc, error) {
	if !hypotheticalNames[name] || len(args) == 0 || len(args)%2 != 0 {
		return nil, noFunction(name, args)
	}
	ret := types.TInt8
	if name == "percent_rank" || name == "cume_dist" {
		ret = types.TFloat8
	}
	as := make([]types.T, len(args))
	for i, a := range args {
		as[i] = plain(a)
	}
	return &AggFunc{Name: name, Args: as, Return: ret, impl: aggImpl(func(f *AggFunc, _ memory.Allocator) aggState {
		return &hypotheticalAgg{fn: f.Name, ts: f.Args[len(f.Args)/2:]}
	})}, nil
}

type hypotheticalAgg struct {
	fn         string
	ts         []types.T // the key types
	desc       []bool
	nullsFirst []bool
	groups     []hypoGroup
}

type hypoGroup struct {
	h        []types.Value // the hypothetical row; nil before the first row
	less     int64         // rows sorting before it
	peers    int64         // rows sorting as it
	total    int64
	distinct map[string]bool // dense_rank: the distinct keys sorting before it
}

// setOrder gives the ORDER BY directions (newAggState).
func (s *hypotheticalAgg) setOrder(keys []SortKey) {
	for _, k := range keys {
		s.desc = append(s.desc, k.Desc)
		s.nullsFirst = append(s.nullsFirst, k.NullsFirst)
	}
}

func (s *hypotheticalAgg) grow(n int) {
	for len(s.groups) < n {
		s.groups = append(s.groups, hypoGroup{})
	}
}

func (s *hypotheticalAgg) update(args []arrow.Array, gids []int32) error {
	n := len(s.ts)
	if len(args) != 2*n || len(s.desc) != n {
		return pgerr.Internal("exec: hypothetical-set aggregate %s called with %d arguments and %d keys", s.fn, len(args), len(s.desc))
	}
	row := make([]types.Value, n)
	for i, g := range gids {
		if g < 0 {
			continue
		}
		st := &s.groups[g]
		if st.h == nil {
			st.h = make([]types.Value, n)
			for k := 0; k < n; k++ {
				st.h[k] = types.ValueAt(args[k], i, s.ts[k])
			}
		}
		for k := 0; k < n; k++ {
			row[k] = types.ValueAt(args[n+k], i, s.ts[k])
		}
		st.total++
		switch c := s.compare(row, st.h); {
		case c < 0:
			st.less++
			if s.fn == "dense_rank" {
				if st.distinct == nil {
					st.distinct = map[string]bool{}
				}
				var key []byte
				for k := 0; k < n; k++ {
					key = encodeValue(key, args[n+k], i, s.ts[k])
				}
				st.distinct[string(key)] = true
			}
		case c == 0:
			st.peers++
		}
	}
	return nil
}

// compare orders a row against the hypothetical row under the ORDER BY.
func (s *hypotheticalAgg) compare(row, h []types.Value) int {
	for k := range row {
		a, b := row[k], h[k]
		if a == nil || b == nil {
			if a == nil && b == nil {
				continue
			}
			if (a == nil) == s.nullsFirst[k] {
				return -1
			}
			return 1
		}
		if c := types.Compare(a, b, s.ts[k]); c != 0 {
			if s.desc[k] {
				return -c
			}
			return c
		}
	}
	return 0
}

func (s *hypotheticalAgg) appendResult(b array.Builder, g int) error {
	st := s.groups[g]
	switch s.fn {
	case "rank":
		b.(*array.Int64Builder).Append(st.less + 1)
	case "dense_rank":
		b.(*array.Int64Builder).Append(int64(len(st.distinct)) + 1)
	case "percent_rank":
		v := 0.0
		if st.total > 0 {
			v = float64(st.less) / float64(st.total)
		}
		b.(*array.Float64Builder).Append(v)
	case "cume_dist":
		b.(*array.Float64Builder).Append(float64(st.less+st.peers+1) / float64(st.total+1))
	}
	return nil
}
