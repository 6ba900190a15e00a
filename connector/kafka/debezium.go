package kafka

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strconv"
	"time"

	"github.com/streamsql/streamsql/pgerr"
)

// FORMAT DEBEZIUM ENCODE JSON: each message value is a Debezium change
// event, {"before": {...}, "after": {...}, "op": "c"|"r"|"u"|"d", ...},
// either bare (value.converter.schemas.enable = false) or wrapped as
// {"schema": {...}, "payload": {event}}. Creates, snapshot reads and
// updates upsert the row of "after"; deletes delete the key of "before";
// a tombstone (no value: Debezium's follow-up of a delete) deletes the
// key of the message key (bare or wrapped) again, which changes nothing.
// With the schema wrapper, fields of Debezium's and Kafka Connect's
// semantic types are converted to the text streamsql reads: dates (days),
// timestamps (milli/micro/nano seconds), times, Decimal (base64 unscaled
// bytes with the schema's scale), VariableScaleDecimal, and Json (a string
// holding JSON becomes the JSON value). Without it, values are taken as
// they are (Debezium's time.precision.mode = connect or string modes and
// decimal.handling.mode = string or double read best).

// debeziumEnvelope is a Debezium event (the payload when wrapped).
type debeziumEnvelope struct {
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
	Op     string          `json:"op"`
}

// debeziumWrapper is the schemas.enable = true form.
type debeziumWrapper struct {
	Schema  *connectSchema  `json:"schema"`
	Payload json.RawMessage `json:"payload"`
}

// connectSchema is the part of a Kafka Connect schema the conversion
// needs.
type connectSchema struct {
	Type       string            `json:"type"`
	Name       string            `json:"name"`
	Field      string            `json:"field"`
	Parameters map[string]string `json:"parameters"`
	Fields     []connectSchema   `json:"fields"`
}

func isNull(m json.RawMessage) bool {
	m = bytes.TrimSpace(m)
	return len(m) == 0 || bytes.Equal(m, []byte("null"))
}

// debeziumMessage turns a message of a DEBEZIUM ENCODE JSON source into
// what the FORMAT UPSERT path reads: the JSON object of the row to upsert
// (value), or, for a delete, tombstone with key the JSON object holding
// the key columns. A message that is not a Debezium event (no "op", an
// event without the row it needs) is a 22P02 error.
func debeziumMessage(key, value []byte) (row, keyRow []byte, tombstone bool, err error) {
	if value == nil {
		return nil, unwrapKey(key), true, nil
	}
	bad := func(format string, args ...any) error {
		return pgerr.New(pgerr.InvalidTextRepresentation, "not a Debezium change event: "+format, args...).
			WithHint("FORMAT DEBEZIUM ENCODE JSON reads Debezium's JSON envelope (before, after, op), with or without the schema wrapper.")
	}
	var w debeziumWrapper
	if err := json.Unmarshal(value, &w); err != nil {
		return nil, nil, false, bad("%v", err)
	}
	event := value
	var rowSchema map[string]connectSchema
	if w.Schema != nil && !isNull(w.Payload) {
		event = w.Payload
		rowSchema = afterSchema(w.Schema)
	}
	var e debeziumEnvelope
	if err := json.Unmarshal(event, &e); err != nil {
		return nil, nil, false, bad("%v", err)
	}
	switch e.Op {
	case "c", "r", "u":
		if isNull(e.After) {
			return nil, nil, false, bad("an %q event without \"after\"", e.Op)
		}
		row, err := convertRow(e.After, rowSchema)
		return row, nil, false, err
	case "d":
		if isNull(e.Before) {
			return nil, nil, false, bad("a delete without \"before\" (is the upstream table's replica identity NOTHING?)")
		}
		row, err := convertRow(e.Before, rowSchema)
		return nil, row, true, err
	case "t":
		return nil, nil, false, pgerr.Unsupported("a Debezium truncate event cannot be applied to the table")
	case "":
		return nil, nil, false, bad("no \"op\"")
	}
	return nil, nil, false, bad("unknown op %q", e.Op)
}

// unwrapKey returns the payload of a schema-wrapped message key.
func unwrapKey(key []byte) []byte {
	var w debeziumWrapper
	if json.Unmarshal(key, &w) == nil && w.Schema != nil && !isNull(w.Payload) {
		return w.Payload
	}
	return key
}

// afterSchema returns the fields of the envelope schema's "after" (or
// "before") struct by name.
func afterSchema(s *connectSchema) map[string]connectSchema {
	for _, f := range s.Fields {
		if (f.Field == "after" || f.Field == "before") && f.Type == "struct" {
			m := make(map[string]connectSchema, len(f.Fields))
			for _, c := range f.Fields {
				m[c.Field] = c
			}
			return m
		}
	}
	return nil
}

