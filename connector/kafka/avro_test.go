package kafka

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/streamsql/streamsql/connector/internal/avroconv"
	"github.com/streamsql/streamsql/connector/srtest"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

const metricSchema = `{"type":"record","name":"metric","namespace":"dc","fields":[
	{"name":"host","type":"string"},
	{"name":"region","type":["null","string"],"default":null},
	{"name":"cpu","type":"double"},
	{"name":"mem","type":"long"},
	{"name":"ts","type":{"type":"long","logicalType":"timestamp-micros"}},
	{"name":"ok","type":"boolean"}]}`

// avroMsg frames a record of schema id, marshalled by hamba/avro (a
// producer independent of our encoder).
func avroMsg(t testing.TB, schema string, id int, v any) []byte {
	t.Helper()
	body, err := avro.Marshal(avro.MustParse(schema), v)
	if err != nil {
		t.Fatal(err)
	}
	return append(avroconv.AppendFrame(nil, id), body...)
}

func metric(host string, region any, cpu float64, mem, tsMicros int64) map[string]any {
	return map[string]any{"host": host, "region": region, "cpu": cpu, "mem": mem,
		"ts": microsTime(tsMicros), "ok": true}
}

// TestReadAvro reads framed Avro through the registry: values, NULLs,
// schema resolution, bad messages counted and recorded, the registry
// asked once per id.
func TestReadAvro(t *testing.T) {
	reg := srtest.Start()
	defer reg.Close()
	id := reg.Register("t-value", metricSchema)
	_, addr := cluster(t, 1)
	p := producer(t, addr)
	produce(t, p,
		&kgo.Record{Value: avroMsg(t, metricSchema, id, metric("a", map[string]any{"string": "eu"}, 0.5, 7, 1_000_001))},
		&kgo.Record{Value: avroMsg(t, metricSchema, id, metric("b", nil, -1, 1<<40, 0))},
		&kgo.Record{Value: []byte(`{"host": "json"}`)},                                  // no magic byte
		&kgo.Record{Value: avroconv.AppendFrame(nil, 4242)},                             // unknown schema id
		&kgo.Record{Value: avroMsg(t, metricSchema, id, metric("c", nil, 1, 1, 1))[:9]}, // truncated
		&kgo.Record{Value: avroMsg(t, metricSchema, id, metric("d", nil, 2, 2, 2))},
	)
	c := cols(t, "host text, region varchar, cpu double precision, mem bigint, ts timestamptz, extra int")
	s := mustOpen(t, c, map[string]string{"properties.bootstrap.server": addr, "topic": "t",
		"schema.registry": reg.URL()}, "PLAIN ENCODE AVRO")
	if err := s.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	ru := start(t, s, nil)
	ru.wait("3 rows, 3 errors", func(rows []string, errs []error) bool { return len(rows) == 3 && len(errs) == 3 })
	rows, _, _, errs := ru.snapshot()
	want := []string{"a|eu|0.5|7|1970-01-01 00:00:01.000001+00|NULL", "b|NULL|-1|1099511627776|1970-01-01 00:00:00+00|NULL",
		"d|NULL|2|2|1970-01-01 00:00:00.000002+00|NULL"}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	var all []string
	for _, e := range errs {
		all = append(all, e.Error())
	}
	for _, w := range []string{"offset 2: not a schema-registry Avro message: first byte is 0x7b", "offset 3: the schema registry has no schema with id 4242",
		"offset 4, column cpu: truncated Avro message"} {
		if !strings.Contains(strings.Join(all, "\n"), w) {
			t.Errorf("errors lack %q:\n%s", w, strings.Join(all, "\n"))
		}
	}
	st := ru.r.Status()
	if st.Partitions[0].BadRows != 3 || st.Partitions[0].Rows != 3 || !strings.Contains(st.Partitions[0].LastError, "truncated") {
		t.Errorf("status %+v", st)
	}
	if n := s.avro.reg.Requests(); n != 2 { // the schema once, the unknown id once
		t.Errorf("%d registry requests, want 2", n)
	}
}

// TestAvroRegistryDown: a registry that does not answer fails Check; at
// run time the reader waits in state retrying, skipping nothing, and
// reads on once the registry is back.
func TestAvroRegistryDown(t *testing.T) {
	reg := srtest.Start()
	defer reg.Close()
	id := reg.Register("t-value", metricSchema)
	_, addr := cluster(t, 1)
	produce(t, producer(t, addr), &kgo.Record{Value: avroMsg(t, metricSchema, id, metric("a", nil, 1, 2, 3))})
	c := cols(t, "host text, mem bigint")
	opts := map[string]string{"properties.bootstrap.server": addr, "topic": "t", "schema.registry": reg.URL()}
	reg.SetDown(true)
	s := mustOpen(t, c, opts, "PLAIN ENCODE AVRO")
	wantCode(t, s.Check(context.Background()), pgerr.ConnectionException)
	ru := start(t, s, nil)
	ru.waitStatus("retrying", func(st Status) bool {
		return st.State == "retrying" && strings.Contains(st.LastError, "schema registry")
	})
	reg.SetDown(false)
	ru.waitRows(1)
	if rows, _, _, errs := ru.snapshot(); rows[0] != "a|2" || len(errs) != 0 {
		t.Errorf("rows %v, errors %v", rows, errs)
	}
	ru.waitStatus("running", func(st Status) bool { return st.State == "running" })
	// A registry that is gone (connection refused) is also an 08000.
	reg.Close()
	s2 := mustOpen(t, c, opts, "PLAIN ENCODE AVRO")
	wantCode(t, s2.Check(context.Background()), pgerr.ConnectionException)
}

// TestAvroOptions: the registry option is required with ENCODE AVRO and
// refused without it; other encodings are refused by name.
func TestAvroOptions(t *testing.T) {
	c := cols(t, "id bigint")
	base := func(kv ...string) map[string]string {
		m := map[string]string{"properties.bootstrap.server": "x:1", "topic": "t"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		opts   map[string]string
		format string
		want   string
	}{
		{base(), "PLAIN ENCODE AVRO", `needs the option "schema.registry"`},
		{base("schema.registry", "ftp://x"), "PLAIN ENCODE AVRO", `invalid value for option "schema.registry"`},
		{base("schema.registry", "http://x:1", "schema.registry.usernam", "u"), "PLAIN ENCODE AVRO", `unrecognized kafka option "schema.registry.usernam"`},
		{base("schema.registry", "http://x:1", "schema.registry.username", "u"), "PLAIN ENCODE AVRO", "go together"},
		{base("schema.registry", "http://x:1"), "JSON", `unrecognized kafka option "schema.registry"`},
		{base("schema.registry", "http://x:1"), "DEBEZIUM ENCODE PROTOBUF", "cannot read FORMAT DEBEZIUM ENCODE PROTOBUF"},
	} {
		_, err := Open(c, tc.opts, tc.format)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%v, %s) = %v, want %q", tc.opts, tc.format, err, tc.want)
		}
	}
	if _, err := Open(c, base("schema.registry", "http://x:1", "schema.registry.username", "u", "schema.registry.password", "p"), "UPSERT ENCODE AVRO"); err != nil {
		t.Error(err)
	}
}

func microsTime(us int64) time.Time { return time.UnixMicro(us).UTC() }
