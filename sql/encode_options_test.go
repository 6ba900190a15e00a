package sql

import (
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// TestEncodeOptions: FORMAT ... ENCODE AVRO (key = value, ...) adds its
// options to the WITH options of CREATE SOURCE, CREATE TABLE and CREATE
// SINK; a key given in both places is a syntax error.
func TestEncodeOptions(t *testing.T) {
	for _, q := range []string{
		"CREATE SOURCE s (v int) WITH (connector = 'kafka', topic = 't') FORMAT PLAIN ENCODE AVRO (schema.registry = 'http://h:8081')",
		"CREATE TABLE t (v int PRIMARY KEY) WITH (connector = 'kafka', topic = 't') FORMAT UPSERT ENCODE AVRO (schema.registry = 'http://h:8081')",
		"CREATE SINK k FROM v WITH (connector = 'kafka', topic = 't') FORMAT PLAIN ENCODE AVRO (schema.registry = 'http://h:8081', force_append_only = 'true')",
	} {
		st := parseOne(t, q)
		var opts Options
		var encode string
		switch {
		case st.Ext.Source != nil:
			opts, encode = st.Ext.Source.Options, st.Ext.Source.Encode
		case st.Ext.TableConnector != nil:
			opts, encode = st.Ext.TableConnector.Options, st.Ext.TableConnector.Encode
		case st.Ext.Sink != nil:
			opts, encode = st.Ext.Sink.Options, st.Ext.Sink.Encode
		}
		if v, _ := opts.Get("schema.registry"); v != "http://h:8081" || encode != "AVRO" {
			t.Errorf("%q: encode %q, options %+v", q, encode, opts)
		}
		if v, _ := opts.Get("topic"); v != "t" {
			t.Errorf("%q: options %+v", q, opts)
		}
	}
	for _, q := range []string{
		"CREATE SOURCE s (v int) WITH (connector = 'kafka', schema.registry = 'a') FORMAT PLAIN ENCODE AVRO (schema.registry = 'b')",
		"CREATE SOURCE s (v int) WITH (connector = 'kafka') FORMAT PLAIN ENCODE AVRO (schema.registry)",
		"CREATE SINK k FROM v WITH (connector = 'kafka') FORMAT PLAIN ENCODE AVRO (",
	} {
		if _, err := Parse(q); pgerr.CodeOf(err) != pgerr.SyntaxError {
			t.Errorf("%q: %v, want a syntax error", q, err)
		}
	}
}

// TestCreateTableNoColumns: a connector table may leave its columns out
// (a CDC table reads them from the upstream catalog).
func TestCreateTableNoColumns(t *testing.T) {
	for _, q := range []string{
		"CREATE TABLE t FROM pg TABLE 'public.orders'",
		"CREATE TABLE IF NOT EXISTS t WITH (connector = 'postgres-cdc', table.name = 'public.orders')",
	} {
		st := parseOne(t, q)
		c := st.Ext.TableConnector
		if st.AST == nil || c == nil {
			t.Fatalf("%q: %+v", q, st.Ext)
		}
		if n := len(columnNames(t, st)); n != 0 {
			t.Errorf("%q: %d columns", q, n)
		}
	}
	if _, err := Parse("CREATE TABLE t WITH (fillfactor = 70)"); err == nil {
		t.Error("CREATE TABLE t WITH (fillfactor = 70) parsed")
	}
}