// convertRow converts the semantic-typed fields of a row object; without
// a schema, or with none to convert, it returns the row as it is.
func convertRow(row json.RawMessage, schema map[string]connectSchema) ([]byte, error) {
	convert := false
	for _, f := range schema {
		convert = convert || semantic(f)
	}
	if !convert {
		return row, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(row, &m); err != nil {
		return nil, pgerr.New(pgerr.InvalidTextRepresentation, "a Debezium row is not a JSON object: %v", err)
	}
	for k, v := range m {
		f, ok := schema[k]
		if !ok || isNull(v) || !semantic(f) {
			continue
		}
		c, err := convertField(f, v)
		if err != nil {
			return nil, pgerr.New(pgerr.InvalidTextRepresentation, "Debezium field %q (%s): %v", k, f.Name, err)
		}
		m[k] = c
	}
	return json.Marshal(m)
}

// semantic reports whether a field's value needs converting.
func semantic(f connectSchema) bool {
	switch f.Name {
	case "io.debezium.time.Date", "org.apache.kafka.connect.data.Date",
		"io.debezium.time.Timestamp", "org.apache.kafka.connect.data.Timestamp",
		"io.debezium.time.MicroTimestamp", "io.debezium.time.NanoTimestamp",
		"io.debezium.time.Time", "io.debezium.time.MicroTime", "io.debezium.time.NanoTime",
		"org.apache.kafka.connect.data.Time",
		"org.apache.kafka.connect.data.Decimal", "io.debezium.data.VariableScaleDecimal",
		"io.debezium.data.Json":
		return true
	}
	return false
}

// convertField converts one semantic-typed value to a JSON string (or,
// for Json, the JSON value it holds).
func convertField(f connectSchema, v json.RawMessage) (json.RawMessage, error) {
	str := func(s string) (json.RawMessage, error) { return json.Marshal(s) }
	num := func() (int64, error) { return strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64) }
	switch f.Name {
	case "io.debezium.time.Date", "org.apache.kafka.connect.data.Date":
		d, err := num()
		if err != nil {
			return nil, err
		}
		return str(time.Unix(d*86400, 0).UTC().Format("2006-01-02"))
	case "io.debezium.time.Timestamp", "org.apache.kafka.connect.data.Timestamp",
		"io.debezium.time.MicroTimestamp", "io.debezium.time.NanoTimestamp":
		n, err := num()
		if err != nil {
			return nil, err
		}
		var t time.Time
		switch f.Name {
		case "io.debezium.time.MicroTimestamp":
			t = time.UnixMicro(n)
		case "io.debezium.time.NanoTimestamp":
			t = time.Unix(0, n)
		default:
			t = time.UnixMilli(n)
		}
		return str(t.UTC().Format("2006-01-02 15:04:05.999999999"))
	case "io.debezium.time.Time", "io.debezium.time.MicroTime", "io.debezium.time.NanoTime", "org.apache.kafka.connect.data.Time":
		n, err := num()
		if err != nil {
			return nil, err
		}
		d := time.Duration(n) * time.Millisecond
		switch f.Name {
		case "io.debezium.time.MicroTime":
			d = time.Duration(n) * time.Microsecond
		case "io.debezium.time.NanoTime":
			d = time.Duration(n)
		}
		return str(time.Unix(0, 0).UTC().Add(d).Format("15:04:05.999999999"))
	case "org.apache.kafka.connect.data.Decimal":
		var b64 string
		if err := json.Unmarshal(v, &b64); err != nil {
			return v, nil // decimal.handling.mode = double or string
		}
		scale, _ := strconv.Atoi(f.Parameters["scale"])
		return decimalText(b64, scale)
	case "io.debezium.data.VariableScaleDecimal":
		var x struct {
			Scale int    `json:"scale"`
			Value string `json:"value"`
		}
		if err := json.Unmarshal(v, &x); err != nil {
			return nil, err
		}
		return decimalText(x.Value, x.Scale)
	case "io.debezium.data.Json":
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return v, nil
		}
		if !json.Valid([]byte(s)) {
			return nil, pgerr.New(pgerr.InvalidTextRepresentation, "invalid JSON %q", s)
		}
		return json.RawMessage(s), nil
	}
	return v, nil
}

// decimalText renders base64 big-endian two's complement unscaled bytes
// with scale as a decimal JSON string.
func decimalText(b64 string, scale int) (json.RawMessage, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, err
	}
	n := new(big.Int).SetBytes(raw)
	if len(raw) > 0 && raw[0]&0x80 != 0 { // negative
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(raw))))
	}
	s := n.String()
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	if scale > 0 {
		for len(s) <= scale {
			s = "0" + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if neg {
		s = "-" + s
	}
	return json.Marshal(s)
}
