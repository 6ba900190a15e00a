// Package planner binds PostgreSQL parse trees against the catalog and plans
// them into trees of exec.Node.
//
//	SELECT k, count(*) FROM t WHERE v > 10 GROUP BY k ORDER BY 2 DESC LIMIT 5
//
//	Limit 5
//	  Sort count DESC
//	    HashAgg keys=[k] aggs=[count(*)]
//	      Scan t [k, v] filter=(v > 10)
//
// A statement goes through three steps, each in its own files:
//
//   - Binding (scope.go, bind_*.go, srf*.go, rows.go, anyarray.go,
//     recursive.go, lateral.go, dml.go, ddl.go) resolves names as
//     PostgreSQL does (FROM items, aliases, USING/NATURAL merged columns,
//     outer references, GROUP BY / ORDER BY by name, ordinal or expression,
//     functional dependency on a grouped primary key), types expressions
//     through exec/expr's constructors, and reports PostgreSQL's errors with
//     their SQLSTATE and position. Views and WITH queries are inlined
//     (bound again at each reference).
//   - The logical plan (logical.go) is a small algebra whose columns carry
//     statement-wide ids, so rules (optimize.go, decorrelate.go) move
//     filters and reorder joins without renumbering: predicate pushdown into
//     scans, through projections, sorts and group keys and into join sides;
//     an inner-join order that follows equality conditions; uncorrelated
//     IN (subquery) and correlated [NOT] EXISTS in WHERE become semi (anti)
//     joins (NOT IN stays a subquery: its NULL semantics are not an anti
//     join's).
//   - Physical translation (physical.go) asks each node only for the
//     columns its parent needs (scans read only those), turns ids into batch
//     positions, plans subqueries with their enclosing batch layout, folds
//     constant subtrees, builds hash tables from the smaller join input
//     (estimate.go) and picks HashJoin for equi-joins, NestedLoopJoin
//     otherwise.
//
// Collation: streamsql compares text in byte order (the C collation).
// COLLATE default, C or POSIX change nothing; other names are refused
// (collate.go).
//
// Continuous queries (CREATE MATERIALIZED VIEW, SUBSCRIBE (query)) share
// binding and rewrite rules and are translated into exec/stream operators
// instead (stream*.go, PlanStream, ExplainStream), with each operator's
// stream key derived along the way.
//
// Time windows (window_*.go): TUMBLE, HOP, SESSION and CUMULATE in FROM
// and the legacy GROUP BY TUMBLE(...) bind into one logical node
// (lTimeWindow); batch queries run it as exec.WindowExpand or
// exec.SessionWindow, continuous queries as stream.WindowAgg under a
// GROUP BY on its window (with the EMIT clause, Env.Emit) or
// stream.WindowExpand. docs/windows.md has the rules.
//
// DML (dml.go, onconflict*.go) produces the Source plans engine/ writes
// from; ALTER TABLE binding lives in alter.go.
//
// GROUPING SETS, ROLLUP and CUBE run one aggregation per set over a shared
// input and append the results; GROUPING() is a constant per set.
//
// Not supported yet (0A000): CHECK / FOREIGN KEY constraints, frame
// EXCLUDE, named function arguments, SIMILAR TO, LATERAL subqueries with
// grouping or LIMIT, set-returning functions returning records in a select
// list, composite values (row values outside comparisons, whole-row
// references), WITH in INSERT/UPDATE/DELETE. An aggregate inside a
// subquery reading only outer columns aggregates the outer query
// (bind_outeragg.go).
//
// Temporary relations: CREATE TEMP puts a relation in Env.TempSchema
// (createSchema); the engine and catalog do the rest.
//
// Everything here runs in the goroutine of the statement being planned; the
// plans produced are immutable and may run concurrently.
package planner
