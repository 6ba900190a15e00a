package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Interval field bits of an INTERVAL typmod (PostgreSQL's INTERVAL_MASK).
var intervalFields = []struct {
	bit  int32
	name string
}{
	{1 << 2, "year"}, {1 << 1, "month"}, {1 << 3, "day"},
	{1 << 10, "hour"}, {1 << 11, "minute"}, {1 << 12, "second"},
}

const intervalFullRange = 0x7FFF

// bindTypeName resolves a TypeName; for INTERVAL with a field qualifier
// (INTERVAL '5' MINUTE) it also returns the smallest field's name.
func bindTypeName(tn *pg.TypeName) (types.T, string, error) {
	if tn == nil {
		return types.TUnknown, "", pgerr.Internal("missing type name")
	}
	if tn.Setof || tn.PctType {
		return types.TUnknown, "", pgerr.Unsupported("SETOF and %%TYPE are not supported")
	}
	names := strs(tn.Names)
	name := strings.Join(names, ".")
	var mods []int32
	for _, m := range tn.Typmods {
		c := m.GetAConst()
		if c == nil || c.GetIval() == nil {
			return types.TUnknown, "", pgerr.New(pgerr.SyntaxError, "type modifiers must be simple constants or identifiers")
		}
		mods = append(mods, c.GetIval().Ival)
	}
	fields := ""
	if last := names[len(names)-1]; last == "interval" && len(mods) > 0 {
		// pg_query gives the field mask first, then the precision.
		mask := mods[0]
		if mask != intervalFullRange {
			for _, f := range intervalFields {
				if mask&f.bit != 0 {
					fields = f.name
				}
			}
		}
		// FromName takes the whole list as PostgreSQL's intervaltypmodin does
		// (mask, then precision), so the typmod keeps the field range.
	}
	t, err := types.FromName(name, mods, len(tn.ArrayBounds))
	if err != nil {
		if e := pgerr.As(err); e != nil && tn.Location >= 0 {
			return t, fields, e
		}
		return t, fields, err
	}
	return t, fields, nil
}
