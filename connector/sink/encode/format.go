package encode

import (
	"strings"

	"github.com/streamsql/streamsql/connector/internal/avroconv"

	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Kind is a sink format's envelope.
type Kind uint8

// The envelopes.
const (
	Plain    Kind = iota // one record per inserted row
	Upsert               // key and row; tombstone on delete
	Debezium             // before/after/op envelope
)

// Encoding is how a record's fields are written.
type Encoding uint8

// The encodings.
const (
	JSON Encoding = iota
	CSV
	Parquet // files only: the file sink writes it with pqarrow
	Avro    // Kafka: schema-registry framed Avro (avro.go)
)

func (e Encoding) String() string {
	switch e {
	case CSV:
		return "CSV"
	case Parquet:
		return "PARQUET"
	case Avro:
		return "AVRO"
	}
	return "JSON"
}

func (k Kind) String() string {
	switch k {
	case Upsert:
		return "UPSERT"
	case Debezium:
		return "DEBEZIUM"
	}
	return "PLAIN"
}

// Format is a validated FORMAT ... ENCODE ... clause with its options.
type Format struct {
	Kind     Kind
	Encoding Encoding
	// ForceAppendOnly (force_append_only = 'true'): a PLAIN format over a
	// query that retracts drops deletes and update_before rows and writes
	// update_after rows as inserts.
	ForceAppendOnly bool
	// Registry is ENCODE AVRO's schema registry (schema.registry options).
	Registry avroconv.RegistryConfig
}

// Options are the WITH options this package reads; every sink connector
// accepts them besides its own.
var Options = []string{"force_append_only", "primary_key"}

// IsOption reports whether key is one of Options or of ENCODE AVRO's
// registry options (Parse refuses those with another encoding).
func IsOption(key string) bool {
	for _, o := range append(Options, avroconv.RegistryOptions...) {
		if o == key {
			return true
		}
	}
	return false
}

// Parse validates spec's FORMAT and ENCODE, the format options, and the
// format against the query (a PLAIN format needs an append-only query or
// force_append_only; UPSERT needs a key). allowed lists the encodings the
// connector (named in messages) writes. Errors are *pgerr.Error naming the clause or option.
func Parse(spec sink.Spec, connector string, allowed ...Encoding) (Format, error) {
	var f Format
	clause := spec.Format
	if spec.Encode != "" {
		clause += " ENCODE " + spec.Encode
	}
	switch {
	case spec.Format == "":
		return f, pgerr.New(pgerr.InvalidParameterValue, "CREATE SINK needs a FORMAT clause").
			WithHint("For example FORMAT JSON, FORMAT UPSERT ENCODE JSON or FORMAT DEBEZIUM ENCODE JSON.")
	case (spec.Format == "JSON" || spec.Format == "CSV" || spec.Format == "PARQUET") && spec.Encode == "":
		f.Kind, f.Encoding = Plain, encodingOf(spec.Format)
	case spec.Format == "PLAIN" && (spec.Encode == "JSON" || spec.Encode == "CSV" || spec.Encode == "PARQUET"):
		f.Kind, f.Encoding = Plain, encodingOf(spec.Encode)
	case spec.Format == "UPSERT" && spec.Encode == "JSON":
		f.Kind = Upsert
	case spec.Format == "DEBEZIUM" && (spec.Encode == "JSON" || spec.Encode == ""):
		f.Kind = Debezium
	case (spec.Format == "PLAIN" || spec.Format == "UPSERT") && spec.Encode == "AVRO":
		f.Kind, f.Encoding = Plain, Avro
		if spec.Format == "UPSERT" {
			f.Kind = Upsert
		}
	case spec.Format == "DEBEZIUM" && spec.Encode == "AVRO":
		f.Kind, f.Encoding = Debezium, Avro
	case spec.Encode == "PROTOBUF":
		return f, pgerr.Unsupported("ENCODE %s is not supported", spec.Encode).
			WithHint("Sinks write ENCODE JSON, AVRO (kafka), CSV (files) or PARQUET (files).")
	default:
		return f, pgerr.New(pgerr.InvalidParameterValue, "FORMAT %s is not a sink format", clause).
			WithHint("Formats: FORMAT JSON (= PLAIN ENCODE JSON), FORMAT CSV, FORMAT PARQUET, FORMAT UPSERT ENCODE JSON, FORMAT DEBEZIUM ENCODE JSON, FORMAT PLAIN | UPSERT | DEBEZIUM ENCODE AVRO.")
	}
	ok := false
	var names []string
	for _, e := range allowed {
		ok = ok || e == f.Encoding
		names = append(names, e.String())
	}
	if !ok {
		return f, pgerr.Unsupported("the %s sink cannot write FORMAT %s", connector, clause).
			WithHint("It writes ENCODE %s.", strings.Join(names, ", "))
	}
	if f.Encoding == Avro {
		reg, err := avroconv.ParseRegistry(spec.Options, map[string]bool{})
		if err != nil {
			return f, err
		}
		f.Registry = reg
	} else {
		for _, k := range avroconv.RegistryOptions {
			if _, ok := spec.Options[k]; ok {
				return f, pgerr.New(pgerr.InvalidParameterValue, "option %q applies to ENCODE AVRO only, not FORMAT %s", k, clause)
			}
		}
	}
	if v, given := spec.Options["force_append_only"]; given {
		b, err := boolOption("force_append_only", v)
		if err != nil {
			return f, err
		}
		if b && f.Kind != Plain {
			return f, pgerr.New(pgerr.InvalidParameterValue, "force_append_only applies to FORMAT PLAIN (JSON, CSV, PARQUET, AVRO) only, not FORMAT %s", clause)
		}
		f.ForceAppendOnly = b
	}
	switch f.Kind {
	case Plain:
		if !spec.AppendOnly && !f.ForceAppendOnly {
			return f, pgerr.New(pgerr.InvalidObjectDefinition, "the sink's query can retract rows (updates, deletes), which FORMAT %s cannot write", clause).
				WithHint("Use FORMAT UPSERT ENCODE JSON or FORMAT DEBEZIUM ENCODE JSON, or add force_append_only = 'true' to drop the retractions.")
		}
	case Upsert:
		if len(spec.Key) == 0 {
			return f, pgerr.New(pgerr.InvalidObjectDefinition, "FORMAT UPSERT needs a primary key, and the sink's query has none").
				WithHint("Add primary_key = 'col[, col...]' naming the columns that identify a row.")
		}
	}
	return f, nil
}

func encodingOf(word string) Encoding {
	switch word {
	case "CSV":
		return CSV
	case "PARQUET":
		return Parquet
	}
	return JSON
}

// boolOption parses a boolean option value as PostgreSQL does for
// true/false/on/off/1/0.
func boolOption(name, v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "on", "1", "yes", "t":
		return true, nil
	case "false", "off", "0", "no", "f":
		return false, nil
	}
	return false, pgerr.New(pgerr.InvalidParameterValue, "option %s must be true or false, not \"%s\"", name, v)
}

