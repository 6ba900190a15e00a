package datagen

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

func TestOptionErrors(t *testing.T) {
	cols := []types.Column{
		col(t, "host", "text"), col(t, "cpu", "double precision"), col(t, "ts", "timestamptz"),
		col(t, "n", "integer"), col(t, "amt", "numeric(4,2)"), col(t, "v", "varchar(3)"), col(t, "ok", "boolean"),
	}
	cases := []struct {
		opts map[string]string
		code pgerr.Code
		msg  string // substring of the message or detail
	}{
		{map[string]string{"rowz": "1"}, pgerr.InvalidParameterValue, `unrecognized datagen option "rowz"`},
		{map[string]string{"rows": "-1"}, pgerr.InvalidParameterValue, `option "rows": "-1"`},
		{map[string]string{"rows": "ten"}, pgerr.InvalidParameterValue, `option "rows"`},
		{map[string]string{"rows_per_second": "-5"}, pgerr.InvalidParameterValue, `"rows_per_second"`},
		{map[string]string{"seed": "-1"}, pgerr.InvalidParameterValue, `"seed"`},
		{map[string]string{"fields.nope.min": "1"}, pgerr.InvalidParameterValue, `names no column`},
		{map[string]string{"fields.n": "1"}, pgerr.InvalidParameterValue, `unrecognized datagen option`},
		{map[string]string{"fields.n.kind": "walk"}, pgerr.InvalidParameterValue, `expected random or sequence`},
		{map[string]string{"fields.n.min": "x"}, pgerr.InvalidParameterValue, `invalid input syntax for type integer: "x"`},
		{map[string]string{"fields.n.max": "3000000000"}, pgerr.InvalidParameterValue, `out of range for type integer`},
		{map[string]string{"fields.n.min": "5", "fields.n.max": "4"}, pgerr.InvalidParameterValue, `min is greater than max`},
		{map[string]string{"fields.cpu.min": "NaN"}, pgerr.InvalidParameterValue, `must be finite`},
		{map[string]string{"fields.n.start": "1"}, pgerr.InvalidParameterValue, `does not apply to column "n"`},
		{map[string]string{"fields.n.frobnicate": "1"}, pgerr.InvalidParameterValue, `does not apply`},
		{map[string]string{"fields.n.kind": "sequence", "fields.n.min": "1"}, pgerr.InvalidParameterValue, `does not apply`},
		{map[string]string{"fields.n.kind": "sequence", "fields.n.step": "0"}, pgerr.InvalidParameterValue, `step must be greater than zero`},
		{map[string]string{"fields.n.kind": "sequence", "fields.n.start": "5", "fields.n.end": "4"}, pgerr.InvalidParameterValue, `end is less than start`},
		{map[string]string{"fields.n.kind": "sequence", "fields.n.values": "1,2"}, pgerr.InvalidParameterValue, `values need kind random`},
		{map[string]string{"fields.n.values": "1,,2"}, pgerr.InvalidParameterValue, `invalid input syntax for type integer: ""`},
		{map[string]string{"fields.ts.step": "1 month"}, pgerr.InvalidParameterValue, `must not contain months`},
		{map[string]string{"fields.ts.step": "-1 second"}, pgerr.InvalidParameterValue, `must not be negative`},
		{map[string]string{"fields.ts.step": "0 seconds"}, pgerr.InvalidParameterValue, `step must be greater than zero`},
		{map[string]string{"fields.ts.start": "infinity"}, pgerr.InvalidParameterValue, `must be finite`},
		{map[string]string{"fields.ts.max_past": "soon"}, pgerr.InvalidParameterValue, `"fields.ts.max_past"`},
		{map[string]string{"fields.amt.max": "100"}, pgerr.InvalidParameterValue, `numeric field overflow`},
		{map[string]string{"fields.v.length": "4"}, pgerr.InvalidParameterValue, `longer than`},
		{map[string]string{"fields.v.values": "abcd"}, pgerr.InvalidParameterValue, `value too long for type character varying(3)`},
		{map[string]string{"fields.host.length": "-1"}, pgerr.InvalidParameterValue, `"fields.host.length"`},
		{map[string]string{"fields.host.null_rate": "1.5"}, pgerr.InvalidParameterValue, `between 0 and 1`},
		{map[string]string{"fields.v.kind": "sequence"}, pgerr.InvalidParameterValue, `do not fit type character varying(3)`},
		{map[string]string{"fields.v.kind": "sequence", "fields.v.start": "-100", "fields.v.end": "5"}, pgerr.InvalidParameterValue, `do not fit`},
		{map[string]string{"fields.ok.kind": "sequence"}, pgerr.InvalidParameterValue, `kind sequence is not supported`},
	}
	for _, c := range cases {
		_, err := ConfigFromOptions(cols, c.opts)
		wantCode(t, err, c.code)
		e := pgerr.As(err)
		if !strings.Contains(e.Message+" "+e.Detail, c.msg) {
			t.Errorf("%v: error %q (detail %q), want it to mention %q", c.opts, e.Message, e.Detail, c.msg)
		}
	}
}

func TestUnsupportedTypes(t *testing.T) {
	for _, typ := range []string{"bytea", "time", "integer[]", "oid"} {
		_, err := ConfigFromOptions([]types.Column{col(t, "x", typ)}, nil)
		wantCode(t, err, pgerr.FeatureNotSupported)
	}
	_, err := ConfigFromOptions([]types.Column{col(t, "x", "jsonb")}, nil)
	wantCode(t, err, pgerr.InvalidParameterValue) // needs values
	_, err = ConfigFromOptions([]types.Column{col(t, "x", "uuid")}, map[string]string{"fields.x.kind": "sequence"})
	wantCode(t, err, pgerr.InvalidParameterValue) // random only
	_, err = ConfigFromOptions([]types.Column{col(t, "x", "uuid")}, map[string]string{"fields.x.length": "5"})
	wantCode(t, err, pgerr.InvalidParameterValue) // nothing to bound
}

func TestOptionSpellings(t *testing.T) {
	cols := []types.Column{col(t, "Host", "text"), col(t, "a.b", "integer")}
	cfg := mustConfig(t, cols, map[string]string{
		"connector": "datagen", "number-of-rows": "12", "datagen.rows.per.second": "50", "seed": "9",
		"fields.host.values": "x", "fields.a.b.kind": "sequence", "fields.a.b.null-rate": "0",
	})
	if cfg.Rows != 12 || cfg.Limit() != 12 || cfg.RowsPerSecond != 50 || cfg.Seed != 9 {
		t.Fatalf("config %+v", cfg)
	}
	rows := drain(t, cfg, 100, 100)
	if len(rows) != 12 || rows[11][0] != "x" || rows[11][1] != int64(12) {
		t.Fatalf("rows %v", rows)
	}
}
