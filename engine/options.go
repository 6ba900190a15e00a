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

// explainOpts are EXPLAIN's honoured options.
type explainOpts struct {
	analyze bool // run the statement and print actual counters
	timing  bool // with analyze: time per node (TIMING, default on)
	summary bool // with analyze: the Planning/Execution Time footer (SUMMARY, default on)
	verbose bool // each node's output columns (VERBOSE)
	json    bool // FORMAT JSON
}

// explainOptions checks EXPLAIN (...): the plan is streamsql's own,
// without costs, so the boolean options set to false (COSTS, BUFFERS, ...
// off) are what it does; FORMAT TEXT or JSON and VERBOSE (each node's
// output columns) are honoured, and ANALYZE (for queries, see
// explain_analyze.go) with TIMING and SUMMARY on or off; any other option
// that asks for more (BUFFERS, WAL, ...) is refused (0A000), an unknown
// one is PostgreSQL's 42601.
func explainOptions(opts []*pg.Node) (explainOpts, error) {
	var o explainOpts
	var timing, summary string
	for _, n := range opts {
		d := n.GetDefElem()
		if d == nil {
			continue
		}
		v := defValue(d)
		switch d.Defname {
		case "format":
			switch strings.ToLower(v) {
			case "text":
				o.json = false
			case "json":
				o.json = true
			default:
				return o, pgerr.Unsupported("EXPLAIN option FORMAT %s is not supported: plans are TEXT or JSON", strings.ToUpper(v))
			}
		case "analyze", "timing", "summary", "verbose", "costs", "settings", "buffers", "wal", "generic_plan":
			b, err := checkBool(v)
			if err != nil {
				return o, pgerr.New(pgerr.InvalidParameterValue, "EXPLAIN option %s requires a Boolean value", strings.ToUpper(d.Defname))
			}
			switch d.Defname {
			case "analyze":
				o.analyze = b == "on"
			case "timing":
				timing = b
			case "summary":
				summary = b
			case "verbose":
				o.verbose = b == "on"
			default:
				if b == "on" {
					return o, pgerr.Unsupported("EXPLAIN option %s is not supported", strings.ToUpper(d.Defname))
				}
			}
		default:
			return o, pgerr.New(pgerr.SyntaxError, "unrecognized EXPLAIN option \"%s\"", d.Defname)
		}
	}
	if !o.analyze {
		if timing == "on" {
			return o, pgerr.New(pgerr.InvalidParameterValue, "EXPLAIN option TIMING requires ANALYZE")
		}
		if summary == "on" {
			return o, pgerr.Unsupported("EXPLAIN option SUMMARY is not supported without ANALYZE")
		}
		return o, nil
	}
	o.timing, o.summary = timing != "off", summary != "off"
	return o, nil
}
