package windowfuzz

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The views' shapes: a random windowed aggregation (spec), its SQL, and
// the rows the tables hold.

// base is time 0 of the model (the Unix epoch's multiple of every window
// size the generator draws, so that windows aligned to the epoch are
// aligned to it).
var base = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func stamp(t int64) string {
	return base.Add(time.Duration(t) * time.Second).Format("2006-01-02 15:04:05")
}

// row is a row of the table ev: k, v and ts may be NULL.
type row struct {
	id         int
	k, v, t    int64
	kN, vN, tN bool
	pass       bool // the view's WHERE keeps it (set per view)
}

// text is x as the server prints it, "NULL" when null.
func text(x int64, null bool) string {
	if null {
		return "NULL"
	}
	return fmt.Sprint(x)
}

func (r row) values() string {
	ts := "NULL"
	if !r.tN {
		ts = "'" + stamp(r.t) + "'"
	}
	return fmt.Sprintf("(%d, %s, %s, %s)", r.id, text(r.k, r.kN), text(r.v, r.vN), ts)
}

// agg is one aggregate of the select list.
type agg int

const (
	aggCount agg = iota // count(*)
	aggCountV
	aggSum
	aggMin
	aggMax
	aggDistinct
	nAggs
)

func (a agg) sql() string {
	return [...]string{"count(*)", "count(v)", "sum(v)", "min(v)", "max(v)", "count(DISTINCT v)"}[a]
}

// acc accumulates the aggregates of one group.
type acc struct {
	n, nv, sum int64
	min, max   int64
	distinct   map[int64]bool
}

func (a *acc) add(r row) {
	a.n++
	if r.vN {
		return
	}
	if a.nv == 0 || r.v < a.min {
		a.min = r.v
	}
	if a.nv == 0 || r.v > a.max {
		a.max = r.v
	}
	a.nv++
	a.sum += r.v
	if a.distinct == nil {
		a.distinct = map[int64]bool{}
	}
	a.distinct[r.v] = true
}

func (a *acc) result(g agg) string {
	switch g {
	case aggCount:
		return fmt.Sprint(a.n)
	case aggCountV:
		return fmt.Sprint(a.nv)
	case aggDistinct:
		return fmt.Sprint(len(a.distinct))
	}
	if a.nv == 0 {
		return "NULL"
	}
	switch g {
	case aggSum:
		return fmt.Sprint(a.sum)
	case aggMin:
		return fmt.Sprint(a.min)
	}
	return fmt.Sprint(a.max)
}

// kind of window.
type kind int

const (
	tumble kind = iota
	hop
	session
	// bucket: a plain GROUP BY of a time rounded down to size seconds
	// (date_bin, date_trunc, or the time itself: size 1), closed by the
	// watermark under EMIT ON WINDOW CLOSE as a TUMBLE window is, and
	// never freed under EMIT ON UPDATE (docs/windows.md, "Aggregations
	// closed by the watermark").
	bucket
	cumulate // windows [p, p+slide), [p, p+2 slide), ... [p, p+size) of each period p
)

// spec is a random windowed view.
type spec struct {
	kind                  kind
	size, slide, off, gap int64
	keyed                 bool // GROUP BY k too
	aggs                  []agg
	where                 string // "" or a condition on v or k
	eowc                  bool
	delay, lateness       int64
	topN                  int   // > 0: a top-N per window instead of aggregates
	every, early          int64 // EMIT EVERY, EARLY EVERY (TUMBLE, HOP aggregations)
	// outer: the windowed aggregation is a subquery, and the view the max,
	// count and sum of its count(*) per window_start (Nexmark q5's shape;
	// under EMIT ON WINDOW CLOSE an aggregation closed by the watermark).
	outer     bool
	bucketSQL string // bucket: the rounded time
	table     string // "": ev
	lateTable string // LATE ROWS INTO it (late_test.go)
}

func (s spec) tableName() string {
	if s.table == "" {
		return "ev"
	}
	return s.table
}

