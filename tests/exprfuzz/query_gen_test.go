package exprfuzz

import (
	"fmt"
	"strings"
)

// The second table of the query comparison: rows that join fz by id
// (some twice, some not at all) and groups with NULL keys.
var joinTable = []string{
	"CREATE TABLE fy (k int4, fid int4, v numeric, t text, g int4)",
	"INSERT INTO fy VALUES (1, 1, 10.5, 'x', 1), (2, 1, -3, 'y', 1), (3, 2, NULL, 'x', 2), (4, 3, 0, NULL, NULL), " +
		"(5, 7, 2.25, 'z', 2), (6, NULL, 1e3, 'y', NULL), (7, 6, -0.5, 'x', 3), (8, 6, 100, 'x', 3)",
}

// fyCol names fy's columns by type.
var fyCol = map[typ][]string{tInt4: {"fy.k", "fy.fid", "fy.g"}, tNumeric: {"fy.v"}, tText: {"fy.t"}}

// query builds a random SELECT over fz (and fy): a join or not, a WHERE,
// a GROUP BY with aggregates (some with FILTER or DISTINCT) and HAVING,
// or window functions, or DISTINCT, and set operations. Results are
// compared as multisets, so ORDER BY is left out except inside aggregates
// and windows, where it decides the answer.
func (g *gen) query() string {
	if g.r.IntN(8) == 0 {
		return g.extraQuery()
	}
	if g.r.IntN(6) == 0 {
		op := g.pick("UNION", "UNION ALL", "INTERSECT", "EXCEPT", "INTERSECT ALL", "EXCEPT ALL")
		return fmt.Sprintf("(%s) %s (%s)", g.simpleSelect(tInt4), op, g.simpleSelect(tInt4))
	}
	from, joined := g.from()
	where := ""
	if g.r.IntN(2) == 0 {
		where = " WHERE " + g.pred(joined)
	}
	switch g.r.IntN(4) {
	case 0, 1: // grouped
		keys := g.groupKeys(joined)
		var sel []string
		sel = append(sel, keys...)
		for n := 1 + g.r.IntN(3); n > 0; n-- {
			sel = append(sel, g.agg(joined))
		}
		q := "SELECT " + strings.Join(sel, ", ") + " FROM " + from + where
		if len(keys) > 0 {
			q += " GROUP BY " + strings.Join(keys, ", ")
		}
		if g.r.IntN(3) == 0 {
			q += " HAVING " + g.pick("count(*) > 1", "sum(fz.i8) IS NOT NULL", "max(fz.s) > 'a'", "bool_or(fz.b)", "avg(fz.f) < 1")
		}
		return q + g.topN(len(sel))
	case 2: // window functions
		part := g.pick("", "PARTITION BY fz.b ", "PARTITION BY fz.i4 % 2 ")
		order := g.pick("ORDER BY fz.id", "ORDER BY fz.i8, fz.id", "ORDER BY fz.s NULLS FIRST, fz.id")
		frame := g.pick("", " ROWS BETWEEN 1 PRECEDING AND CURRENT ROW", " ROWS UNBOUNDED PRECEDING", " RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING")
		w := g.pick("row_number()", "rank()", "dense_rank()", "sum(fz.i8)", "count(fz.s)", "min(fz.n)", "lag(fz.s)", "lead(fz.f, 2, 0)", "first_value(fz.d)", "avg(fz.n)", "percent_rank()", "ntile(3)")
		if strings.HasPrefix(w, "row_number") || strings.HasPrefix(w, "rank") || strings.HasPrefix(w, "dense") || strings.HasPrefix(w, "lag") || strings.HasPrefix(w, "lead") || strings.HasPrefix(w, "percent") || strings.HasPrefix(w, "ntile") {
			frame = ""
		}
		if where != "" {
			where = " WHERE " + g.pred(false) // over fz alone
		}
		return fmt.Sprintf("SELECT fz.id, %s OVER (%s%s%s) FROM fz%s", w, part, order, frame, where)
	default: // plain or DISTINCT
		distinct := g.pick("", "DISTINCT ")
		var sel []string
		for n := 1 + g.r.IntN(3); n > 0; n-- {
			sel = append(sel, g.expr(typ(g.r.IntN(int(nTypes))), 2))
		}
		if joined {
			sel = append(sel, g.pick("fy.k", "fy.v", "fy.t"))
		}
		if g.r.IntN(3) == 0 {
			sel = append(sel, g.subquery())
		}
		return "SELECT " + distinct + strings.Join(sel, ", ") + " FROM " + from + where + g.topN(len(sel))
	}
}

