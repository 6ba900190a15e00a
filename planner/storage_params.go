package planner

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/pgerr"
)

// A table's storage parameters (CREATE TABLE ... WITH (fillfactor = 70),
// ALTER TABLE ... SET (...) / RESET (...)) tune PostgreSQL's heap, TOAST,
// vacuum and parallel scans, none of which exists here. As the planner
// settings PostgreSQL tools send, they are accepted when PostgreSQL would
// accept them (names, types and bounds checked with PostgreSQL's errors),
// kept in pg_class.reloptions (psql's \d+ shows them), and have no effect:
// docs/sql.md says so.

// storageParam is one parameter's type and bounds (PostgreSQL 15's
// reloptions.c).
type storageParam struct {
	kind     byte // 'i' integer, 'r' real, 'b' boolean, 'e' vacuum_index_cleanup
	min, max float64
}

var heapParams = map[string]storageParam{
	"fillfactor":                            {'i', 10, 100},
	"toast_tuple_target":                    {'i', 128, 8160},
	"parallel_workers":                      {'i', 0, 1024},
	"user_catalog_table":                    {'b', 0, 0},
	"vacuum_truncate":                       {'b', 0, 0},
	"vacuum_index_cleanup":                  {'e', 0, 0},
	"log_autovacuum_min_duration":           {'i', -1, math.MaxInt32},
	"autovacuum_enabled":                    {'b', 0, 0},
	"autovacuum_vacuum_threshold":           {'i', 0, math.MaxInt32},
	"autovacuum_vacuum_insert_threshold":    {'i', -1, math.MaxInt32},
	"autovacuum_analyze_threshold":          {'i', 0, math.MaxInt32},
	"autovacuum_vacuum_cost_limit":          {'i', 1, 10000},
	"autovacuum_freeze_min_age":             {'i', 0, 1000000000},
	"autovacuum_freeze_max_age":             {'i', 100000, 2000000000},
	"autovacuum_freeze_table_age":           {'i', 0, 2000000000},
	"autovacuum_multixact_freeze_min_age":   {'i', 0, 1000000000},
	"autovacuum_multixact_freeze_max_age":   {'i', 10000, 2000000000},
	"autovacuum_multixact_freeze_table_age": {'i', 0, 2000000000},
	"autovacuum_vacuum_cost_delay":          {'r', 0, 100},
	"autovacuum_vacuum_scale_factor":        {'r', 0, 100},
	"autovacuum_vacuum_insert_scale_factor": {'r', 0, 100},
	"autovacuum_analyze_scale_factor":       {'r', 0, 100},
}

// toastParams are the parameters the "toast." namespace takes besides
// autovacuum_* (refused: see TableStorageParams).
var toastParams = map[string]bool{
	"vacuum_truncate": true, "vacuum_index_cleanup": true, "log_autovacuum_min_duration": true,
}