// Key resolves the primary_key option ("a, b": column names of cols, as
// written, matched case-insensitively unless quoted) into column indexes;
// without the option it returns streamKey. Errors are 42703 naming the
// column, or 22023 for an empty or repeated list.
func Key(cols []types.Column, opts map[string]string, streamKey []int) ([]int, error) {
	v, ok := opts["primary_key"]
	if !ok {
		return streamKey, nil
	}
	var key []int
	seen := map[int]bool{}
	for _, part := range strings.Split(v, ",") {
		name := strings.TrimSpace(part)
		if len(name) >= 2 && name[0] == '"' && name[len(name)-1] == '"' {
			name = strings.ReplaceAll(name[1:len(name)-1], `""`, `"`)
		} else {
			name = strings.ToLower(name)
		}
		if name == "" {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "primary_key \"%s\" names no column", v)
		}
		idx := -1
		for i, c := range cols {
			if c.Name == name {
				idx = i
				break
			}
		}
		if idx < 0 {
			return nil, pgerr.New(pgerr.UndefinedColumn, "primary_key column \"%s\" is not a column of the sink's query", name)
		}
		if seen[idx] {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "primary_key names column \"%s\" twice", name)
		}
		seen[idx] = true
		key = append(key, idx)
	}
	return key, nil
}
