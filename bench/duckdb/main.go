//go:build duckdb_arrow

// Command duckdb runs the batch benchmarks of streamsql's exec package
// (GROUP BY over 10M rows and 10k keys, a hash join of 1M by 100k rows,
// ORDER BY over 1M rows) next to DuckDB on the same data, at 1 and 2
// threads, alternating the two engines, and prints the wall and CPU time
// of each run and their medians. It is a module of its own so that the
// server does not depend on DuckDB (cgo).
//
//	cd bench/duckdb && go run -tags duckdb_arrow . -reps 5
//
// DuckDB's results are read through its Arrow interface (build tag
// duckdb_arrow).
package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/duckdb/duckdb-go/v2"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// table is one data set: int8 columns k and v, in 4096-row batches.
type table struct {
	name string
	k, v []int64
}

func gen(name string, n, keys int, seed int64) *table {
	r := rand.New(rand.NewSource(seed))
	t := &table{name: name, k: make([]int64, n), v: make([]int64, n)}
	for i := range t.k {
		t.k[i] = int64(r.Intn(keys))
		t.v[i] = int64(r.Intn(1000000))
	}
	return t
}

var cols2 = []types.Column{{Name: "k", Type: types.TInt8}, {Name: "v", Type: types.TInt8}}

// batches cuts t into Arrow batches (k, v).
func (t *table) batches() []arrow.RecordBatch {
	schema := types.ArrowSchema(cols2)
	var out []arrow.RecordBatch
	for s := 0; s < len(t.k); s += exec.DefaultBatchSize {
		e := min(s+exec.DefaultBatchSize, len(t.k))
		kb, vb := array.NewInt64Builder(memory.DefaultAllocator), array.NewInt64Builder(memory.DefaultAllocator)
		kb.AppendValues(t.k[s:e], nil)
		vb.AppendValues(t.v[s:e], nil)
		out = append(out, array.NewRecordBatch(schema, []arrow.Array{kb.NewArray(), vb.NewArray()}, int64(e-s)))
	}
	return out
}

// memNode is an exec.Node over in-memory batches (what a table scan of a
// snapshot hands on).
type memNode struct{ bs []arrow.RecordBatch }

func (m *memNode) Columns() []types.Column { return cols2 }
func (m *memNode) Children() []exec.Node   { return nil }
func (m *memNode) Explain() string         { return "Memory" }
func (m *memNode) Open(*exec.Context) (exec.Iterator, error) {
	return &memIter{bs: m.bs}, nil
}

type memIter struct{ bs []arrow.RecordBatch }

func (it *memIter) Next() (arrow.RecordBatch, error) {
	if len(it.bs) == 0 {
		return nil, nil
	}
	b := it.bs[0]
	it.bs = it.bs[1:]
	return b, nil
}
func (it *memIter) Close() error { return nil }

func ref(i int) expr.Expr { return &expr.ColRef{Idx: i, T: types.TInt8} }

// plans builds the three streamsql plans.
func plans(agg, big, small, srt *table) (map[string]exec.Node, error) {
	cnt, err := exec.ResolveAggregate("count", nil, true)
	if err != nil {
		return nil, err
	}
	sum, err := exec.ResolveAggregate("sum", []types.T{types.TInt8}, false)
	if err != nil {
		return nil, err
	}
	avg, err := exec.ResolveAggregate("avg", []types.T{types.TInt8}, false)
	if err != nil {
		return nil, err
	}
	return map[string]exec.Node{
		"groupby": &exec.HashAgg{Input: &memNode{agg.batches()}, GroupBy: []expr.Expr{ref(0)},
			Aggs: []exec.AggCall{{Fn: cnt}, {Fn: sum, Args: []expr.Expr{ref(1)}}, {Fn: avg, Args: []expr.Expr{ref(1)}}},
			Cols: []types.Column{{Name: "k", Type: types.TInt8}, {Name: "count", Type: types.TInt8}, {Name: "sum", Type: types.TNumeric}, {Name: "avg", Type: types.TNumeric}}},
		"join": &exec.HashJoin{Left: &memNode{big.batches()}, Right: &memNode{small.batches()}, Kind: exec.InnerJoin,
			LeftKeys: []expr.Expr{ref(0)}, RightKeys: []expr.Expr{ref(0)}, Cols: append(append([]types.Column(nil), cols2...), cols2...)},
		"orderby": &exec.Sort{Input: &memNode{srt.batches()}, Keys: []exec.SortKey{{E: ref(1)}}},
	}, nil
}

// duckSQL are the same queries for DuckDB, whose results are read as Arrow
// record batches (its Arrow interface), as the streamsql plans return
// theirs.
var duckSQL = map[string]string{
	"groupby": "SELECT k, count(*), sum(v), avg(v) FROM t10m GROUP BY k",
	"join":    "SELECT * FROM big JOIN small ON big.k = small.k",
	"orderby": "SELECT * FROM t1m ORDER BY v",
}

// runDuck runs q through DuckDB's Arrow interface and counts the rows.
func runDuck(conn *sql.Conn, q string) (int, error) {
	rows := 0
	err := conn.Raw(func(dc any) error {
		ar, err := duckdb.NewArrowFromConn(dc.(driver.Conn))
		if err != nil {
			return err
		}
		rdr, err := ar.QueryContext(context.Background(), q)
		if err != nil {
			return err
		}
		defer rdr.Release()
		for rdr.Next() {
			rows += int(rdr.RecordBatch().NumRows())
		}
		return rdr.Err()
	})
	return rows, err
}

