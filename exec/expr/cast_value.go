package expr

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Row-at-a-time casts between every pair of types that has a cast.

// castConst casts a constant at bind time. Casts whose result depends on the
// session time zone are checked here but left to run time (see zoneDependent).
func castConst(v types.Value, from, to types.T, explicit bool) (types.Value, error) {
	if v == nil {
		return nil, nil
	}
	return castValue(nil, v, from, to, explicit)
}

// sessionDependentInput reports text input whose meaning depends on the
// session's DateStyle or TimeZone (or, for 'now', its transaction).
func sessionDependentInput(from, to types.T) bool {
	if !from.IsString() {
		return false
	}
	switch to.Kind {
	case types.Date, types.Timestamp, types.TimestampTZ, types.Time:
		return true
	case types.Array:
		return sessionDependentInput(from, *to.Elem)
	}
	return false
}

// intervalStyleInput reports an interval literal whose value depends on
// IntervalStyle: under sql_standard a leading '-' applies to every field
// ('-1 2:03:04'), so it is read when evaluated, as date/time input is.
func intervalStyleInput(k *Const, to types.T) bool {
	s, ok := k.V.(string)
	return ok && k.T.IsString() && to.Kind == types.Interval && strings.HasPrefix(strings.TrimSpace(s), "-")
}

// zoneDependent reports casts whose result depends on the session TimeZone.
func zoneDependent(from, to types.T) bool {
	if from.Kind == types.Array || to.Kind == types.Array {
		if from.Kind == types.Array && to.Kind == types.Array {
			return zoneDependent(*from.Elem, *to.Elem)
		}
		return from.Kind == types.Array && from.Elem.Kind == types.TimestampTZ ||
			to.Kind == types.Array && to.Elem.Kind == types.TimestampTZ
	}
	if from.Kind == types.TimestampTZ {
		return to.Kind != types.TimestampTZ
	}
	if to.Kind == types.TimestampTZ {
		return from.Kind != types.TimestampTZ
	}
	return false
}

func (c *Context) location() *time.Location {
	if c == nil || c.Location == nil {
		return time.UTC
	}
	return c.Location
}

// regResolver is implemented by catalogs that name objects for regclass,
// regtype and regproc text input and output (catalog.Catalog does).
type regResolver interface {
	RegNames(searchPath []string) func(k types.Kind, oid uint32) (string, bool)
	RegOIDs(searchPath []string) func(k types.Kind, name string) (uint32, error)
}

func (c *Context) catalogRegs() (regResolver, bool) {
	if c == nil || c.Catalog == nil {
		return nil, false
	}
	r, ok := c.Catalog.(regResolver)
	return r, ok
}

func (c *Context) formatOptions() *types.FormatOptions {
	o := types.DefaultFormat
	o.Location = c.location()
	if c != nil {
		o.Now = c.Now
	}
	if c != nil && c.Session != nil {
		if v, ok := c.Session.Setting("extra_float_digits"); ok {
			if n, err := strconv.Atoi(v); err == nil {
				o.ExtraFloatDigits = n
			}
		}
		if v, ok := c.Session.Setting("IntervalStyle"); ok {
			o.IntervalStyle = v
		}
		if v, ok := c.Session.Setting("DateStyle"); ok {
			o.DateStyle = v
		}
	}
	// reg* input and output name objects through the catalog, when it can.
	if r, ok := c.catalogRegs(); ok {
		o.Names = r.RegNames(c.searchPath())
		o.OIDs = r.RegOIDs(c.searchPath())
	}
	return &o
}

// parseText parses text input for t with fast paths for the common types.
func parseText(s string, t types.T) (types.Value, error) {
	return parseTextIn(nil, s, t)
}