// TableStorageParams applies a WITH (...), SET (...) or (reset) RESET
// (...) list to a table's parameters old ("name=value", as
// pg_class.reloptions) and returns the new list, in PostgreSQL's order
// (old ones in place, new ones appended), with the failing option's
// location (-1 for none).
func TableStorageParams(old []string, opts []*pg.Node, reset bool) ([]string, int32, error) {
	out := append([]string(nil), old...)
	seen := map[string]bool{}
	for _, n := range opts {
		d := n.GetDefElem()
		if d == nil {
			continue
		}
		name := strings.ToLower(d.Defname)
		full := name
		if d.Defnamespace != "" {
			full = strings.ToLower(d.Defnamespace) + "." + name
		}
		if d.Defnamespace == "" && name == "connector" {
			_, err := RelOptions(OptTable, []*pg.Node{n})
			return nil, d.Location, err
		}
		p, known := heapParams[name]
		switch {
		case strings.EqualFold(d.Defnamespace, "toast") && (toastParams[name] || strings.HasPrefix(name, "autovacuum_")):
			// PostgreSQL keeps these on the table's TOAST table, which
			// has no counterpart here to show them on.
			return nil, d.Location, pgerr.New(pgerr.FeatureNotSupported, "storage parameter \"%s\" is not supported", full)
		case d.Defnamespace != "" && !strings.EqualFold(d.Defnamespace, "toast"):
			return nil, d.Location, pgerr.New(pgerr.InvalidParameterValue, "unrecognized parameter namespace \"%s\"", d.Defnamespace)
		case !known || d.Defnamespace != "":
			return nil, d.Location, pgerr.New(pgerr.InvalidParameterValue, "unrecognized parameter \"%s\"", d.Defname)
		}
		if reset {
			if d.Arg != nil {
				return nil, d.Location, pgerr.New(pgerr.SyntaxError, "RESET must not include values for parameters")
			}
			out = dropParam(out, full)
			continue
		}
		if seen[full] {
			return nil, d.Location, pgerr.New(pgerr.InvalidParameterValue, "parameter \"%s\" specified more than once", name)
		}
		seen[full] = true
		v := defArgText(d.Arg)
		if err := p.check(name, v); err != nil {
			return nil, d.Location, err
		}
		out = append(dropParam(out, full), full+"="+v)
	}
	return out, -1, nil
}

// check validates v for parameter name with PostgreSQL's messages.
func (p storageParam) check(name, v string) error {
	bounds := func(x float64, format string) error {
		if x < p.min || x > p.max {
			return pgerr.New(pgerr.InvalidParameterValue, "value %s out of bounds for option \"%s\"", v, name).
				WithDetail("Valid values are between \""+format+"\" and \""+format+"\".", p.min, p.max)
		}
		return nil
	}
	switch p.kind {
	case 'i':
		x, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return pgerr.New(pgerr.InvalidParameterValue, "invalid value for integer option \"%s\": %s", name, v)
		}
		return bounds(float64(x), "%.0f")
	case 'r':
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(x) {
			return pgerr.New(pgerr.InvalidParameterValue, "invalid value for floating point option \"%s\": %s", name, v)
		}
		return bounds(x, "%f")
	case 'b':
		if _, ok := pgBool(v); !ok {
			return pgerr.New(pgerr.InvalidParameterValue, "invalid value for boolean option \"%s\": %s", name, v)
		}
	case 'e':
		if _, ok := pgBool(v); !ok && !strings.EqualFold(v, "auto") {
			return pgerr.New(pgerr.InvalidParameterValue, "invalid value for enum option \"%s\": %s", name, v).
				WithDetail("Valid values are \"on\", \"off\", and \"auto\".")
		}
	}
	return nil
}

// pgBool parses PostgreSQL's boolean spellings (parse_bool).
func pgBool(v string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "t", "tr", "tru", "true", "y", "ye", "yes", "on", "1":
		return true, true
	case "f", "fa", "fal", "fals", "false", "n", "no", "of", "off", "0":
		return false, true
	}
	return false, false
}

// defArgText is a DefElem argument as PostgreSQL's defGetString prints
// it; no argument is "true".
func defArgText(n *pg.Node) string {
	switch {
	case n == nil:
		return "true"
	case n.GetInteger() != nil:
		return strconv.Itoa(int(n.GetInteger().Ival))
	case n.GetFloat() != nil:
		return n.GetFloat().Fval
	case n.GetString_() != nil:
		return n.GetString_().Sval
	case n.GetBoolean() != nil:
		return strconv.FormatBool(n.GetBoolean().Boolval)
	case n.GetTypeName() != nil:
		var parts []string
		for _, x := range n.GetTypeName().Names {
			parts = append(parts, x.GetString_().Sval)
		}
		return strings.Join(parts, ".")
	}
	return fmt.Sprint(n)
}

func dropParam(list []string, full string) []string {
	out := list[:0:0]
	for _, s := range list {
		if !strings.HasPrefix(s, full+"=") {
			out = append(out, s)
		}
	}
	return out
}
