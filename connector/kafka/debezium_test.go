package kafka

import (
	"encoding/base64"
	"encoding/json"
	"testing"
)

// TestDebeziumDecimal: Kafka Connect's Decimal (big-endian two's
// complement unscaled bytes) against values worked out by hand.
func TestDebeziumDecimal(t *testing.T) {
	for _, c := range []struct {
		bytes []byte
		scale int
		want  string
	}{
		{[]byte{0x00}, 2, "0.00"},
		{[]byte{0x7f}, 0, "127"},
		{[]byte{0x80}, 0, "-128"},
		{[]byte{0x00, 0x80}, 1, "12.8"},
		{[]byte{0xff}, 3, "-0.001"},
		{[]byte{0xed, 0x29, 0x79}, 2, "-12345.67"},
		{[]byte{0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, 4, "1844674407370955.1616"},
	} {
		got, err := decimalText(base64.StdEncoding.EncodeToString(c.bytes), c.scale)
		if err != nil || string(got) != `"`+c.want+`"` {
			t.Errorf("%x scale %d: %s %v, want %s", c.bytes, c.scale, got, err, c.want)
		}
	}
}

// TestDebeziumSemanticTypes: time types convert to the text streamsql
// reads; Json strings become JSON values.
func TestDebeziumSemanticTypes(t *testing.T) {
	for _, c := range []struct {
		name, v, want string
	}{
		{"io.debezium.time.Date", "-1", `"1969-12-31"`},
		{"io.debezium.time.Timestamp", "1704164645123", `"2024-01-02 03:04:05.123"`},
		{"io.debezium.time.NanoTimestamp", "1704164645123456789", `"2024-01-02 03:04:05.123456789"`},
		{"io.debezium.time.MicroTime", "3723000001", `"01:02:03.000001"`},
		{"io.debezium.data.VariableScaleDecimal", `{"scale": 3, "value": "AeI="}`, `"0.482"`},
		{"io.debezium.data.Json", `"{\"a\": [1, 2]}"`, `{"a": [1, 2]}`},
	} {
		got, err := convertField(connectSchema{Name: c.name}, json.RawMessage(c.v))
		if err != nil || string(got) != c.want {
			t.Errorf("%s %s: %s %v, want %s", c.name, c.v, got, err, c.want)
		}
	}
	// Events the format cannot apply are errors, not rows.
	for _, v := range []string{`{"op": "c", "after": null}`, `{"op": "d"}`, `{"after": {"id": 1}}`, `{"op": "t"}`, `[1]`} {
		if _, _, _, err := debeziumMessage(nil, []byte(v)); err == nil {
			t.Errorf("%s: no error", v)
		}
	}
}
