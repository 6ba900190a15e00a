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
package expr