func parseTextIn(ctx *Context, s string, t types.T) (types.Value, error) {
	switch t.Kind {
	case types.Int2, types.Int4, types.Int8:
		x, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return nil, pgerr.New(pgerr.NumericValueOutOfRange, "value \"%s\" is out of range for type %s", s, t)
			}
			return nil, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type %s: \"%s\"", t, s)
		}
		if (t.Kind == types.Int2 && (x < math.MinInt16 || x > math.MaxInt16)) ||
			(t.Kind == types.Int4 && (x < math.MinInt32 || x > math.MaxInt32)) {
			return nil, pgerr.New(pgerr.NumericValueOutOfRange, "value \"%s\" is out of range for type %s", s, t)
		}
		return x, nil
	case types.Text, types.Unknown, types.Name, types.Char:
		return s, nil
	case types.Varchar, types.Bpchar:
		return applyTypmod(s, t, false)
	}
	return types.ParseText(s, t, ctx.formatOptions())
}

// castValue converts one non-NULL value. ctx may be nil (bind time).
func castValue(ctx *Context, v types.Value, from, to types.T, explicit bool) (types.Value, error) {
	if from.Kind == types.Array && to.Kind == types.Array {
		in, _ := v.([]types.Value)
		out := make([]types.Value, len(in))
		for i, e := range in {
			if e == nil {
				continue
			}
			r, err := castValue(ctx, e, *from.Elem, *to.Elem, explicit)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	if from.Kind == types.Record && to.Kind == types.Record && !from.SameKind(to) {
		return castRecordValue(ctx, v, from, to, explicit)
	}
	if from.SameKind(to) {
		return applyTypmod(v, to, explicit)
	}
	// Text input and output.
	if to.Kind == types.Text || to.Kind == types.Varchar || to.Kind == types.Bpchar || to.Kind == types.Name {
		s := textOf(ctx, v, from)
		if b, ok := v.(bool); ok {
			s = strconv.FormatBool(b) // boolean's cast to text spells the word
		}
		if to.Kind == types.Name && len(s) > 63 {
			s = truncateBytes(s, 63)
		}
		return applyTypmod(s, to, explicit)
	}
	if s, ok := v.(string); ok && from.IsString() {
		if from.Kind == types.Bpchar {
			s = strings.TrimRight(s, " ")
		}
		switch to.Kind {
		case types.RegClass:
			return regclassIn(ctx, s)
		case types.RegType:
			return regtypeIn(ctx, s)
		case types.Char:
			if s == "" {
				return "", nil
			}
			_, n := utf8.DecodeRuneInString(s)
			return s[:n], nil
		}
		return parseTextIn(ctx, s, to)
	}
	switch x := v.(type) {
	case int64:
		return castFromInt(x, from, to)
	case float64:
		return castFromFloat(x, from, to)
	case *apd.Decimal:
		return castFromNumeric(x, to)
	case bool:
		if to.Kind == types.Int4 {
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		}
	case types.DateValue, types.TimestampValue, types.TimeValue, types.IntervalValue:
		return castDatetime(ctx, v, from, to)
	case string:
		switch {
		case from.Kind == types.JSON && to.Kind == types.JSONB:
			return types.ParseText(x, to, ctx.formatOptions())
		case from.Kind == types.JSONB:
			return jsonbToScalar(x, to)
		}
	}
	return nil, pgerr.New(pgerr.CannotCoerce, "cannot cast type %s to %s", from, to)
}

// textOf renders v as text output (bpchar without its padding, as the
// bpchar -> text cast does).
func textOf(ctx *Context, v types.Value, t types.T) string {
	switch t.Kind {
	case types.Bpchar:
		return strings.TrimRight(v.(string), " ")
	case types.RegType:
		if rt, ok := types.FromOID(uint32(v.(int64))); ok {
			return rt.String()
		}
	case types.RegClass:
		if ctx != nil && ctx.Catalog != nil {
			if s, ok := ctx.Catalog.RelationName(uint32(v.(int64)), ctx.searchPath()); ok {
				return s
			}
		}
	}
	return formatValue(v, t, ctx.formatOptions())
}

// outputText is v as its type's output function writes it, where
// PostgreSQL's concat, concat_ws, format and array_to_string use that rather
// than a cast to text: a char(n) keeps its padding.
func outputText(ctx *Context, v types.Value, t types.T) string {
	if t.Kind == types.Bpchar {
		return v.(string)
	}
	return textOf(ctx, v, t)
}

func (c *Context) searchPath() []string {
	if c == nil || c.Session == nil {
		return []string{"public"}
	}
	return c.Session.SearchPath()
}

func truncateBytes(s string, n int) string {
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// applyTypmod applies t's modifier to a value already of t's kind:
// varchar(n)/char(n) length (explicit casts truncate, others fail with
// 22001 unless only spaces are cut), char(n) padding, numeric(p,s) rounding,
// an interval's range and precision.
func applyTypmod(v types.Value, t types.T, explicit bool) (types.Value, error) {
	if t.Typmod < 0 {
		return v, nil
	}
	switch t.Kind {
	case types.Varchar, types.Bpchar:
		s := v.(string)
		n := int(t.Typmod - 4)
		if cnt := utf8.RuneCountInString(s); cnt > n {
			cut := s
			i := 0
			for pos := range s {
				if i == n {
					cut = s[:pos]
					break
				}
				i++
			}
			if !explicit && strings.TrimRight(s[len(cut):], " ") != "" {
				return nil, pgerr.New(pgerr.StringDataRightTruncation, "value too long for type %s", t)
			}
			s = cut
		} else if t.Kind == types.Bpchar && cnt < n {
			s += strings.Repeat(" ", n-cnt)
		}
		return s, nil
	case types.Numeric:
		d, _ := v.(*apd.Decimal)
		if d == nil {
			return v, nil
		}
		return numericTypmod(d, t.Typmod)
	case types.Timestamp, types.TimestampTZ:
		ts := v.(types.TimestampValue)
		return types.TimestampValue(roundMicros(int64(ts), t.Typmod)), nil
	case types.Time:
		return types.TimeValue(roundMicros(int64(v.(types.TimeValue)), t.Typmod)), nil
	case types.Interval:
		return types.AdjustInterval(v.(types.IntervalValue), t.Typmod), nil
	}
	return v, nil
}

// roundMicros rounds a microsecond count to p fractional digits (half up).
func roundMicros(us int64, p int32) int64 {
	if p >= 6 || p < 0 {
		return us
	}
	unit := int64(math.Pow10(int(6 - p)))
	if us >= 0 {
		return (us + unit/2) / unit * unit
	}
	return -((-us + unit/2) / unit * unit)
}

func castFromInt(x int64, from, to types.T) (types.Value, error) {
	switch to.Kind {
	case types.Int2, types.Int4, types.Int8:
		if (to.Kind == types.Int2 && (x < math.MinInt16 || x > math.MaxInt16)) ||
			(to.Kind == types.Int4 && (x < math.MinInt32 || x > math.MaxInt32)) {
			return nil, outOfRange(to)
		}
		return x, nil
	case types.Float4:
		return float64(float32(x)), nil
	case types.Float8:
		return float64(x), nil
	case types.Numeric:
		return numericTypmod(apd.New(x, 0), to.Typmod)
	case types.Bool:
		return x != 0, nil
	case types.Oid, types.RegClass, types.RegType, types.RegProc:
		if from.Kind == types.Int4 || from.Kind == types.Int2 {
			return int64(uint32(int32(x))), nil
		}
		if x < 0 || x > math.MaxUint32 {
			if from.Kind == types.Int8 {
				return nil, pgerr.New(pgerr.NumericValueOutOfRange, "OID out of range")
			}
		}
		return x, nil
	case types.Char:
		return string([]byte{byte(x)}), nil
	}
	return nil, pgerr.New(pgerr.CannotCoerce, "cannot cast type %s to %s", from, to)
}

func castFromFloat(x float64, from, to types.T) (types.Value, error) {
	switch to.Kind {
	case types.Int2, types.Int4, types.Int8:
		r := math.RoundToEven(x)
		if math.IsNaN(r) || r < minOf(to) || r >= -minOf(to) {
			return nil, outOfRange(to)
		}
		return int64(r), nil
	case types.Float4:
		f := float32(x)
		if math.IsInf(float64(f), 0) && !math.IsInf(x, 0) {
			return nil, pgerr.New(pgerr.NumericValueOutOfRange, "value out of range: overflow")
		}
		if f == 0 && x != 0 {
			return nil, pgerr.New(pgerr.NumericValueOutOfRange, "value out of range: underflow")
		}
		return float64(f), nil
	case types.Float8:
		return x, nil
	case types.Numeric:
		d, err := floatToNumeric(x, from.Kind == types.Float4)
		if err != nil {
			return nil, err
		}
		return numericTypmod(d, to.Typmod)
	}
	return nil, pgerr.New(pgerr.CannotCoerce, "cannot cast type %s to %s", from, to)
}

func castFromNumeric(d *apd.Decimal, to types.T) (types.Value, error) {
	switch to.Kind {
	case types.Int2, types.Int4, types.Int8:
		if d.Form != apd.Finite {
			if d.Form == apd.Infinite {
				return nil, pgerr.New(pgerr.FeatureNotSupported, "cannot convert infinity to %s", to)
			}
			return nil, pgerr.New(pgerr.FeatureNotSupported, "cannot convert NaN to %s", to)
		}
		var r apd.Decimal
		if _, err := roundCtx.RoundToIntegralValue(&r, d); err != nil {
			return nil, outOfRange(to)
		}
		x, err := r.Int64()
		if err != nil {
			return nil, outOfRange(to)
		}
		return castFromInt(x, types.TInt8, to)
	case types.Float4, types.Float8:
		// PostgreSQL reads numeric_out's text with float8in/float4in: a
		// finite value that becomes infinite or zero there is out of range
		s, bits, name := numericString(d), 64, "double precision"
		if to.Kind == types.Float4 {
			bits, name = 32, "real"
		}
		f, err := strconv.ParseFloat(s, bits)
		if d.Form == apd.Finite && (math.IsInf(f, 0) || f == 0 && !d.IsZero()) {
			return nil, pgerr.New(pgerr.NumericValueOutOfRange, "\"%s\" is out of range for type %s", s, name)
		}
		if err != nil && !math.IsInf(f, 0) {
			return nil, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type %s: \"%s\"", name, s)
		}
		if to.Kind == types.Float4 {
			return castFromFloat(f, types.TFloat8, to)
		}
		return f, nil
	case types.Numeric:
		return numericTypmod(d, to.Typmod)
	}
	return nil, pgerr.New(pgerr.CannotCoerce, "cannot cast type numeric to %s", to)
}

// floatToNumeric converts as PostgreSQL does: through the shortest decimal
// with DBL_DIG (15) or FLT_DIG (6) significant digits.
func floatToNumeric(x float64, single bool) (*apd.Decimal, error) {
	switch {
	case math.IsNaN(x):
		return &apd.Decimal{Form: apd.NaN}, nil
	case math.IsInf(x, 1):
		return &apd.Decimal{Form: apd.Infinite}, nil
	case math.IsInf(x, -1):
		return &apd.Decimal{Form: apd.Infinite, Negative: true}, nil
	}
	digits := 15
	if single {
		digits = 6
	}
	d, _, err := apd.NewFromString(strconv.FormatFloat(x, 'e', digits-1, 64))
	if err != nil {
		return nil, err
	}
	var r apd.Decimal
	r.Reduce(d)
	if r.Exponent > 0 {
		// keep integral values integral: 1e+20 -> 100000000000000000000
		_, _ = quantize(&r, &r, 0)
	}
	return &r, nil
}

// regclassIn resolves a relation name through the catalog.
func regclassIn(ctx *Context, s string) (types.Value, error) {
	if x, err := strconv.ParseInt(s, 10, 64); err == nil {
		return x, nil
	}
	if ctx == nil || ctx.Catalog == nil {
		return nil, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", s)
	}
	oid, err := ctx.Catalog.RelationOID(s, ctx.searchPath())
	if err != nil {
		return nil, err
	}
	return int64(oid), nil
}

// regtypeIn resolves a type name.
func regtypeIn(ctx *Context, s string) (types.Value, error) {
	if x, err := strconv.ParseInt(s, 10, 64); err == nil {
		return x, nil
	}
	if ctx != nil && ctx.Catalog != nil {
		oid, err := ctx.Catalog.TypeOID(s)
		if err != nil {
			return nil, err
		}
		return int64(oid), nil
	}
	t, err := types.FromName(s, nil, 0)
	if err != nil {
		return nil, err
	}
	return int64(t.OID()), nil
}
