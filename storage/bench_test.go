package storage

import (
	"fmt"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// Benchmarks (run one at a time with -benchtime=1x; they write to a temp dir):
//
//	go test ./storage -run '^$' -bench Load10M -benchtime=1x
//	go test ./storage -run '^$' -bench SingleRow
//	go test ./storage -run '^$' -bench Scan10M -benchtime=1x

func int8Def(oid uint32) TableDef {
	return TableDef{OID: oid, TableName: "big", Columns: []types.Column{{Name: "a", Type: types.TInt8}, {Name: "b", Type: types.TInt8}}}
}

// int8Batch builds rows (i, 2i) for i in [from, from+n).
func int8Batch(from, n int64) arrow.RecordBatch {
	a := array.NewInt64Builder(mem)
	b := array.NewInt64Builder(mem)
	a.Reserve(int(n))
	b.Reserve(int(n))
	for i := from; i < from+n; i++ {
		a.UnsafeAppend(i)
		b.UnsafeAppend(2 * i)
	}
	return array.NewRecordBatch(types.ArrowSchema(int8Def(0).Columns), []arrow.Array{a.NewArray(), b.NewArray()}, n)
}

const (
	bigRows   = 10_000_000
	batchRows = 64 << 10
)

// load inserts bigRows rows in batchRows batches, building each batch first
// when fresh (else reusing one batch).
func load(b *testing.B, tb *Table, fresh bool) {
	one := int8Batch(0, batchRows)
	for from := int64(0); from < bigRows; from += batchRows {
		n := min(batchRows, bigRows-from)
		rec := one.NewSlice(0, n)
		if fresh {
			b.StopTimer()
			rec = int8Batch(from, n)
			b.StartTimer()
		}
		if _, err := tb.Insert(ctx, rec); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoad10M(b *testing.B) {
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		s := mustOpen(b, dir)
		tb, _ := s.CreateTable(int8Def(1))
		load(b, tb, false)
		b.StopTimer()
		st := s.Stats()
		b.ReportMetric(float64(st.Fsyncs), "fsyncs")
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(bigRows)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
}

func BenchmarkRecover10M(b *testing.B) {
	dir := b.TempDir()
	s := mustOpen(b, dir)
	tb, _ := s.CreateTable(int8Def(1))
	load(b, tb, false)
	s.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := mustOpen(b, dir)
		if n := s.Table(1).RowCount(); n != bigRows {
			b.Fatalf("%d rows", n)
		}
		s.Close()
	}
}

func BenchmarkScan10M(b *testing.B) {
	s := mustOpen(b, b.TempDir())
	defer s.Close()
	tb, _ := s.CreateTable(int8Def(1))
	load(b, tb, true)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var sum int64
		var rows int
		for _, c := range tb.Snapshot().Chunks {
			for _, col := range c.Rec.Columns() {
				for _, v := range col.(*array.Int64).Int64Values() {
					sum += v
				}
			}
			rows += int(c.Rec.NumRows())
		}
		if rows != bigRows || sum != 3*(bigRows-1)*bigRows/2 {
			b.Fatalf("rows %d sum %d", rows, sum)
		}
	}
	b.ReportMetric(float64(bigRows*16)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// BenchmarkSingleRow does 10k single-row inserts into one table from 1 or
// 8 writers and reports fsyncs per commit.
func BenchmarkSingleRow(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			const total = 10_000
			for i := 0; i < b.N; i++ {
				s := mustOpen(b, b.TempDir())
				tb, _ := s.CreateTable(kvDef(1, true))
				var wg sync.WaitGroup
				for w := 0; w < writers; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for k := int64(w); k < total; k += int64(writers) {
							if _, err := tb.Insert(ctx, seq(k, k+1)); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				st := s.Stats()
				b.ReportMetric(float64(st.Fsyncs)/float64(st.Commits), "fsyncs/commit")
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(total*(i+1)), "µs/insert")
				s.Close()
			}
		})
	}
}

// BenchmarkInsert times one INSERT (durable on return) of 1 or 1000 rows
// into a table with a primary key, from one writer: the write path whose
// cost LSNs and retention must not raise (lsn_bench_test.go has the
// retained variant).
func BenchmarkInsert(b *testing.B) {
	for _, rows := range []int64{1, 1000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			s := mustOpen(b, b.TempDir())
			defer s.Close()
			tb, _ := s.CreateTable(kvDef(1, true))
			benchInserts(b, tb, rows, nil)
		})
	}
}

// benchInserts inserts b.N batches of rows rows, calling every (if not
// nil) after each.
func benchInserts(b *testing.B, tb *Table, rows int64, every func(i int)) {
	recs := make([]arrow.RecordBatch, 64)
	for i := range recs {
		recs[i] = seq(0, rows)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%len(recs) == 0 {
			b.StopTimer()
			for j := range recs {
				recs[j] = seq(int64(i+j)*rows, int64(i+j+1)*rows)
			}
			b.StartTimer()
		}
		if _, err := tb.Insert(ctx, recs[i%len(recs)]); err != nil {
			b.Fatal(err)
		}
		if every != nil {
			every(i)
		}
	}
}
