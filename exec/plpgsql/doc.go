// Package plpgsql runs PL/pgSQL functions: a Program is a function's body
// compiled by the planner (planner/plpgsql.go) into statements whose
// expressions are bound expr.Expr trees reading the function's variables,
// and Program.Call runs it for one call's arguments.
//
// The language covered is the part that computes a value from the
// arguments: DECLARE with defaults, CONSTANT and NOT NULL, assignment,
// IF/ELSIF/ELSE, CASE (compiled as IF), LOOP, WHILE, FOR over an integer
// range (REVERSE, BY), FOREACH over an array, ASSERT, EXIT and CONTINUE
// with labels and WHEN, RETURN, RAISE (levels, format parameters, USING
// ERRCODE/MESSAGE/DETAIL/HINT, a condition name, re-raise) and EXCEPTION
// blocks (WHEN condition [OR ...], SQLSTATE 'xxxxx', OTHERS; SQLSTATE and
// SQLERRM in handlers). Statements that run SQL against tables (SELECT
// INTO, PERFORM, INSERT, EXECUTE, FOR over a query, cursors, RETURN
// NEXT/QUERY, GET DIAGNOSTICS) are refused by name when the function is
// created.
//
// Ownership and concurrency: a Program is immutable after compilation and
// may be called by any number of goroutines at once (each call has a
// frame of its own). RAISE NOTICE, INFO and WARNING go to the statement's
// pgerr.NoticeQueue when its context carries one (a client's statement),
// and are dropped otherwise (a materialized view's maintenance).
package plpgsql
