package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// DomainCheck makes E's values values of a domain (CREATE DOMAIN, built by
// the planner where a value becomes the domain's: a cast to it, a write to
// a column of it): it returns E's array unchanged when every value meets
// the domain's constraints, else fails the statement as PostgreSQL does.
// Checks are evaluated over a one-column batch whose column 0 is the
// value (VALUE in the constraint); CheckNames name them for the error.
// Immutable once built; safe for concurrent use as other nodes are.
type DomainCheck struct {
	E          Expr
	Domain     string // the domain's name, for errors and EXPLAIN
	NotNull    bool
	Checks     []Expr
	CheckNames []string
}

// Type is the domain's base type, E's type.
func (d *DomainCheck) Type() types.T { return d.E.Type() }

func (d *DomainCheck) String() string { return d.E.String() + "::" + d.Domain }

// Eval checks E's values: a NULL against NOT NULL (23502), then each CHECK
// in order (23514; a NULL result passes, as in PostgreSQL).
func (d *DomainCheck) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	a, err := d.E.Eval(ctx, b)
	if err != nil {
		return nil, err
	}
	if d.NotNull && a.NullN() > 0 {
		a.Release()
		return nil, pgerr.New(pgerr.NotNullViolation, "domain %s does not allow null values", d.Domain)
	}
	if len(d.Checks) == 0 {
		return a, nil
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "value", Type: a.DataType(), Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{a}, int64(a.Len()))
	defer rec.Release()
	for i, c := range d.Checks {
		r, err := c.Eval(ctx, rec)
		if err != nil {
			a.Release()
			return nil, err
		}
		ok := true
		if bools, isBool := r.(*array.Boolean); isBool {
			for j := 0; j < bools.Len(); j++ {
				if bools.IsValid(j) && !bools.Value(j) {
					ok = false
					break
				}
			}
		}
		r.Release()
		if !ok {
			a.Release()
			return nil, pgerr.New(pgerr.CheckViolation, "value for domain %s violates check constraint \"%s\"", d.Domain, d.CheckNames[i])
		}
	}
	return a, nil
}