func (s spec) sql() string {
	var from string
	switch s.kind {
	case tumble:
		from = fmt.Sprintf("TUMBLE(%s, ts, INTERVAL '%d' SECOND", s.tableName(), s.size)
		if s.off != 0 {
			from += fmt.Sprintf(", INTERVAL '%d' SECOND", s.off)
		}
	case hop:
		from = fmt.Sprintf("HOP(%s, ts, INTERVAL '%d' SECOND, INTERVAL '%d' SECOND", s.tableName(), s.slide, s.size)
		if s.off != 0 {
			from += fmt.Sprintf(", INTERVAL '%d' SECOND", s.off)
		}
	case cumulate:
		from = fmt.Sprintf("CUMULATE(%s, ts, INTERVAL '%d' SECOND, INTERVAL '%d' SECOND", s.tableName(), s.slide, s.size)
		if s.off != 0 {
			from += fmt.Sprintf(", INTERVAL '%d' SECOND", s.off)
		}
	case bucket:
		return s.bucketQuery()
	default:
		from = fmt.Sprintf("SESSION(%s, ts, INTERVAL '%d' SECOND", s.tableName(), s.gap)
	}
	from += ")"
	if s.topN > 0 {
		part := "window_start"
		if s.keyed {
			part += ", k"
		}
		q := "SELECT * FROM (SELECT id, k, v, window_start, window_end, row_number() OVER (PARTITION BY " + part +
			" ORDER BY v DESC, id) AS rn FROM " + from
		if s.where != "" {
			q += " WHERE " + s.where
		}
		q += fmt.Sprintf(") t WHERE rn <= %d", s.topN)
		if s.eowc {
			q += " EMIT ON WINDOW CLOSE"
			if s.delay > 0 {
				q += fmt.Sprintf(" WITH DELAY INTERVAL '%d' SECOND", s.delay)
			}
		}
		return q
	}
	cols := []string{"window_start", "window_end"}
	if s.keyed {
		cols = append([]string{"k"}, cols...)
	}
	sel := slices.Clone(cols)
	for _, a := range s.aggs {
		sel = append(sel, a.sql())
	}
	if s.outer {
		sel[len(cols)] += " AS c"
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + from
	if s.where != "" {
		q += " WHERE " + s.where
	}
	q += " GROUP BY " + strings.Join(cols, ", ")
	if s.outer {
		q = "SELECT window_start, max(c), count(*), sum(c) FROM (" + q + ") x GROUP BY window_start"
	}
	if s.eowc {
		q += " EMIT ON WINDOW CLOSE"
		if s.delay > 0 {
			q += fmt.Sprintf(" WITH DELAY INTERVAL '%d' SECOND", s.delay)
		}
		if s.early > 0 {
			q += fmt.Sprintf(" EARLY EVERY INTERVAL '%d' SECOND", s.early)
		}
		if s.lateness > 0 {
			q += fmt.Sprintf(" ALLOW LATENESS INTERVAL '%d' SECOND", s.lateness)
		}
		q += (&lateTab{lateTable: s.lateTable}).into()
	}
	if s.every > 0 {
		q += fmt.Sprintf(" EMIT EVERY INTERVAL '%d' SECOND", s.every)
	}
	return q
}

func (s spec) bucketQuery() string {
	cols := []string{s.bucketSQL + " AS b"}
	if s.keyed {
		cols = append([]string{"k"}, cols...)
	}
	sel := slices.Clone(cols)
	for _, a := range s.aggs {
		sel = append(sel, a.sql())
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + s.tableName()
	if s.where != "" {
		q += " WHERE " + s.where
	}
	q += " GROUP BY " + strings.Join(cols[:len(cols)-1], ", ")
	if s.keyed {
		q += ", "
	}
	q += s.bucketSQL
	if s.eowc {
		q += " EMIT ON WINDOW CLOSE"
		if s.delay > 0 {
			q += fmt.Sprintf(" WITH DELAY INTERVAL '%d' SECOND", s.delay)
		}
	}
	return q
}

// windowsOf lists the [start, end) of the TUMBLE, HOP or CUMULATE windows
// that time t is in (docs/windows.md, "Which windows a row is in").
func (s spec) windowsOf(t int64) [][2]int64 {
	var ws [][2]int64
	switch s.kind {
	case cumulate:
		p := floorDiv(t-s.off, s.size)*s.size + s.off
		for e := p + s.slide; e <= p+s.size; e += s.slide {
			if e > t {
				ws = append(ws, [2]int64{p, e})
			}
		}
	default:
		step := s.size
		if s.kind == hop {
			step = s.slide
		}
		for st := floorDiv(t-s.off, step)*step + s.off; st > t-s.size; st -= step {
			ws = append(ws, [2]int64{st, st + s.size})
		}
	}
	return ws
}

// keeps is the view's WHERE.
func (s spec) keeps(r row) bool {
	switch s.where {
	case "":
		return true
	case "v > 3":
		return !r.vN && r.v > 3
	case "v IS NOT NULL":
		return !r.vN
	case "k <> 2":
		return !r.kN && r.k != 2
	}
	panic("unknown WHERE " + s.where)
}
