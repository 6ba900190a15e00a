package planner

// The catalog set-returning functions, compared with
// PostgreSQL by TestOracle. _pg_expandarray's whole record prints as
// {x,n} here and as (x,n) in PostgreSQL, so only its fields are compared.
func init() {
	oracleQueries = append(oracleQueries,
		"SELECT * FROM information_schema._pg_expandarray(ARRAY[30, 10, 20])",
		"SELECT (information_schema._pg_expandarray(ARRAY[30, 10, 20]::int2[])).n, (information_schema._pg_expandarray(ARRAY[30, 10, 20]::int2[])).x",
		"SELECT (r.k).x, (r.k).n FROM (SELECT information_schema._pg_expandarray(ARRAY[5, 7, 9]) AS k) r WHERE (r.k).x > 5",
		"SELECT t.a, (information_schema._pg_expandarray(ARRAY[t.a, t.a * 10])).x FROM t WHERE t.a < 3",
		"SELECT * FROM pg_options_to_table(ARRAY['a=b', 'c=d=e', 'f'])",
		"SELECT (jsonb_each('{\"a\": 1, \"b\": [2]}')).key",
		"SELECT generate_subscripts(ARRAY[4, 5, 6], 1), generate_subscripts(ARRAY[4, 5, 6], 1, true)",
		"SELECT * FROM generate_subscripts(ARRAY['x', 'y'], 1) AS s(i)",
		"SELECT generate_subscripts(ARRAY[1], 2)",
	)
}