// topN is, one time in four, an ORDER BY of every output column (so that
// the rows kept are the same whatever the ties) and a LIMIT, with an
// OFFSET sometimes; otherwise nothing.
func (g *gen) topN(cols int) string {
	if g.r.IntN(4) > 0 {
		return ""
	}
	var keys []string
	for i := 1; i <= cols; i++ {
		keys = append(keys, fmt.Sprintf("%d%s", i, g.pick("", " DESC", " NULLS FIRST", " DESC NULLS LAST")))
	}
	return " ORDER BY " + strings.Join(keys, ", ") + fmt.Sprintf(" LIMIT %d", 1+g.r.IntN(4)) + g.pick("", "", " OFFSET 1")
}

// from is fz alone or joined with fy.
func (g *gen) from() (string, bool) {
	switch g.r.IntN(5) {
	case 0:
		return "fz JOIN fy ON fy.fid = fz.id", true
	case 1:
		return "fz LEFT JOIN fy ON fy.fid = fz.id" + g.pick("", " AND fy.v > 0"), true
	case 2:
		return "fz FULL JOIN fy ON fy.fid = fz.id", true
	case 3:
		return "fz RIGHT JOIN fy ON fy.g = fz.i8 % 4", true
	}
	return "fz", false
}

func (g *gen) pred(joined bool) string {
	if joined && g.r.IntN(2) == 0 {
		return g.pick("fy.v > 0", "fy.t = 'x'", "fy.k IS NULL", "fy.v IS NOT NULL AND fz.b", "fy.g = 1 OR fz.i4 > 0")
	}
	switch g.r.IntN(5) {
	case 0:
		return g.pick("EXISTS (SELECT 1 FROM fy WHERE fy.fid = fz.id)", "NOT EXISTS (SELECT 1 FROM fy WHERE fy.fid = fz.id AND fy.v > 0)")
	case 1:
		return g.pick("fz.id IN (SELECT fid FROM fy)", "fz.id NOT IN (SELECT fid FROM fy WHERE fid IS NOT NULL)", "fz.i4 IN (SELECT g FROM fy)")
	case 2:
		return g.pick("fz.n > (SELECT avg(v) FROM fy)", "fz.i8 > ALL (SELECT k FROM fy WHERE k < 3)", "fz.id = ANY (SELECT fid FROM fy)")
	}
	return g.expr(tBool, 2)
}

func (g *gen) groupKeys(joined bool) []string {
	keys := [][]string{nil, {"fz.b"}, {"fz.s"}, {"fz.i4 % 2"}, {"fz.b", "fz.d"}, {"date_trunc('year', fz.ts)"}}
	if joined {
		keys = append(keys, []string{"fy.t"}, []string{"fy.g", "fz.b"})
	}
	return keys[g.r.IntN(len(keys))]
}

func (g *gen) agg(joined bool) string {
	arg := g.pick("fz.i4", "fz.i8", "fz.n", "fz.f", "fz.s", "fz.b", "fz.d", "fz.ts", "fz.iv")
	if joined && g.r.IntN(2) == 0 {
		arg = g.pick("fy.v", "fy.k", "fy.t")
	}
	var a string
	switch g.r.IntN(12) {
	case 0:
		a = "count(*)"
	case 1:
		a = "count(" + arg + ")"
	case 2:
		a = "count(DISTINCT " + arg + ")"
	case 3, 4:
		a = g.pick("min", "max") + "(" + arg + ")"
	case 5:
		a = g.pick("sum", "avg") + "(" + g.pick("fz.i4", "fz.i8", "fz.n", "fz.f", "fz.iv") + ")"
	case 6:
		a = g.pick("bool_and", "bool_or", "every") + "(" + g.pick("fz.b", "fz.i4 > 0", "fz.s LIKE '%a%'") + ")"
	case 7:
		a = "string_agg(" + g.pick("fz.s", "fz.id::text", "fz.d::text") + ", ',' ORDER BY fz.id)"
	case 8:
		a = "array_agg(" + g.pick("fz.i4", "fz.s", "fz.n") + " ORDER BY fz.id)"
	case 9:
		a = g.pick("stddev", "variance", "var_pop", "stddev_pop") + "(" + g.pick("fz.i4", "fz.n", "fz.f") + ")"
	case 10:
		a = "sum(DISTINCT " + g.pick("fz.i4", "fz.n") + ")"
	default:
		a = g.pick("bit_and", "bit_or") + "(" + g.pick("fz.i4", "fz.i8") + ")"
	}
	if g.r.IntN(4) == 0 && a != "count(*)" {
		a += " FILTER (WHERE " + g.pick("fz.b", "fz.i4 <> 0", "fz.s IS NOT NULL") + ")"
	}
	return a
}

