package exec

import (
	"bytes"
	"cmp"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/types"
)

// colCmp compares two rows of one column, both non-NULL, as PostgreSQL
// orders values of the column's SQL type.
type colCmp func(i, j int) int

// newColCmp builds a typed comparator for a (storage of t): no boxing on the
// common types; arrays and other rare types go through types.Compare.
func newColCmp(a arrow.Array, t types.T) colCmp {
	switch x := a.(type) {
	case *array.Int64:
		v := x.Int64Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Int32:
		v := x.Int32Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Int16:
		v := x.Int16Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Uint32:
		v := x.Uint32Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Date32:
		v := x.Date32Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Time64:
		v := x.Time64Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Timestamp:
		v := x.TimestampValues()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Float64:
		v := x.Float64Values()
		return func(i, j int) int { return cmpFloat(v[i], v[j]) }
	case *array.Float32:
		v := x.Float32Values()
		return func(i, j int) int { return cmpFloat(float64(v[i]), float64(v[j])) }
	case *array.Boolean:
		return func(i, j int) int { return cmpBool(x.Value(i), x.Value(j)) }
	case *array.MonthDayNanoInterval:
		v := x.MonthDayNanoIntervalValues()
		return func(i, j int) int { return cmpInterval(v[i], v[j]) }
	case *array.Binary:
		return func(i, j int) int { return bytes.Compare(x.Value(i), x.Value(j)) }
	case *array.String:
		switch t.Kind {
		case types.Numeric:
			ds := make([]apd.Decimal, x.Len())
			nan := make([]bool, x.Len())
			for i := range ds {
				if x.IsValid(i) {
					nan[i] = parseNumeric(x.Value(i), &ds[i])
				}
			}
			return func(i, j int) int { return cmpNumeric(&ds[i], nan[i], &ds[j], nan[j]) }
		case types.Bpchar:
			return func(i, j int) int {
				return strings.Compare(strings.TrimRight(x.Value(i), " "), strings.TrimRight(x.Value(j), " "))
			}
		case types.JSONB, types.JSON:
			return genericCmp(a, t)
		}
		return func(i, j int) int { return strings.Compare(x.Value(i), x.Value(j)) }
	}
	return genericCmp(a, t)
}

// genericCmp compares through Go values (arrays, jsonb).
func genericCmp(a arrow.Array, t types.T) colCmp {
	return func(i, j int) int { return types.Compare(types.ValueAt(a, i, t), types.ValueAt(a, j, t), t) }
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// rowCmp compares rows over several sort keys, with direction and NULL
// placement; NULLs are peers of each other.
type rowCmp struct {
	keys []keyCol
}

type keyCol struct {
	a          arrow.Array
	hasNulls   bool
	cmp        colCmp
	desc       bool
	nullsFirst bool
}

// newRowCmp builds a comparator over key arrays (all of the same length).
func newRowCmp(arrs []arrow.Array, ts []types.T, desc, nullsFirst []bool) *rowCmp {
	r := &rowCmp{keys: make([]keyCol, len(arrs))}
	for k, a := range arrs {
		r.keys[k] = keyCol{a: a, hasNulls: a.NullN() > 0, cmp: newColCmp(a, ts[k]), desc: desc[k], nullsFirst: nullsFirst[k]}
	}
	return r
}

// compare orders rows i and j; 0 means peers.
func (r *rowCmp) compare(i, j int) int {
	for k := range r.keys {
		kc := &r.keys[k]
		if kc.hasNulls {
			ni, nj := kc.a.IsNull(i), kc.a.IsNull(j)
			if ni || nj {
				if ni && nj {
					continue
				}
				if ni == kc.nullsFirst {
					return -1
				}
				return 1
			}
		}
		c := kc.cmp(i, j)
		if c != 0 {
			if kc.desc {
				return -c
			}
			return c
		}
	}
	return 0
}
