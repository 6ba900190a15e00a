package engine

import (
	"context"
	"strings"
	"testing"
)

// TestClusterTableImages: the images of a server's tables load into
// another server's empty tables of the same definitions (a new
// coordinator), replacing what they held; an image is reused while its
// table is not written, and a new one is taken (another name) after a
// write; a table without an image is emptied.
func TestClusterTableImages(t *testing.T) {
	const ddl = "CREATE TABLE a (id int8 PRIMARY KEY, s text, x float8); CREATE TABLE b (k int4)"
	e1, s1 := open(t, t.TempDir())
	t.Cleanup(func() { e1.Close() })
	if _, _, err := run(t, s1, ddl); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, s1, "INSERT INTO a SELECT g, 'r' || g, g / 3.0 FROM generate_series(1, 5000) g; DELETE FROM a WHERE id % 7 = 0; UPDATE a SET s = NULL WHERE id % 5 = 0"); err != nil {
		t.Fatal(err)
	}
	imgs, err := e1.ClusterTableImages(nil)
	if err != nil || len(imgs) != 2 {
		t.Fatalf("images: %d, %v", len(imgs), err)
	}
	prev := map[uint32]TableImage{}
	for _, img := range imgs {
		if !img.Exact || !strings.HasPrefix(img.Name, strings.Split(img.Name, ".")[0]+".") {
			t.Fatalf("image %+v", img.Name)
		}
		img.Data = nil
		prev[img.OID] = img
	}
	again, err := e1.ClusterTableImages(prev)
	if err != nil || again[0].Data != nil || again[0].Name != imgs[0].Name {
		t.Fatalf("an unwritten table's image is not reused: %v %v", again[0].Name, err)
	}
	if _, _, err := run(t, s1, "INSERT INTO a VALUES (100000, 'new', 1)"); err != nil {
		t.Fatal(err)
	}
	after, err := e1.ClusterTableImages(prev)
	if err != nil || after[0].Data == nil || after[0].Name == imgs[0].Name {
		t.Fatalf("a written table's image is reused: %v %v", after[0].Name, err)
	}

	e2, s2 := open(t, t.TempDir())
	t.Cleanup(func() { e2.Close() })
	if _, _, err := run(t, s2, ddl); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, s2, "INSERT INTO a VALUES (-1, 'gone', 0); INSERT INTO b VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	images := map[uint32][]byte{after[0].OID: after[0].Data}
	tables, rows, err := e2.LoadClusterTables(context.Background(), images)
	if err != nil || tables != 1 || rows != 5000-714+1 {
		t.Fatalf("load: %d tables, %d rows, %v", tables, rows, err)
	}
	const q = "SELECT count(*), count(s), sum(id), sum(x)::numeric(20,3) FROM a"
	want, _, err := run(t, s1, q)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := run(t, s2, q)
	if err != nil || strings.Join(got, ";") != strings.Join(want, ";") {
		t.Fatalf("loaded %q, %v; want %q", got, err, want)
	}
	if got, _, err := run(t, s2, "SELECT count(*) FROM b"); err != nil || strings.Join(got, ";") != "0" {
		t.Fatalf("a table without an image: %q %v, want emptied", got, err)
	}
}

// BenchmarkClusterTableImage: the image of a table of 1 M rows (int8,
// int8, int8, text), as a cluster checkpoint takes it after a write.
func BenchmarkClusterTableImage(b *testing.B) {
	e, err := Open(Config{DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	s, err := e.NewSession("tester", "db", nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.runReplay(context.Background(), "CREATE TABLE a (id int8 PRIMARY KEY, auction int8, price int8, channel text); "+
		"INSERT INTO a SELECT g, g % 97, (g::int8 * 7919) % 1000, 'ch' || (g % 7) FROM generate_series(1, 1000000) g"); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var size int
	for range b.N {
		imgs, err := e.ClusterTableImages(nil)
		if err != nil {
			b.Fatal(err)
		}
		size = len(imgs[0].Data)
	}
	b.ReportMetric(float64(size), "bytes/image")
}
