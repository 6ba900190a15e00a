package streamprop

import (
	"regexp"
	"strings"
)

// viewDef is one materialized view of the corpus. A reference to another
// corpus view is written {name} and is always followed by an alias: the
// view is created over that view, and the batch query it is checked against
// inlines the other view's (batch) query there instead, so the comparison is
// with the tables, not with the other view's contents.
type viewDef struct {
	name  string
	query string
	// refused, when set, is why the streaming planner refuses the query
	// (0A000); the test expects the refusal and lists it in its log.
	refused string
	// ownSyntax marks a query in streamsql's syntax that PostgreSQL has
	// not (a SESSION WITH GAP frame): the batch engine alone checks it.
	ownSyntax bool
}

// corpus covers every operator the streaming planner supports. Views come
// after the views they reference. ORDER BY ... LIMIT and row_number() order
// by a unique key (or the whole row), so the expected rows are determined.
var corpus = []viewDef{
	// filters and projections
	{name: "f_filter", query: "SELECT id, k, g FROM a WHERE k > 1 AND g IS NOT NULL"},
	{name: "f_proj", query: "SELECT id, k * 2 + 1 AS k2, coalesce(g, 'none') AS g, n * 2 AS n2, f + 1 AS f1, ts + interval '1 day' AS ts1, length(g) AS len FROM a"},
	{name: "f_case", query: "SELECT id, CASE WHEN k IS NULL THEN 'null' WHEN k < 2 THEN 'lo' ELSE 'hi' END AS bucket, upper(g) || '-' || coalesce(k::text, '?') AS label FROM a WHERE n IS NULL OR n < 5"},
	{name: "f_nopk", query: "SELECT k, v, s FROM b WHERE v % 2 = 0 OR s = 'p' OR s = ''"},
	{name: "f_cast", query: "SELECT id, n::int AS ni, f::numeric(10,3) AS fn, k::text || g AS kg, ts::date AS d FROM a"},
	{name: "f_in_like", query: "SELECT k, v, s FROM b WHERE (s IN ('x', 'p') AND k BETWEEN 1 AND 3) OR s LIKE 'z%' OR s ILIKE 'Y'"},
	{name: "f_ts", query: "SELECT id, date_trunc('day', ts) AS day, extract(hour FROM ts) AS h, w FROM c WHERE ts >= '2024-01-01' AND w IS DISTINCT FROM 2"},

	// aggregates
	{name: "agg_group", query: "SELECT g, count(*) AS c, count(k) AS ck, sum(k) AS sk, sum(n) AS sn, avg(k) AS ak, avg(n) AS an, min(ts) AS mi, max(ts) AS ma FROM a GROUP BY g"},
	{name: "agg_float", query: "SELECT k, sum(f) AS sf, avg(f) AS af, min(f) AS mif, max(f) AS maf, count(f) AS cf FROM b GROUP BY k"},
	{name: "agg_distinct", query: "SELECT k, count(DISTINCT g) AS dg, count(DISTINCT n) AS dn, sum(DISTINCT n) AS sdn FROM a GROUP BY k"},
	{name: "agg_filter", query: "SELECT g, count(*) FILTER (WHERE k > 1) AS c1, sum(n) FILTER (WHERE f > 0) AS s1, bool_and(k > 0) AS ba, bool_or(n > 1) AS bo FROM a GROUP BY g"},
	{name: "agg_global", query: "SELECT count(*) AS c, sum(v) AS sv, min(s) AS mis, max(s) AS mas, avg(v) AS av, count(DISTINCT k) AS dk FROM b"},
	{name: "agg_global_where", query: "SELECT count(*) AS c, sum(n) AS sn, max(id) AS mid, bool_and(f > 0) AS pos FROM a WHERE k = 1"},
	{name: "agg_having", query: "SELECT k, count(*) AS c, sum(v) AS sv FROM b GROUP BY k HAVING count(*) > 1 AND min(v) < 5"},
	{name: "agg_expr_key", query: "SELECT k % 2 AS parity, coalesce(g, '-') AS g2, count(*) AS c, max(n) - min(n) AS spread FROM a GROUP BY k % 2, coalesce(g, '-')"},
	{name: "agg_ts_key", query: "SELECT date_trunc('day', ts) AS day, g, count(*) AS c, sum(k) AS sk, min(id) AS mid FROM a GROUP BY 1, 2"},
	{name: "agg_minmax", query: "SELECT s, min(v) AS miv, max(v) AS mav, min(k) AS mik, max(k) AS mak, min(f) AS mif, max(f) AS maf FROM b GROUP BY s"},
	{name: "agg_expr", query: "SELECT s, sum(v * k) AS svk, sum(v) - sum(k) AS d, count(*) FILTER (WHERE f IS NULL) AS nf, min(coalesce(s, '?') || k::text) AS mk FROM b GROUP BY s"},
	{name: "agg_having_avg", query: "SELECT g, avg(n) AS an, count(*) AS c FROM a GROUP BY g HAVING avg(n) > 1 OR count(*) > 3"},
	{name: "agg_dist_global", query: "SELECT count(*) AS c, sum(t.k) AS sk FROM (SELECT DISTINCT k FROM b) t"},
	{name: "agg_num_key", query: "SELECT n * 2 AS n2, count(*) AS c, sum(f) AS sf FROM a GROUP BY n * 2"},
	{name: "agg_float_key", query: "SELECT f, count(*) AS c, count(DISTINCT s) AS ds FROM b GROUP BY f"},
	{name: "dist_mixed", query: "SELECT DISTINCT n, ts FROM a"},
	{name: "agg_global_having", query: "SELECT count(*) AS c, max(k) AS mk FROM a HAVING count(*) > 20"},
	{name: "agg_case", query: "SELECT g, CASE WHEN count(*) > 2 THEN 'many' ELSE 'few' END AS size, every(k > 0) AS pos FROM a GROUP BY g"},
	{name: "agg_string_agg", query: "SELECT g, string_agg(s, ',' ORDER BY s) AS ss, string_agg(s, s ORDER BY v DESC, s, a.id) AS sv FROM a JOIN b ON a.k = b.k GROUP BY g"},
	{name: "agg_array_agg", query: "SELECT g, array_agg(id ORDER BY id) AS ids, array_agg(n ORDER BY id DESC) FILTER (WHERE k > 1) AS ns FROM a GROUP BY g"},
	{name: "agg_of_agg", query: "SELECT c, count(*) AS groups FROM (SELECT k, count(*) AS c FROM b GROUP BY k) t GROUP BY c"},
	{name: "agg_stats", query: "SELECT g, stddev(k) AS sk, var_pop(n) AS vn, variance(f) AS vf, stddev_pop(f) FILTER (WHERE k > 1) AS sf FROM a GROUP BY g"},
	// corr of integers: over floats whose group holds one repeated value
	// the sum of squared deviations is rounding, not 0, and corr divides
	// by it (noise in PostgreSQL too, differing with the order of rows); and
	// no intercept of v: with values of 1e10 it is a difference of two
	// numbers near 1e10, exact to 1e-6 only
	{name: "agg_regr", query: "SELECT s, corr(v, k) AS r, regr_slope(f, k) AS sl, regr_count(v, k) AS rc, covar_samp(k, f) AS cs, regr_intercept(f, k) AS ic FROM b GROUP BY s"},
	{name: "agg_pct", query: "SELECT g, percentile_cont(0.5) WITHIN GROUP (ORDER BY f) AS p50, percentile_disc(0.9) WITHIN GROUP (ORDER BY n DESC) AS d90, " +
		"mode() WITHIN GROUP (ORDER BY k) AS mk, percentile_disc(ARRAY[0.25, 0.75]) WITHIN GROUP (ORDER BY ts) AS qs FROM a GROUP BY g"},
	{name: "agg_hypo", query: "SELECT g, rank(2) WITHIN GROUP (ORDER BY k) AS r, cume_dist(1.5) WITHIN GROUP (ORDER BY n DESC) AS cd, dense_rank(3) WITHIN GROUP (ORDER BY k NULLS FIRST) AS d, percent_rank(0.2) WITHIN GROUP (ORDER BY f) AS pr FROM a GROUP BY g"},
	{name: "agg_bits", query: "SELECT s, bit_and(v) AS ba, bit_or(k) AS bo, bit_xor(v) AS bx FROM b GROUP BY s"},
	{name: "agg_json", query: "SELECT g, json_agg(k ORDER BY id) AS ks, jsonb_object_agg(id, n) AS o FROM a GROUP BY g"},
	{name: "agg_rollup", query: "SELECT g, k, count(*) AS c, sum(n) AS sn, GROUPING(g, k) AS gg FROM a GROUP BY ROLLUP (g, k)"},
	{name: "agg_cube", query: "SELECT s, k % 2 AS p, max(v) AS mv FROM b GROUP BY CUBE (s, k % 2)"},

	// DISTINCT
	{name: "dist", query: "SELECT DISTINCT k, g FROM a"},
	{name: "dist_b", query: "SELECT DISTINCT s, k % 2 AS p FROM b"},
	{name: "dist_on", query: "SELECT DISTINCT ON (g) g, id, k FROM a ORDER BY g, id DESC"},

	// joins
	{name: "j_inner", query: "SELECT a.id, a.g, b.v, b.s FROM a JOIN b ON a.k = b.k"},
	{name: "j_inner_resid", query: "SELECT a.id, b.v, b.f FROM a JOIN b ON a.k = b.k AND b.v > a.id"},
	{name: "j_left", query: "SELECT a.id, a.k, b.v FROM a LEFT JOIN b ON a.k = b.k"},
	{name: "j_right", query: "SELECT c.id, c.g, a.id AS aid FROM a RIGHT JOIN c ON a.g = c.g AND a.k < c.w"},
	{name: "j_full", query: "SELECT a.id, a.k, b.v, b.s FROM a FULL JOIN b ON a.k = b.k AND a.g = b.s"},
	{name: "j_full_resid", query: "SELECT a.id, c.id AS cid FROM a FULL JOIN c ON a.g = c.g AND a.ts < c.ts"},
	{name: "j_three", query: "SELECT a.id, b.v, c.id AS cid FROM a JOIN b ON a.k = b.k JOIN c ON c.g = a.g"},
	{name: "j_agg", query: "SELECT a.g, count(*) AS c, sum(b.v) AS sv, max(b.s) AS ms FROM a JOIN b ON a.k = b.k GROUP BY a.g"},
	{name: "j_left_agg", query: "SELECT a.id, count(b.v) AS nb, sum(b.v) AS sv FROM a LEFT JOIN b ON a.k = b.k GROUP BY a.id"},
	{name: "j_self", query: "SELECT x.id, y.id AS yid FROM a x JOIN a y ON x.k = y.k AND x.id < y.id"},
	// one table read once for two scans, one aggregation computed once for
	// two parents (docs/streaming.md, "Shared source reads", "Shared subplans")
	{name: "share_read_scalar", query: "SELECT a.id, a.n FROM a WHERE a.n > (SELECT avg(n) FROM a)"},
	{name: "share_agg_self", query: "SELECT x.g, x.c, x.s, y.c AS c2, y.s AS s2 FROM (SELECT g, count(*) AS c, sum(k) AS s FROM a GROUP BY g) x JOIN (SELECT g, count(*) AS c, sum(k) AS s FROM a GROUP BY g) y ON x.g = y.g AND x.c > 1"},
	{name: "share_agg_union", query: "SELECT k, sum(v) AS s FROM b GROUP BY k UNION ALL SELECT k, sum(v) AS s FROM b GROUP BY k"},
	{name: "j_left_null", query: "SELECT a.id, a.g FROM a LEFT JOIN c ON a.g = c.g WHERE c.id IS NULL"},
	{name: "j_dist", query: "SELECT DISTINCT a.g, b.s FROM a JOIN b ON a.k = b.k"},
	{name: "j_topn", query: "SELECT a.id, b.v FROM a JOIN b ON a.k = b.k ORDER BY b.v DESC NULLS LAST, a.id LIMIT 5"},
	{name: "j_rownum", query: "SELECT * FROM (SELECT a.g, a.id, b.v, row_number() OVER (PARTITION BY a.g ORDER BY b.v, a.id) AS rn FROM a JOIN b ON a.k = b.k) t WHERE rn <= 2"},
	{name: "j_agg_keys", query: "SELECT b.k, c.g, count(*) AS c, max(b.v) AS mv FROM b JOIN c ON b.k = c.w GROUP BY b.k, c.g"},
	{name: "j_full_agg", query: "SELECT coalesce(a.k, b.k) AS k, count(a.id) AS na, count(b.v) AS nb, count(*) AS c FROM a FULL JOIN b ON a.k = b.k GROUP BY coalesce(a.k, b.k)"},
	{name: "j_int_bigint", query: "SELECT a.id, a.g, c.id AS cid, c.w FROM a JOIN c ON a.id = c.id"},
	{name: "j_num_int", query: "SELECT a.id, a.n, b.v FROM a LEFT JOIN b ON a.n = b.k"},
	{name: "j_float_int", query: "SELECT b.k, b.f, a.id FROM b FULL JOIN a ON b.f = a.k"},
	{name: "j_nonequi", query: "SELECT a.id, c.id AS cid FROM a JOIN c ON a.k < c.w"},
	{name: "j_nonequi_left", query: "SELECT a.id, c.id AS cid FROM a LEFT JOIN c ON a.k < c.w AND a.g = 'x'"},
	{name: "j_cross", query: "SELECT a.id, c.id AS cid, c.g FROM a CROSS JOIN c WHERE a.k = 1 AND c.w = 2"},
	{name: "j_aggs", query: "SELECT x.k, x.c, y.m FROM (SELECT k, count(*) AS c FROM b GROUP BY k) x JOIN (SELECT k, max(id) AS m FROM a GROUP BY k) y ON x.k = y.k"},
	{name: "j_cte", query: "WITH t AS (SELECT k, count(*) AS c FROM b GROUP BY k) SELECT a.id, t.c FROM a JOIN t ON a.k = t.k"},

	// subqueries: semi and anti joins, an uncorrelated scalar subquery
	{name: "semi_in", query: "SELECT id, g FROM a WHERE k IN (SELECT k FROM b WHERE v > 2)"},
	{name: "semi_exists", query: "SELECT * FROM c WHERE EXISTS (SELECT 1 FROM a WHERE a.g = c.g AND a.k > c.w)"},
	{name: "anti", query: "SELECT * FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k)"},
	{name: "anti_b", query: "SELECT k, v FROM b WHERE NOT EXISTS (SELECT 1 FROM c WHERE c.w = b.k)"},
	{name: "semi_bigint", query: "SELECT id, g FROM a WHERE id IN (SELECT v FROM b)"},
	{name: "semi_two_keys", query: "SELECT a.id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.s = a.g)"},
	{name: "anti_resid", query: "SELECT c.id, c.g FROM c WHERE NOT EXISTS (SELECT 1 FROM a WHERE a.g = c.g AND a.ts > c.ts)"},
	{name: "scalar_count", query: "SELECT id, w FROM c WHERE w < (SELECT count(*) FROM b WHERE v > 2)"},
	{name: "scalar_sub", query: "SELECT id, k FROM a WHERE k > (SELECT avg(k) FROM b)"},
	{name: "sub_from", query: "SELECT s.g, s.total FROM (SELECT g, sum(k) AS total FROM a GROUP BY g) s WHERE s.total > 2"},
	{name: "scalar_select", query: "SELECT id, (SELECT max(v) FROM b) AS mv, k FROM a WHERE g = 'y'"},
	{name: "any_sub", query: "SELECT a.id FROM a WHERE a.k = ANY (SELECT k FROM b WHERE s = 'x')"},
	{name: "exists_and", query: "SELECT a.id FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k) AND EXISTS (SELECT 1 FROM c WHERE c.g = a.g)"},
	{name: "exists_or", query: "SELECT a.id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k) OR a.k = 1"},
	{name: "in_values", query: "SELECT a.id, EXISTS (SELECT 1 FROM b WHERE b.k = a.k) AS e, a.k IN (SELECT k FROM b) AS i, a.k NOT IN (SELECT w FROM c) AS ni FROM a"},
	{name: "in_or", query: "SELECT a.id, a.g FROM a WHERE a.g = 'x' OR a.k IN (SELECT k FROM b WHERE v > 3) OR EXISTS (SELECT 1 FROM c WHERE c.w = 2)"},
	{name: "not_in", query: "SELECT id FROM a WHERE k NOT IN (SELECT k FROM b)"},
	{name: "not_in_filtered", query: "SELECT id, g FROM a WHERE g IS NOT NULL AND n NOT IN (SELECT v FROM b WHERE s = 'x')"},
	{name: "not_in_corr", query: "SELECT id, g FROM a WHERE k NOT IN (SELECT v FROM b WHERE b.k = a.id)"},
	{name: "not_in_corr_two", query: "SELECT a.id FROM a WHERE a.k NOT IN (SELECT c.w FROM c WHERE c.g = a.g AND c.id > 1)"},
	{name: "in_corr_value", query: "SELECT a.id, a.k IN (SELECT v FROM b WHERE b.k = a.id) AS i FROM a"},
	{name: "in_corr_or", query: "SELECT a.id FROM a WHERE a.g = 'x' OR a.k IN (SELECT c.w FROM c WHERE c.g = a.g)"},
	{name: "row_not_in", query: "SELECT id, g FROM a WHERE (k, g) NOT IN (SELECT k, s FROM b WHERE v > 1)"},
	{name: "corr_scalar", query: "SELECT id, k FROM a WHERE n < (SELECT avg(v) FROM b WHERE b.k = a.k)"},
	{name: "corr_scalar_sel", query: "SELECT id, (SELECT count(*) FROM b WHERE b.k = a.k) AS nb, (SELECT max(c.w) FROM c WHERE c.g = a.g AND c.w > 0) AS mw FROM a"},

	// set operations
	{name: "uni_all", query: "SELECT k, g AS s FROM a UNION ALL SELECT k, s FROM b"},
	{name: "uni_agg", query: "SELECT g AS key, count(*) AS c FROM a GROUP BY g UNION ALL SELECT s, count(*) FROM b GROUP BY s"},
	{name: "uni_three", query: "SELECT id FROM a UNION ALL SELECT id FROM c UNION ALL SELECT k FROM b"},
	{name: "uni", query: "SELECT k FROM a UNION SELECT k FROM b UNION SELECT w FROM c"},
	{name: "set_intersect", query: "SELECT k, g FROM a INTERSECT SELECT k, s FROM b"},
	{name: "set_except", query: "SELECT k FROM a EXCEPT SELECT w FROM c WHERE g IS NOT NULL"},
	{name: "set_intersect_all", query: "SELECT k, g FROM a INTERSECT ALL SELECT w, g FROM c"},
	{name: "set_except_all", query: "SELECT k FROM a EXCEPT ALL SELECT k FROM b"},

	// LATERAL subqueries correlated by equalities
	{name: "lat_top", query: "SELECT c.id, x.v, x.s FROM c, LATERAL (SELECT v, s FROM b WHERE b.k = c.w ORDER BY v DESC, s LIMIT 2) x"},
	{name: "lat_agg", query: "SELECT c.id, x.n, x.m FROM c LEFT JOIN LATERAL (SELECT count(*) AS n, max(v) AS m FROM b WHERE b.k = c.w) x ON true"},

	// set-returning functions: in FROM after the items they read, in the
	// select list (in lockstep), LEFT JOIN LATERAL ... ON true, WITH
	// ORDINALITY
	{name: "srf_series", query: "SELECT id, x FROM a, generate_series(1, k) AS x"},
	{name: "srf_select", query: "SELECT k, v, generate_series(k, 2) AS x, unnest(ARRAY[s, s || '!']) AS y FROM b"},
	{name: "srf_outer_agg", query: "SELECT x, count(*) AS c, sum(w) AS sw FROM c LEFT JOIN LATERAL generate_series(1, w) AS x ON true GROUP BY x"},
	{name: "srf_ord", query: "SELECT id, x, o FROM a, string_to_table(g || 'q' || g, 'q') WITH ORDINALITY AS t(x, o)"},
	{name: "srf_outer_on", query: "SELECT c.id, x FROM c LEFT JOIN LATERAL generate_series(1, w) AS x ON x <> 2 AND c.g <> 'y'"},
	{name: "srf_outer_calc", query: "SELECT a.id, t.u, t.n FROM a LEFT JOIN LATERAL (SELECT upper(x) AS u, coalesce(k, 0) + o AS n FROM string_to_table(g || 'q' || g, 'q') WITH ORDINALITY AS s(x, o) WHERE x <> '') t ON true"},

	// constant inputs (computed once at planning, sent when the view starts)
	{name: "const_codes", query: "SELECT a.id, c.label FROM a JOIN (VALUES (1, 'one'), (2, 'two'), (2, 'deux'), (NULL, 'none')) AS c(code, label) ON a.k = c.code"},
	{name: "const_outer", query: "SELECT c.x, count(b.v) AS cv, sum(b.v) AS sv FROM generate_series(0, 3) AS c(x) LEFT JOIN b ON b.k = c.x GROUP BY c.x"},
	{name: "const_in", query: "SELECT k, v, s FROM b WHERE s IN (VALUES ('x'), ('p')) AND v > (SELECT 0)"},
	{name: "const_alone", query: "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 4) SELECT n, n * n AS sq FROM r"},

	// top-N
	{name: "topn", query: "SELECT id, k, g FROM a ORDER BY k DESC NULLS LAST, id LIMIT 3"},
	{name: "topn_offset", query: "SELECT id, n FROM a ORDER BY n, id LIMIT 2 OFFSET 1"},
	{name: "topn_nopk", query: "SELECT k, v, s, f FROM b ORDER BY v, k, s, f LIMIT 4"},
	{name: "rownum", query: "SELECT * FROM (SELECT id, g, k, row_number() OVER (PARTITION BY g ORDER BY k, id) AS rn FROM a) t WHERE rn <= 2"},
	// window functions other than a top-N (the over window): partitions
	// recomputed as they change; session frames
	{name: "ow_lag", query: "SELECT id, g, k, lag(k) OVER (PARTITION BY g ORDER BY id) AS pk, sum(k) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS sk, count(*) OVER (PARTITION BY g) AS cg FROM a"},
	{name: "ow_session", ownSyntax: true, query: "SELECT id, g, ts, count(*) OVER (PARTITION BY g ORDER BY ts SESSION WITH GAP '13 hours') AS sc, min(id) OVER (PARTITION BY g ORDER BY ts SESSION WITH GAP '13 hours') AS sid, sum(w) OVER (PARTITION BY g ORDER BY ts SESSION WITH GAP '13 hours') AS sw FROM c"},
	{name: "rownum1", query: "SELECT g, id FROM (SELECT g, id, row_number() OVER (PARTITION BY g ORDER BY ts DESC NULLS LAST, id) AS rn FROM a) t WHERE rn = 1"},
	{name: "topn_one", query: "SELECT id, ts FROM a ORDER BY ts DESC NULLS LAST, id LIMIT 1"},
	{name: "rownum_nopk", query: "SELECT k, v, s FROM (SELECT k, v, s, f, row_number() OVER (PARTITION BY k ORDER BY v, s, f) AS rn FROM b) t WHERE rn <= 2"},
	{name: "topn_no_limit", query: "SELECT id FROM a ORDER BY id OFFSET 2"},
	{name: "rownum_global", query: "SELECT * FROM (SELECT id, g, row_number() OVER (ORDER BY id) AS rn FROM a) t WHERE rn <= 3"},
	{name: "rownum_range", query: "SELECT * FROM (SELECT id, g, row_number() OVER (PARTITION BY g ORDER BY id) AS rn FROM a) t WHERE rn BETWEEN 2 AND 3"},
	{name: "dist_on_nopk", query: "SELECT DISTINCT ON (k) k, v FROM b ORDER BY k, v DESC NULLS LAST, s"},
	{name: "topn_agg", query: "SELECT g, count(*) AS c FROM a GROUP BY g ORDER BY count(*) DESC, g LIMIT 2"},

	// over the APPEND ONLY table d: running extremes, bounded top-N
	{name: "ao_minmax", query: "SELECT k, min(v) AS miv, max(v) AS mav, min(s) AS mis, max(ts) AS mat, count(*) AS c, sum(v) AS sv FROM d GROUP BY k"},
	{name: "ao_global", query: "SELECT min(ts) AS mit, max(ts) AS mat, max(v) AS mav, count(DISTINCT s) AS ds FROM d WHERE v > 1"},
	{name: "ao_topn", query: "SELECT k, v, s FROM d ORDER BY v DESC, k, s LIMIT 3"},
	{name: "ao_rownum", query: "SELECT * FROM (SELECT k, v, s, row_number() OVER (PARTITION BY k ORDER BY v, s) AS rn FROM d) t WHERE rn <= 2"},
	{name: "ao_dedup", query: "SELECT k, s, v FROM (SELECT k, s, v, row_number() OVER (PARTITION BY k, s ORDER BY v DESC) AS rn FROM d) t WHERE rn = 1"},
	{name: "ao_semi_max", query: "SELECT k, max(v) AS mv, min(ts) AS mt FROM d WHERE k IN (SELECT k FROM d WHERE s = 'x') GROUP BY k"},
	{name: "ao_dist", query: "SELECT DISTINCT s, k FROM d"},
	{name: "ao_join_a", query: "SELECT a.g, max(d.v) AS mv, min(d.s) AS ms, count(*) AS c FROM d JOIN a ON d.k = a.k GROUP BY a.g"},

	// views on views
	{name: "vv_agg_join", query: "SELECT j.g, count(*) AS c, count(DISTINCT j.v) AS dv, sum(j.v) AS sv FROM {j_inner} j GROUP BY j.g"},
	{name: "vv_filter", query: "SELECT * FROM {agg_group} x WHERE x.c > 1"},
	// one view read once for two scans (a shared read of a view's changelog)
	{name: "vv_self", query: "SELECT x.g, x.c, y.sk FROM {agg_group} x JOIN {agg_group} y ON x.g = y.g AND x.c >= y.ck"},
	{name: "vv_below_max", query: "SELECT x.g, x.c, m.mc FROM {agg_group} x JOIN (SELECT max(z.c) AS mc FROM {agg_group} z) m ON x.c < m.mc"},
	{name: "vv_join", query: "SELECT x.g, x.c, y.id FROM {agg_group} x JOIN {dist_on} y ON x.g = y.g"},
	{name: "vv_topn", query: "SELECT x.g, x.c FROM {agg_group} x ORDER BY x.c DESC, x.g LIMIT 2"},
	{name: "vv_left", query: "SELECT j.id, j.v, u.k FROM {j_left} j LEFT JOIN {uni} u ON j.k = u.k"},
	{name: "vv_uni", query: "SELECT u.k, count(*) AS c FROM {uni} u JOIN {uni_all} w ON u.k = w.k GROUP BY u.k"},
	{name: "vv_rownum", query: "SELECT * FROM (SELECT x.k, x.g, x.c, row_number() OVER (PARTITION BY x.k ORDER BY x.c DESC, x.g NULLS FIRST) AS rn FROM {j_agg_keys} x) t WHERE rn = 1"},
	{name: "vv_ao", query: "SELECT x.s, count(*) AS c FROM {ao_dist} x GROUP BY x.s ORDER BY count(*) DESC, x.s LIMIT 2"},
	{name: "vv_vv", query: "SELECT count(*) AS c, sum(x.c) AS total FROM {vv_agg_join} x"},
}

