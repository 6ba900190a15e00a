package datagen

import (
	"math"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Defaults of dates and times (see the package documentation).
var (
	defaultStart = int64(1704067200) * 1_000_000 // 2024-01-01 00:00:00 UTC in µs
	defaultEnd   = int64(1735689600) * 1_000_000 // 2025-01-01 00:00:00 UTC in µs
)

// newField resolves column i's options into its generation rule and the
// number of rows it allows (-1 = unbounded).
func newField(i int, c types.Column, o *fieldOpts, cfg *Config) (field, int64, error) {
	f := field{t: c.Type}
	switch c.Type.Kind {
	case types.Int2, types.Int4, types.Int8, types.Date, types.Timestamp, types.TimestampTZ:
		f.st = stInt
	case types.Float4, types.Float8:
		f.st = stFloat
	case types.Numeric:
		f.st = stNumeric
	case types.Text, types.Varchar, types.Bpchar:
		f.st = stText
	case types.Bool:
		f.st = stBool
	case types.Interval:
		f.st = stInterval
	case types.JSON, types.JSONB:
		f.st = stPick
	case types.UUID:
		f.st = stUUID
	default:
		return f, 0, pgerr.Unsupported("datagen cannot generate column %q of type %s", c.Name, c.Type)
	}

	// Seeds and NULLs.
	f.seed = mix64(cfg.Seed ^ mix64(uint64(i)+0x64617461))
	if s, ok := o.get("seed"); ok {
		v, err := strconv.ParseUint(strings.TrimSpace(s.val), 10, 64)
		if err != nil {
			return f, 0, invalid(s, nil)
		}
		f.seed = mix64(v ^ 0x736565640a)
	}
	f.nullSeed = mix64(f.seed ^ 0x6e756c6c)
	if s, ok := o.get("null_rate"); ok {
		r, err := strconv.ParseFloat(strings.TrimSpace(s.val), 64)
		if err != nil || !(r >= 0 && r <= 1) {
			return f, 0, bad(s, "must be a number between 0 and 1")
		}
		f.nullCut = uint64(r * (1 << 64))
		if r >= 1 {
			f.nullCut = math.MaxUint64
		}
	}

	// Kind: values imply random.
	_, hasValues := o.m["values"]
	f.kind = kindRandom
	if c.Type.Kind == types.Date || c.Type.IsTimestamp() {
		f.kind = kindSequence
	}
	if k, ok := o.get("kind"); ok {
		switch strings.ToLower(strings.TrimSpace(k.val)) {
		case "random":
			f.kind = kindRandom
		case "sequence":
			if hasValues {
				return f, 0, bad(k, "values need kind random")
			}
			f.kind = kindSequence
		default:
			return f, 0, bad(k, "expected random or sequence")
		}
	} else if hasValues {
		f.kind = kindRandom
	}

	if hasValues {
		return f, -1, f.setValues(o)
	}
	if f.kind == kindRandom {
		return f, -1, f.setRandom(c, o)
	}
	return f.setSequence(c, o, cfg)
}

// setValues parses fields.<col>.values into picks of the column's storage.
func (f *field) setValues(o *fieldOpts) error {
	v, _ := o.get("values")
	items := strings.Split(v.val, ",")
	for _, it := range items {
		item := opt{key: v.key, val: strings.TrimSpace(it)}
		x, err := parse(item, f.t)
		if err != nil {
			return err
		}
		switch f.st {
		case stInt:
			n, err := parseInt(item, f.t)
			if err != nil {
				return err
			}
			f.ints = append(f.ints, n)
		case stFloat:
			f.floats = append(f.floats, x.(float64))
		case stBool:
			f.bools = append(f.bools, x.(bool))
		case stInterval:
			f.ivs = append(f.ivs, x.(types.IntervalValue))
		case stNumeric:
			f.strs = append(f.strs, types.FormatText(x, f.t, nil))
		default: // text, json, jsonb, uuid: stored as their (normalized) text
			f.strs = append(f.strs, x.(string))
		}
	}
	f.picks = len(items)
	return nil
}

// setRandom resolves kind random without values.
func (f *field) setRandom(c types.Column, o *fieldOpts) error {
	switch f.st {
	case stInt:
		lo, hi := int64(0), typeMax(f.t)
		switch f.t.Kind {
		case types.Date:
			lo, hi = defaultStart/microsPerDay, defaultEnd/microsPerDay-1
		case types.Timestamp, types.TimestampTZ:
			lo, hi = defaultStart, defaultEnd
		}
		return f.setRange(c, o, lo, hi, func(p opt) (int64, error) { return parseInt(p, f.t) })
	case stFloat:
		f.flo, f.fhi = 0, 1
		for _, b := range []struct {
			name string
			dst  *float64
		}{{"min", &f.flo}, {"max", &f.fhi}} {
			if p, ok := o.get(b.name); ok {
				v, err := parseFloat(p, f.t)
				if err != nil {
					return err
				}
				*b.dst = v
			}
		}
		if f.flo > f.fhi {
			return pgerr.New(pgerr.InvalidParameterValue, "datagen: min is greater than max for column %q", c.Name)
		}
	case stNumeric:
		dec, err := f.numericScale(o, "min", "max")
		if err != nil {
			return err
		}
		return f.setRange(c, o, 0, min(100*pow10(f.scale), typeMax(f.t)), dec)
	case stText:
		f.length = 10
		if n := int(f.t.Typmod - 4); f.t.Typmod >= 5 {
			f.length = min(f.length, n)
			if f.t.Kind == types.Bpchar {
				f.length, f.pad = n, n
			}
		}
		if p, ok := o.get("length"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(p.val))
			if err != nil || n < 0 || n > 1<<20 {
				return bad(p, "must be an integer between 0 and 1048576")
			}
			if f.t.Typmod >= 5 && n > int(f.t.Typmod-4) {
				return bad(p, "longer than the column's type "+f.t.String())
			}
			f.length = n
		}
	case stInterval:
		f.lo, f.hi = 0, 3_600_000_000
		for _, b := range []struct {
			name string
			dst  *int64
		}{{"min", &f.lo}, {"max", &f.hi}} {
			if p, ok := o.get(b.name); ok {
				iv, err := parseInterval(p, false)
				if err != nil {
					return err
				}
				*b.dst = intervalMicros(iv)
			}
		}
		if f.lo > f.hi {
			return pgerr.New(pgerr.InvalidParameterValue, "datagen: min is greater than max for column %q", c.Name)
		}
	case stPick:
		return pgerr.New(pgerr.InvalidParameterValue, "datagen needs fields.%s.values for column %q of type %s", c.Name, c.Name, f.t)
	}
	return nil
}

