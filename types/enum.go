package types

import (
	"math"
	"sort"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/pgerr"
)

// Enums (CREATE TYPE t AS ENUM ('a', 'b')). A value of an enum is stored
// as its label's sort position, a float64 (Arrow Float64), as PostgreSQL
// keeps enumsortorder: the labels' declared order is then the storage's
// numeric order, so that sorting, comparison, hashing, keys and min/max
// need nothing of their own, and RENAME VALUE rewrites no stored value.
// ADD VALUE BEFORE/AFTER takes the midpoint of its neighbours' positions.
// The Go form of a value is the float64; text input and output go through
// the labels, which the T carries (T.Enum).

// EnumType is one enum type of a catalog. Every T of the enum points to
// the same EnumType; its labels are replaced atomically by ALTER TYPE (the
// catalog, under its lock, after the change is persisted), so that running
// plans see added and renamed labels. Safe for concurrent use.
type EnumType struct {
	OID      uint32
	ArrayOID uint32
	Schema   string
	Name     string
	labels   atomic.Pointer[EnumLabels]
}

// EnumLabels is an enum's labels in sort order with their positions
// (strictly increasing). Immutable.
type EnumLabels struct {
	Labels []string
	Sorts  []float64
}

// NewEnumType returns an enum type with the given labels (in sort order).
func NewEnumType(oid, arrayOID uint32, schema, name string, l *EnumLabels) *EnumType {
	e := &EnumType{OID: oid, ArrayOID: arrayOID, Schema: schema, Name: name}
	e.labels.Store(l)
	return e
}

// Labels returns the current labels.
func (e *EnumType) Labels() *EnumLabels { return e.labels.Load() }

// SetLabels replaces the labels (ALTER TYPE ... ADD VALUE / RENAME VALUE).
func (e *EnumType) SetLabels(l *EnumLabels) { e.labels.Store(l) }

// Label returns the label at sort position pos.
func (e *EnumType) Label(pos float64) (string, bool) {
	l := e.Labels()
	i := sort.SearchFloat64s(l.Sorts, pos)
	if i < len(l.Sorts) && l.Sorts[i] == pos {
		return l.Labels[i], true
	}
	return "", false
}

// Position returns the sort position of label.
func (e *EnumType) Position(label string) (float64, bool) {
	l := e.Labels()
	for i, s := range l.Labels {
		if s == label {
			return l.Sorts[i], true
		}
	}
	return 0, false
}

// EnumOf returns the type of e's values.
func EnumOf(e *EnumType) T { return T{Kind: Enum, Typmod: -1, Enum: e} }

// enumOID returns the OID of an enum type (0 when the T has lost its enum).
func (t T) enumOID() uint32 {
	if t.Enum == nil {
		return 0
	}
	return t.Enum.OID
}

func enumArrowType() arrow.DataType { return arrow.PrimitiveTypes.Float64 }

// appendEnumText writes enum_out's text: the label.
func appendEnumText(dst []byte, v Value, t T) []byte {
	f, ok := v.(float64)
	if !ok || t.Enum == nil {
		return append(append(append(dst, "<bad value "...), t.String()...), '>')
	}
	if s, ok := t.Enum.Label(f); ok {
		return append(dst, s...)
	}
	// A label this plan does not know (cannot happen: labels are never
	// removed); print the position rather than nothing.
	return appendFloat(dst, f, 64, 0)
}

// parseEnum is enum_in: a label, exactly as declared.
func parseEnum(s string, t T) (Value, error) {
	if t.Enum != nil {
		if f, ok := t.Enum.Position(s); ok {
			return f, nil
		}
	}
	return nil, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input value for enum %s: \"%s\"", t, s)
}

// EnumPositions numbers n new labels 1, 2, ... n (CREATE TYPE).
func EnumPositions(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i + 1)
	}
	return out
}

// EnumInsertPosition returns the sort position of a label added between
// the positions lo and hi (hasLo/hasHi false: at that end), or false when
// no float64 lies strictly between them.
func EnumInsertPosition(lo, hi float64, hasLo, hasHi bool) (float64, bool) {
	switch {
	case !hasLo && !hasHi:
		return 1, true
	case !hasHi:
		return math.Floor(lo) + 1, true
	case !hasLo:
		return math.Ceil(hi) - 1, true
	}
	mid := lo + (hi-lo)/2
	return mid, mid > lo && mid < hi
}

// userTypeName returns the name of a user-defined type (an enum, a
// composite type), or "".
func (t T) userTypeName() string {
	switch {
	case t.Kind == Enum && t.Enum != nil:
		return t.Enum.Name
	case t.Kind == Record && t.Rec != nil && t.Rec.Name != "":
		return t.Rec.Name
	}
	return ""
}

// IsUserDefined reports an enum or a composite type of the catalog.
func (t T) IsUserDefined() bool { return t.userTypeName() != "" }

// UserTypeSchema returns the schema of a user-defined type ("" for
// others).
func (t T) UserTypeSchema() string {
	switch {
	case t.Kind == Enum && t.Enum != nil:
		return t.Enum.Schema
	case t.Kind == Record && t.Rec != nil && t.Rec.Name != "":
		return t.Rec.Schema
	}
	return ""
}
