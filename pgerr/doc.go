// Package pgerr holds PostgreSQL SQLSTATE codes and the error type that carries
// them from any layer of streamsql to the wire.
//
// Every error a user can cause is a *Error (or wraps one, found with errors.As):
// the wire turns it into an ErrorResponse with the same SQLSTATE PostgreSQL would
// send. Errors that are not *Error reach the client as XX000 internal_error.
//
// Errors are immutable values; they are safe to share between goroutines.
package pgerr
