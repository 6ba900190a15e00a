package engine

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/pgerr"
)

// Option lists of utility statements (EXPLAIN, COPY): every option is
// honoured or refused by name, never ignored. Stateless.

// defValue is a DefElem's argument as text ("true" without one).
func defValue(d *pg.DefElem) string {
	if d.Arg == nil {
		return "true"
	}
	switch {
	case d.Arg.GetString_() != nil:
		return d.Arg.GetString_().Sval
	case d.Arg.GetBoolean() != nil:
		return strconv.FormatBool(d.Arg.GetBoolean().Boolval)
	case d.Arg.GetInteger() != nil:
		return strconv.Itoa(int(d.Arg.GetInteger().Ival))
	case d.Arg.GetFloat() != nil:
		return d.Arg.GetFloat().Fval
	case d.Arg.GetAConst() != nil && d.Arg.GetAConst().GetSval() != nil:
		return d.Arg.GetAConst().GetSval().Sval
	}
	return ""
}

// explainOptions checks EXPLAIN (...): the plan is streamsql's own text
// without costs, so FORMAT TEXT and the boolean options set to false
// (COSTS, VERBOSE, ... off) are what it does; ANALYZE and any option that
// asks for more are refused (0A000), an unknown one is PostgreSQL's 42601.
func explainOptions(opts []*pg.Node) error {
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		v := defValue(d)
		switch d.Defname {
		case "analyze":
			if b, err := checkBool(v); err == nil && b == "off" {
				continue
			}
			return pgerr.Unsupported("EXPLAIN ANALYZE is not supported yet")
		case "format":
			if !strings.EqualFold(v, "text") {
				return pgerr.Unsupported("EXPLAIN option FORMAT %s is not supported: plans are text", strings.ToUpper(v))
			}
		case "verbose", "costs", "settings", "buffers", "wal", "timing", "summary", "generic_plan":
			b, err := checkBool(v)
			if err != nil {
				return pgerr.New(pgerr.InvalidParameterValue, "EXPLAIN option %s requires a Boolean value", strings.ToUpper(d.Defname))
			}
			if b == "on" {
				return pgerr.Unsupported("EXPLAIN option %s is not supported", strings.ToUpper(d.Defname))
			}
		default:
			return pgerr.New(pgerr.SyntaxError, "unrecognized EXPLAIN option \"%s\"", d.Defname)
		}
	}
	return nil
}
