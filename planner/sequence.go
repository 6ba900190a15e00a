package planner

import (
	"strconv"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
)

// Sequence options of CREATE / ALTER SEQUENCE and of identity columns.

// SeqSpec reads the options of CREATE or ALTER SEQUENCE; an option we do
// not implement is refused by name.
func SeqSpec(opts []*pg.Node, alter bool) (catalog.SeqSpec, error) {
	var spec catalog.SeqSpec
	seen := map[string]bool{}
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		if seen[d.Defname] {
			return spec, pgerr.New(pgerr.SyntaxError, "conflicting or redundant options")
		}
		seen[d.Defname] = true
		num := func() (*int64, error) {
			if d.Arg == nil {
				return nil, nil
			}
			v, err := seqNumber(d.Arg)
			if err != nil {
				return nil, err
			}
			return &v, nil
		}
		var err error
		switch d.Defname {
		case "as":
			spec.Type, err = seqType(d.Arg.GetTypeName())
		case "increment":
			spec.Increment, err = num()
		case "start":
			spec.Start, err = num()
		case "minvalue":
			spec.Min, err = num()
			spec.NoMin = d.Arg == nil
		case "maxvalue":
			spec.Max, err = num()
			spec.NoMax = d.Arg == nil
		case "cache":
			spec.Cache, err = num()
		case "cycle":
			c := d.Arg.GetBoolean().GetBoolval()
			spec.Cycle = &c
		case "owned_by":
			for _, n := range d.Arg.GetList().GetItems() {
				spec.OwnedBy = append(spec.OwnedBy, n.GetString_().GetSval())
			}
		case "restart":
			if !alter {
				return spec, pgerr.New(pgerr.SyntaxError, "option \"restart\" not recognized")
			}
			spec.Restart = true
			spec.RestartWith, err = num()
		default:
			return spec, pgerr.Unsupported("sequence option %s is not supported", d.Defname)
		}
		if err != nil {
			return spec, err
		}
	}
	return spec, nil
}

// seqNumber reads a numeric option value (Integer, or Float for values
// beyond int32).
func seqNumber(n *pg.Node) (int64, error) {
	if i := n.GetInteger(); i != nil {
		return int64(i.Ival), nil
	}
	if f := n.GetFloat(); f != nil {
		v, err := strconv.ParseInt(f.Fval, 10, 64)
		if err != nil {
			return 0, pgerr.New(pgerr.NumericValueOutOfRange, "value \"%s\" is out of range for type bigint", f.Fval)
		}
		return v, nil
	}
	return 0, pgerr.New(pgerr.SyntaxError, "sequence option values must be numeric")
}

func seqType(t *pg.TypeName) (string, error) {
	if t != nil && len(t.Names) > 0 {
		switch t.Names[len(t.Names)-1].GetString_().GetSval() {
		case "int2":
			return "smallint", nil
		case "int4":
			return "integer", nil
		case "int8":
			return "bigint", nil
		}
	}
	return "", pgerr.New(pgerr.InvalidParameterValue, "sequence type must be smallint, integer, or bigint")
}