var wantRows = map[string]int{"groupby": 10_000, "join": 1_000_000, "orderby": 1_000_000}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type sample struct{ wall, cpu time.Duration }

func runOurs(n exec.Node, threads int) (int, error) {
	runtime.GOMAXPROCS(threads)
	ctx := &exec.Context{Eval: &expr.Context{Ctx: context.Background()}, Workers: threads}
	it, err := n.Open(ctx)
	if err != nil {
		return 0, err
	}
	defer it.Close()
	rows := 0
	for {
		b, err := it.Next()
		if err != nil {
			return 0, err
		}
		if b == nil {
			return rows, nil
		}
		rows += int(b.NumRows())
	}
}

func load(conn *sql.Conn, ts ...*table) error {
	for _, t := range ts {
		if _, err := conn.ExecContext(context.Background(), "CREATE TABLE "+t.name+" (k BIGINT, v BIGINT)"); err != nil {
			return err
		}
		err := conn.Raw(func(dc any) error {
			ap, err := duckdb.NewAppenderFromConn(dc.(driver.Conn), "", t.name)
			if err != nil {
				return err
			}
			for i := range t.k {
				if err := ap.AppendRow(t.k[i], t.v[i]); err != nil {
					return err
				}
			}
			return ap.Close()
		})
		if err != nil {
			return fmt.Errorf("load %s: %w", t.name, err)
		}
	}
	return nil
}

func main() {
	reps := flag.Int("reps", 5, "runs of each (query, engine, threads)")
	only := flag.String("only", "groupby,join,orderby", "queries to run")
	flag.Parse()
	if err := run(*reps, strings.Split(*only, ",")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(reps int, queries []string) error {
	agg := gen("t10m", 10_000_000, 10_000, 1)
	big := gen("big", 1_000_000, 100_000, 2)
	small := &table{name: "small", k: make([]int64, 100_000), v: make([]int64, 100_000)}
	for i := range small.k {
		small.k[i], small.v[i] = int64(i), int64(i)
	}
	srt := gen("t1m", 1_000_000, 1000, 3)
	ours, err := plans(agg, big, small, srt)
	if err != nil {
		return err
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(context.Background())
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := load(conn, agg, big, small, srt); err != nil {
		return err
	}
	runtime.GC()
	fmt.Printf("GOMAXPROCS at start %d, NumCPU %d\n", runtime.GOMAXPROCS(0), runtime.NumCPU())
	res := map[string][]sample{}
	for rep := 0; rep < reps; rep++ {
		for _, q := range queries {
			for _, threads := range []int{1, 2} {
				// Alternate which engine goes first.
				engines := []string{"streamsql", "duckdb"}
				if rep%2 == 1 {
					engines = []string{"duckdb", "streamsql"}
				}
				for _, eng := range engines {
					runtime.GC()
					w0, c0 := time.Now(), cpuNow()
					var rows int
					switch eng {
					case "streamsql":
						rows, err = runOurs(ours[q], threads)
					default:
						runtime.GOMAXPROCS(2)
						if _, err = conn.ExecContext(context.Background(), fmt.Sprintf("SET threads = %d", threads)); err == nil {
							w0, c0 = time.Now(), cpuNow()
							rows, err = runDuck(conn, duckSQL[q])
						}
					}
					s := sample{time.Since(w0), cpuNow() - c0}
					if err != nil {
						return fmt.Errorf("%s %s: %w", eng, q, err)
					}
					if rows != wantRows[q] {
						return fmt.Errorf("%s %s: %d rows, want %d", eng, q, rows, wantRows[q])
					}
					key := fmt.Sprintf("%s/%s/%d", q, eng, threads)
					res[key] = append(res[key], s)
					fmt.Printf("rep %d %-28s wall %8.1f ms  cpu %8.1f ms\n", rep, key, ms(s.wall), ms(s.cpu))
				}
			}
		}
	}
	fmt.Printf("\n%-10s %-8s %12s %12s %12s %12s %8s\n", "query", "threads", "ours wall", "ours cpu", "duck wall", "duck cpu", "ratio")
	for _, q := range queries {
		for _, threads := range []int{1, 2} {
			o := median(res[fmt.Sprintf("%s/streamsql/%d", q, threads)])
			d := median(res[fmt.Sprintf("%s/duckdb/%d", q, threads)])
			fmt.Printf("%-10s %-8d %10.1fms %10.1fms %10.1fms %10.1fms %7.2fx\n", q, threads, ms(o.wall), ms(o.cpu), ms(d.wall), ms(d.cpu), float64(o.wall)/float64(d.wall))
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// median takes the median wall and the median CPU, separately.
func median(s []sample) sample {
	if len(s) == 0 {
		return sample{}
	}
	w := make([]time.Duration, len(s))
	c := make([]time.Duration, len(s))
	for i, x := range s {
		w[i], c[i] = x.wall, x.cpu
	}
	slices.Sort(w)
	slices.Sort(c)
	return sample{w[len(w)/2], c[len(c)/2]}
}
