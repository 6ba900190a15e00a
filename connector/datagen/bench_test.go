package datagen

import (
	"testing"

	"github.com/streamsql/streamsql/types"
)

// BenchmarkNext measures rows/s of a typical metrics source.
func BenchmarkNext(b *testing.B) {
	cols := []types.Column{
		{Name: "host", Type: types.TText}, {Name: "cpu", Type: types.TFloat8},
		{Name: "ts", Type: types.TTimestampTZ}, {Name: "id", Type: types.TInt8},
		{Name: "note", Type: types.TVarchar}, {Name: "price", Type: types.TNumeric},
	}
	cfg, err := ConfigFromOptions(cols, map[string]string{
		"fields.host.values": "a,b,c,d", "fields.cpu.max": "100", "fields.id.kind": "sequence",
		"fields.ts.max_past": "5 seconds", "fields.price.max": "999.99",
	})
	if err != nil {
		b.Fatal(err)
	}
	g := New(cfg)
	b.ResetTimer()
	rows := 0
	for b.Loop() {
		rec, err := g.Next(DefaultBatchRows)
		if err != nil {
			b.Fatal(err)
		}
		rows += int(rec.NumRows())
		rec.Release()
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}
