package engine

// FailTransaction puts an open transaction block into the failed state, as
// any error does in PostgreSQL. The wire calls it for errors the session did
// not return itself: a syntax error, a bad Bind parameter, an error raised
// while the rows of a result are being read. Outside a block it does nothing.
// Called from the session's connection goroutine.
func (s *Session) FailTransaction() {
	if s.tx == 'T' {
		s.tx = 'E'
	}
}
