package wire

import (
	"errors"
	"io"
	"strings"
)

// sockReader passes the connection's reads through and remembers the last
// error the socket returned. pgproto3 reports some malformed message bodies
// (a string without its terminating NUL) as io.EOF; with this, run tells
// such a message, read whole, from the client going away. Used by the
// connection's goroutine only.
type sockReader struct {
	r   io.Reader
	err error
}

func (s *sockReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil {
		s.err = err
	}
	return n, err
}

// malformedMessage reports whether err, from Backend.Receive, is about the
// body of a message that was read whole, so that the connection can go on:
// PostgreSQL answers ERROR 08P01 and, in extended query mode, skips to the
// next Sync. Unknown message types and bad lengths leave the stream out of
// step and stay fatal (readError).
func (c *conn) malformedMessage(err error) bool {
	if c.sr == nil || c.sr.err != nil {
		return false
	}
	// Decode's errors: io.EOF for a missing terminator, pgproto3's
	// invalidMessageFormatErr ("<Type> body is invalid ..."). Anything else
	// (an unknown type, a bad or oversized length) is fatal.
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), " body is invalid")
}

// reportMalformed answers a malformed message as PostgreSQL does: ERROR
// 08P01, then ReadyForQuery for a simple Query, or skipping to Sync for the
// extended protocol's messages.
func (c *conn) reportMalformed(err error) error {
	text := "invalid message format"
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		text = "invalid string in message"
	}
	if strings.HasPrefix(err.Error(), "Query ") {
		c.sendError(protocolError("%s", text))
		return c.readyForQuery()
	}
	return c.extendedError(protocolError("%s", text))
}