var refRE = regexp.MustCompile(`\{([a-z_0-9]+)\}`)

// deps are the corpus views the query references.
func (v viewDef) deps() []string {
	var out []string
	for _, m := range refRE.FindAllStringSubmatch(v.query, -1) {
		out = append(out, m[1])
	}
	return out
}

// viewSQL is the query as the view is defined: references name the views.
func (v viewDef) viewSQL() string {
	return refRE.ReplaceAllString(v.query, "$1")
}

// batchSQL is the query over the tables: references become the referenced
// views' batch queries, inlined.
func (v viewDef) batchSQL() string {
	return refRE.ReplaceAllStringFunc(v.query, func(m string) string {
		return "(" + corpusView(m[1:len(m)-1]).batchSQL() + ")"
	})
}

func corpusView(name string) viewDef {
	for _, v := range corpus {
		if v.name == name {
			return v
		}
	}
	panic("streamprop: no corpus view " + name)
}

// create is the view's DDL; materialized for streamsql, a plain view for
// PostgreSQL (which then answers the query over the current tables).
func (v viewDef) create(materialized bool) string {
	kw := "VIEW"
	if materialized {
		kw = "MATERIALIZED VIEW"
	}
	return "CREATE " + kw + " " + v.name + " AS " + v.viewSQL()
}

func (v viewDef) String() string { return v.name + ": " + strings.TrimSpace(v.viewSQL()) }
