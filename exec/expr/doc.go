// Package expr is streamsql's vectorized scalar expression evaluator: bound,
// typed expression trees (nodes.go) evaluated over whole Arrow record batches,
// the function and operator registry with PostgreSQL's overload resolution and
// implicit casts, and the kernels behind them.
//
// An expression such as `price * 2 > 100 AND name LIKE 'a%'` binds to
//
//	And
//	├── Call >  (Call * (ColRef price, Const 2), Const 100)
//	└── Like (ColRef name, Const 'a%')
//
// and Eval returns one boolean array for the batch. Expr trees are immutable and
// shared; per-execution state lives in Context.
//
// Where things are:
//
//   - registry.go: Register, NewCall, NewBinary, NewUnary and the overload
//     resolution (PostgreSQL's func_select_candidate); coerce.go: the cast
//     contexts (pg_cast), NewCast, Coerce, CommonType.
//   - leaf.go, call.go, logic.go, case.go, inlist.go, like.go, subquery.go,
//     arrayexpr.go: Eval and String of every node. CASE, COALESCE and
//     AND/OR evaluate later operands only on the rows that need them.
//   - arith.go, compare.go, numeric.go, text.go: the hot kernels (tight loops
//     over Arrow buffers, PostgreSQL's overflow and division errors).
//   - cast.go, cast_value.go: casts (vectorized between numeric types, row at
//     a time otherwise, via types' text I/O).
//   - datetime*.go, funcs_*.go, to_char.go, to_date.go, json*.go, array_ops.go:
//     operators and functions, most of them row-at-a-time through RowKernel.
//     to_char_cache.go compiles each distinct to_char template once (a
//     bounded cache shared by all goroutines) rather than once per row.
//
// Binder notes: polymorphic and variadic functions (greatest, least, concat,
// format, array_*, to_jsonb, jsonb_build_*, pg_typeof) resolve through NewCall
// like any other; NewCase, NewCoalesce, NewNullIf, NewIsDistinct, NewInList,
// NewLike, NewQuantified, NewArrayExpr and NewSubscript build the special
// nodes with PostgreSQL's type rules. Constants are cast at bind time, except
// date/time input, which depends on DateStyle and TimeZone and is parsed by
// Fold (or at evaluation) with the session's settings.
package expr