// setRange reads min and max (defaults lo, hi) into f.lo, f.hi.
func (f *field) setRange(c types.Column, o *fieldOpts, lo, hi int64, read func(opt) (int64, error)) error {
	f.lo, f.hi = lo, hi
	for _, b := range []struct {
		name string
		dst  *int64
	}{{"min", &f.lo}, {"max", &f.hi}} {
		if p, ok := o.get(b.name); ok {
			v, err := read(p)
			if err != nil {
				return err
			}
			*b.dst = v
		}
	}
	if f.lo > f.hi {
		return pgerr.New(pgerr.InvalidParameterValue, "datagen: min is greater than max for column %q", c.Name)
	}
	return nil
}

// setSequence resolves kind sequence; it returns the rows the sequence allows.
func (f *field) setSequence(c types.Column, o *fieldOpts, cfg *Config) (field, int64, error) {
	read := func(p opt) (int64, error) { return parseInt(p, f.t) }
	start, step, end := int64(1), int64(1), typeMax(f.t)
	switch f.st {
	case stInt:
		switch f.t.Kind {
		case types.Date, types.Timestamp, types.TimestampTZ:
			start, step = defaultStart, int64(1_000_000)
			if cfg.RowsPerSecond > 0 {
				step = max(1, int64(math.Round(1e6/cfg.RowsPerSecond)))
			}
			if f.t.Kind == types.Date {
				start, step = start/microsPerDay, 1
			}
			if p, ok := o.get("step"); ok {
				iv, err := parseInterval(p, true)
				if err != nil {
					return *f, 0, err
				}
				step = intervalMicros(iv)
				if f.t.Kind == types.Date {
					if iv.Micros != 0 {
						return *f, 0, bad(p, "must be whole days for a date")
					}
					step = int64(iv.Days)
				}
			}
			if p, ok := o.m["max_past"]; ok && f.t.Kind != types.Date {
				o.used["max_past"] = true
				iv, err := parseInterval(p, true)
				if err != nil {
					return *f, 0, err
				}
				f.jitter = intervalMicros(iv)
			}
		}
	case stFloat:
		f.fstart, f.fstep = 1, 1
		var fend float64
		hasEnd := false
		for _, b := range []struct {
			name string
			dst  *float64
		}{{"start", &f.fstart}, {"step", &f.fstep}, {"end", &fend}} {
			if p, ok := o.get(b.name); ok {
				v, err := parseFloat(p, f.t)
				if err != nil {
					return *f, 0, err
				}
				*b.dst = v
				hasEnd = hasEnd || b.name == "end"
			}
		}
		if !(f.fstep > 0) {
			return *f, 0, pgerr.New(pgerr.InvalidParameterValue, "datagen: step must be greater than zero for column %q", c.Name)
		}
		if !hasEnd {
			return *f, -1, nil
		}
		if fend < f.fstart {
			return *f, 0, pgerr.New(pgerr.InvalidParameterValue, "datagen: end is less than start for column %q", c.Name)
		}
		// The tolerance keeps an end that the steps reach up to rounding
		// (start 0.1, step 0.1, end 0.3: three rows).
		if n := math.Floor((fend-f.fstart)/f.fstep+1e-9) + 1; n < 1<<62 {
			return *f, int64(n), nil
		}
		return *f, -1, nil
	case stNumeric:
		dec, err := f.numericScale(o, "start", "step", "end")
		if err != nil {
			return *f, 0, err
		}
		read = dec
		start, step = pow10(f.scale), pow10(f.scale)
	case stText:
		read = func(p opt) (int64, error) { return parseInt(p, types.TInt8) }
	case stInterval:
		f.ivStep = types.IntervalValue{Micros: 1_000_000}
		if p, ok := o.get("start"); ok {
			v, err := parse(p, types.TInterval)
			if err != nil {
				return *f, 0, err
			}
			f.ivStart = v.(types.IntervalValue)
		}
		if p, ok := o.get("step"); ok {
			iv, err := parseInterval(p, false)
			if err != nil {
				return *f, 0, err
			}
			if iv == (types.IntervalValue{}) {
				return *f, 0, bad(p, "must be greater than zero")
			}
			f.ivStep = iv
		}
		return *f, -1, nil
	default:
		return *f, 0, pgerr.New(pgerr.InvalidParameterValue, "datagen: kind sequence is not supported for column %q of type %s", c.Name, f.t)
	}
	for _, b := range []struct {
		name string
		dst  *int64
	}{{"start", &start}, {"end", &end}} {
		if p, ok := o.get(b.name); ok {
			v, err := read(p)
			if err != nil {
				return *f, 0, err
			}
			*b.dst = v
		}
	}
	if f.t.Kind != types.Date && !f.t.IsTimestamp() {
		if p, ok := o.get("step"); ok {
			v, err := read(p)
			if err != nil {
				return *f, 0, err
			}
			step = v
		}
	}
	if step <= 0 {
		return *f, 0, pgerr.New(pgerr.InvalidParameterValue, "datagen: step must be greater than zero for column %q", c.Name)
	}
	if end < start {
		return *f, 0, pgerr.New(pgerr.InvalidParameterValue, "datagen: end is less than start for column %q", c.Name)
	}
	if f.st == stText && f.t.Typmod >= 5 {
		// varchar(n), char(n): every number must fit; char(n) pads.
		w := int(f.t.Typmod - 4)
		if len(strconv.FormatInt(start, 10)) > w || len(strconv.FormatInt(end, 10)) > w {
			return *f, 0, pgerr.New(pgerr.InvalidParameterValue, "datagen: sequence numbers of column %q do not fit type %s", c.Name, f.t).
				WithHint("Set fields.%s.start and fields.%s.end.", c.Name, c.Name)
		}
		if f.t.Kind == types.Bpchar {
			f.pad = w
		}
	}
	f.start, f.step = start, step
	n := (uint64(end)-uint64(start))/uint64(step) + 1
	if n == 0 || n > math.MaxInt64 {
		return *f, -1, nil
	}
	return *f, int64(n), nil
}