// subquery is a scalar subquery correlated with fz.
func (g *gen) subquery() string {
	return g.pick(
		"(SELECT count(*) FROM fy WHERE fy.fid = fz.id)",
		"(SELECT max(v) FROM fy WHERE fy.fid = fz.id)",
		"(SELECT t FROM fy WHERE fy.k = fz.id)",
		"(SELECT sum(v) FROM fy WHERE fy.g = fz.i4)",
		"(SELECT string_agg(t, '' ORDER BY k) FROM fy WHERE fy.fid <= fz.id)",
	)
}

// simpleSelect is one side of a set operation: a column of type t from fz
// or fy.
func (g *gen) simpleSelect(t typ) string {
	if g.r.IntN(2) == 0 {
		return "SELECT " + g.pick("fy.k", "fy.fid", "fy.g") + " FROM fy" + g.pick("", " WHERE fy.v > 0", " WHERE fy.t = 'x'")
	}
	return "SELECT " + g.pick("fz.id", "fz.i4", "fz.i4 % 3") + " FROM fz" + g.pick("", " WHERE fz.b", " WHERE fz.i8 > 0")
}

// extraQuery is one of the rarer shapes: a CTE, DISTINCT ON, LATERAL,
// GROUPING SETS / ROLLUP / CUBE, a window with a RANGE offset, VALUES.
func (g *gen) extraQuery() string {
	switch g.r.IntN(7) {
	case 0:
		return "WITH w AS (SELECT fz.i4 % 3 AS k, fz.n FROM fz WHERE " + g.pred(false) + ") SELECT k, count(*), sum(n) FROM w GROUP BY k"
	case 1:
		return "SELECT DISTINCT ON (fz.b) fz.b, fz.id, fz.s FROM fz ORDER BY fz.b, fz." + g.pick("id", "i8, fz.id", "s NULLS FIRST, fz.id")
	case 2:
		return "SELECT fz.id, l.* FROM fz, LATERAL (SELECT count(*) AS c, max(fy.v) AS m FROM fy WHERE fy.fid = fz.id) l"
	case 3:
		return "SELECT fz.b, fz.i4 % 2, count(*), sum(fz.n) FROM fz GROUP BY " + g.pick("GROUPING SETS ((fz.b), (fz.i4 % 2), ())", "ROLLUP (fz.b, fz.i4 % 2)", "CUBE (fz.b, fz.i4 % 2)")
	case 4:
		return "SELECT fz.id, " + g.pick("sum(fz.i4)", "count(*)", "max(fz.n)") + " OVER (ORDER BY fz." + g.pick("i4", "id", "d") + " RANGE BETWEEN " + g.pick("1", "3") + g.pick("", "", "") + " PRECEDING AND CURRENT ROW) FROM fz WHERE fz.id <= 6"
	case 5:
		return "SELECT v.k, fz.s FROM (VALUES (1, 'a'), (2, NULL), (NULL, 'c')) v(k, t) LEFT JOIN fz ON fz.id = v.k"
	}
	return "SELECT fz.s, (SELECT count(*) FROM fy WHERE fy.t = fz.s) FROM fz UNION ALL SELECT fy.t, fy.k FROM fy WHERE " + g.pick("fy.v > 0", "true", "fy.g IS NULL")
}
