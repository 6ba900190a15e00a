package datagen

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// opt is one WITH option as written, for messages.
type opt struct{ key, val string }

// fieldOpts are one column's fields.<col>.* options by normalized name; get
// marks an option used so that leftovers can be reported.
type fieldOpts struct {
	m    map[string]opt
	used map[string]bool
}

func (o *fieldOpts) get(name string) (opt, bool) {
	v, ok := o.m[name]
	if ok {
		o.used[name] = true
	}
	return v, ok
}

// ConfigFromOptions validates a datagen source's WITH options (keys in lower
// case; see the package documentation) for the columns cols. Unknown or
// misapplied options and bad values are 22023 errors naming the option;
// column types datagen cannot produce are 0A000.
func ConfigFromOptions(cols []types.Column, opts map[string]string) (Config, error) {
	cfg := Config{Columns: cols, limit: -1}
	per := make([]fieldOpts, len(cols))
	for i := range per {
		per[i] = fieldOpts{m: map[string]opt{}, used: map[string]bool{}}
	}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys) // report the first bad key deterministically
	for _, k := range keys {
		o := opt{key: k, val: opts[k]}
		v := strings.TrimSpace(o.val)
		var err error
		switch strings.ReplaceAll(k, "-", "_") {
		case "connector":
			continue
		case "rows", "number_of_rows":
			cfg.Rows, err = strconv.ParseInt(v, 10, 64)
			if err == nil && cfg.Rows < 0 {
				err = strconv.ErrRange
			}
		case "rows_per_second", "datagen.rows.per.second":
			cfg.RowsPerSecond, err = strconv.ParseFloat(v, 64)
			if err == nil && !(cfg.RowsPerSecond >= 0 && !math.IsInf(cfg.RowsPerSecond, 1)) {
				err = strconv.ErrRange
			}
		case "seed":
			cfg.Seed, err = strconv.ParseUint(v, 10, 64)
		default:
			col, name, ok := splitFieldKey(k)
			if !ok {
				return Config{}, pgerr.New(pgerr.InvalidParameterValue, "unrecognized datagen option %q", k)
			}
			i := findColumn(cols, col)
			if i < 0 {
				return Config{}, pgerr.New(pgerr.InvalidParameterValue, "datagen option %q names no column of the source", k)
			}
			per[i].m[name] = o
		}
		if err != nil {
			return Config{}, invalid(o, nil)
		}
	}
	cfg.fields = make([]field, len(cols))
	if cfg.Rows > 0 {
		cfg.limit = cfg.Rows
	}
	for i, c := range cols {
		f, lim, err := newField(i, c, &per[i], &cfg)
		if err != nil {
			return Config{}, err
		}
		for _, name := range sortedNames(per[i].m) {
			if !per[i].used[name] {
				return Config{}, pgerr.New(pgerr.InvalidParameterValue,
					"datagen option %q does not apply to column %q (type %s, kind %s)", per[i].m[name].key, c.Name, c.Type, kindName(f.kind)).
					WithHint("min, max, values and length are for kind random; start, end, step and max_past for kind sequence.")
			}
		}
		cfg.fields[i] = f
		if lim >= 0 && (cfg.limit < 0 || lim < cfg.limit) {
			cfg.limit = lim
		}
	}
	return cfg, nil
}

// splitFieldKey splits "fields.<col>.<name>"; the column name may itself
// contain dots. '-' in name is read as '_' (Flink's max-past, null-rate).
func splitFieldKey(k string) (col, name string, ok bool) {
	rest, ok := strings.CutPrefix(k, "fields.")
	dot := strings.LastIndexByte(rest, '.')
	if !ok || dot <= 0 || dot == len(rest)-1 {
		return "", "", false
	}
	return rest[:dot], strings.ReplaceAll(rest[dot+1:], "-", "_"), true
}

// findColumn finds col by exact name, else by a unique case-insensitive match.
func findColumn(cols []types.Column, col string) int {
	found := -1
	for i, c := range cols {
		if c.Name == col {
			return i
		}
		if strings.EqualFold(c.Name, col) {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

func sortedNames(m map[string]opt) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func kindName(k kind) string {
	if k == kindSequence {
		return "sequence"
	}
	return "random"
}

// invalid is the 22023 error for a bad value of o; cause, if any, becomes
// the detail.
func invalid(o opt, cause error) error {
	e := pgerr.New(pgerr.InvalidParameterValue, "invalid value for datagen option %q: %q", o.key, o.val)
	if cause != nil {
		e = e.WithDetail("%s", cause.Error())
		e.Cause = cause
	}
	return e
}

// bad is a 22023 error about option o with a reason.
func bad(o opt, reason string) error {
	return pgerr.New(pgerr.InvalidParameterValue, "invalid value for datagen option %q: %q", o.key, o.val).WithDetail("%s", reason)
}

// parse reads o as text input of type t.
func parse(o opt, t types.T) (types.Value, error) {
	v, err := types.ParseText(o.val, t, &types.DefaultFormat)
	if err != nil {
		return nil, invalid(o, err)
	}
	return v, nil
}

// parseInt reads o as an integer-domain value of t (integers, date and
// timestamps as their int64 storage); infinite dates and times are refused.
func parseInt(o opt, t types.T) (int64, error) {
	v, err := parse(o, t)
	if err != nil {
		return 0, err
	}
	switch x := v.(type) {
	case int64:
		return x, nil
	case types.DateValue:
		if x == types.DateInfinity || x == types.DateMinusInfinity {
			return 0, bad(o, "must be finite")
		}
		return int64(x), nil
	case types.TimestampValue:
		if x == types.TimestampInfinity || x == types.TimestampMinusInfinity {
			return 0, bad(o, "must be finite")
		}
		return int64(x), nil
	}
	return 0, pgerr.Internal("datagen: unexpected value %T for %s", v, t)
}

// parseFloat reads o as a finite float of t.
func parseFloat(o opt, t types.T) (float64, error) {
	v, err := parse(o, t)
	if err != nil {
		return 0, err
	}
	f := v.(float64)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, bad(o, "must be finite")
	}
	return f, nil
}

// parseInterval reads o as an interval; months are refused when noMonths
// (a month has no fixed length), and negative parts always.
func parseInterval(o opt, noMonths bool) (types.IntervalValue, error) {
	v, err := parse(o, types.TInterval)
	if err != nil {
		return types.IntervalValue{}, err
	}
	iv := v.(types.IntervalValue)
	if iv.Months < 0 || iv.Days < 0 || iv.Micros < 0 {
		return iv, bad(o, "must not be negative")
	}
	if noMonths && iv.Months != 0 {
		return iv, bad(o, "must not contain months or years")
	}
	return iv, nil
}

// intervalMicros is iv's length counting a month as 30 days and a day as 24 hours.
func intervalMicros(iv types.IntervalValue) int64 {
	return (int64(iv.Months)*30+int64(iv.Days))*microsPerDay + iv.Micros
}

const microsPerDay = 86_400_000_000