// numericScale sets f.scale (the declared scale, else the most fraction
// digits among the named options) and returns a reader of numeric options
// as counts of 10^-scale.
func (f *field) numericScale(o *fieldOpts, names ...string) (func(opt) (int64, error), error) {
	if f.t.Typmod >= 4 {
		f.scale = int((f.t.Typmod - 4) & 0xffff)
	} else {
		for _, n := range names {
			if p, ok := o.m[n]; ok {
				v, err := parse(p, f.t)
				if err != nil {
					return nil, err
				}
				f.scale = max(f.scale, int(-v.(*apd.Decimal).Exponent))
			}
		}
	}
	if f.scale > 18 {
		return nil, pgerr.Unsupported("datagen cannot generate numeric values with more than 18 fraction digits")
	}
	return func(p opt) (int64, error) {
		v, err := parse(p, f.t)
		if err != nil {
			return 0, err
		}
		d := v.(*apd.Decimal)
		if d.Form != apd.Finite {
			return 0, bad(p, "must be finite")
		}
		var q apd.Decimal
		if _, err := apd.BaseContext.WithPrecision(60).Quantize(&q, d, -int32(f.scale)); err != nil || !q.Coeff.IsInt64() {
			return 0, bad(p, "out of range for datagen (at most 18 digits)")
		}
		n := q.Coeff.Int64()
		if q.Negative {
			n = -n
		}
		return n, nil
	}, nil
}

// typeMax is the largest int64-domain value of an integer-like type; for
// numeric(p,s) the largest count of 10^-s units.
func typeMax(t types.T) int64 {
	switch t.Kind {
	case types.Int2:
		return math.MaxInt16
	case types.Int4:
		return math.MaxInt32
	case types.Int8:
		return math.MaxInt64
	case types.Date:
		return math.MaxInt32 - 1 // MaxInt32 is infinity
	case types.Numeric:
		if t.Typmod >= 4 {
			if p := int((t.Typmod - 4) >> 16); p <= 18 {
				return pow10(p) - 1
			}
		}
	}
	return math.MaxInt64 - 1 // timestamps: MaxInt64 is infinity
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}
