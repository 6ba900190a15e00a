package wire

import (
	"context"
	"encoding/binary"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// copyIn runs the COPY FROM STDIN sub-protocol: CopyInResponse, then the
// client's CopyData until CopyDone (load and CommandComplete) or CopyFail.
// Flush and Sync are ignored meanwhile, as in PostgreSQL.
func (c *conn) copyIn(ctx context.Context, in engine.CopyIn) (err error) {
	format := formatText
	if in.Binary() {
		format = formatBinary
	}
	codes := make([]uint16, in.Columns())
	for i := range codes {
		codes[i] = uint16(format)
	}
	c.be.Send(&pgproto3.CopyInResponse{OverallFormat: byte(format), ColumnFormatCodes: codes})
	if err := c.flush(); err != nil {
		in.Abort("connection lost")
		return err
	}
	finished := false
	defer func() {
		if !finished {
			c.call(func() error { in.Abort("COPY failed"); return nil })
		}
	}()
	for {
		msg, rerr := c.be.Receive()
		if rerr != nil {
			c.ioErr = c.readError(rerr) // FATAL for an oversized CopyData
			return c.ioErr
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			if err := ctx.Err(); err != nil {
				return err
			}
			data := append([]byte(nil), m.Data...) // m.Data is the reader's buffer
			if err := c.call(func() error { return in.Write(data) }); err != nil {
				return err
			}
		case *pgproto3.CopyDone:
			var tag string
			err := c.call(func() error {
				var err error
				tag, err = in.Finish()
				return err
			})
			finished = true
			if err != nil {
				return err
			}
			c.drainNotices()
			c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
			return nil
		case *pgproto3.CopyFail:
			reason := m.Message
			finished = true
			c.call(func() error { in.Abort(reason); return nil })
			return pgerr.New(pgerr.QueryCanceled, "COPY from stdin failed: %s", reason)
		case *pgproto3.Flush, *pgproto3.Sync:
		default:
			return protocolError("unexpected message type 0x%02X during COPY from stdin", typeByte(msg))
		}
	}
}

// copyOut runs COPY TO STDOUT: CopyOutResponse, one CopyData per row (as
// PostgreSQL sends, and as libpq's PQgetCopyData promises) in PostgreSQL's
// text or CSV format, CopyDone and CommandComplete "COPY n". Rows that must
// wait for input (COPY (SUBSCRIBE ...)) reach the client before the wait.
func (c *conn) copyOut(ctx context.Context, out *engine.CopyOut) (err error) {
	defer c.recoverTo(&err) // a value the formatting code cannot handle
	defer func() {
		if out.Rows != nil {
			_ = out.Rows.Close()
		}
	}()
	enc := newCopyEncoder(out)
	codes := make([]uint16, len(out.Columns))
	overall := byte(formatText)
	if enc.binary {
		overall = byte(formatBinary)
		for i := range codes {
			codes[i] = uint16(formatBinary)
		}
	}
	c.be.Send(&pgproto3.CopyOutResponse{OverallFormat: overall, ColumnFormatCodes: codes})
	buf := c.wbuf[:0]
	complete := 0 // buf[:complete] holds whole CopyData messages
	defer func() {
		if complete > 0 { // rows before an error are sent, as PostgreSQL does
			c.be.Send(rawMessage(buf[:complete]))
		}
		c.wbuf = buf[:0]
	}()
	if out.Header {
		buf = enc.appendHeader(append(buf, 'd', 0, 0, 0, 0))
		finishCopyData(buf, 0)
		complete = len(buf)
	}
	var n int64
	live, _ := out.Rows.(engine.TryNexter)
	beforeWait := func() error {
		c.be.Send(rawMessage(buf[:complete]))
		buf, complete = buf[:0], 0
		return c.flush()
	}
	for out.Rows != nil {
		b, err := c.nextBatch(ctx, out.Rows, live, beforeWait)
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		arrs := b.Columns()
		for i := 0; i < int(b.NumRows()); i++ {
			start := len(buf)
			buf = append(buf, 'd', 0, 0, 0, 0)
			if enc.binary {
				buf, err = enc.appendBinaryRow(buf, arrs, i)
				if err != nil {
					b.Release()
					buf = buf[:complete]
					return err
				}
			} else {
				buf = enc.appendRow(buf, arrs, i, &c.fo)
			}
			finishCopyData(buf, start)
			complete = len(buf)
			n++
			if complete >= flushBytes {
				c.be.Send(rawMessage(buf))
				buf, complete = buf[:0], 0
				if err := c.flush(); err != nil {
					b.Release()
					return err
				}
			}
		}
		b.Release()
	}
	if enc.binary { // the trailer, with the file header if no row came
		start := len(buf)
		buf = enc.appendBinaryHeader(append(buf, 'd', 0, 0, 0, 0))
		buf = binary.BigEndian.AppendUint16(buf, 0xffff)
		finishCopyData(buf, start)
	}
	c.be.Send(rawMessage(buf))
	buf, complete = buf[:0], 0
	c.be.Send(&pgproto3.CopyDone{})
	c.drainNotices()
	c.be.Send(&pgproto3.CommandComplete{CommandTag: rowsTag("COPY", n)})
	return nil
}

// finishCopyData writes the length of the CopyData message at buf[start:].
func finishCopyData(buf []byte, start int) {
	binary.BigEndian.PutUint32(buf[start+1:], uint32(len(buf)-start-1))
}

// copyEncoder writes rows in COPY's text, CSV or binary format.
type copyEncoder struct {
	cols       []types.Column
	csv        bool
	binary     bool
	headerSent bool   // binary: the file header went out (with the first row)
	forceQuote []bool // csv FORCE_QUOTE, per column
	delim      byte
	null       string
	quote      byte
	escape     byte
	valBuf     []byte
	singleCol  bool
}

func newCopyEncoder(out *engine.CopyOut) *copyEncoder {
	e := &copyEncoder{cols: out.Columns, csv: strings.EqualFold(out.Format, "csv"), singleCol: len(out.Columns) == 1,
		binary: strings.EqualFold(out.Format, "binary"), forceQuote: out.ForceQuote}
	e.delim, e.null = '\t', `\N`
	if e.csv {
		e.delim, e.null, e.quote = ',', "", '"'
	}
	if out.Delimiter != "" {
		e.delim = out.Delimiter[0]
	}
	if out.Null != "" || e.csv {
		e.null = out.Null
	}
	if out.Quote != "" {
		e.quote = out.Quote[0]
	}
	e.escape = e.quote
	if out.Escape != "" {
		e.escape = out.Escape[0]
	}
	return e
}

// appendHeader appends the HEADER line: the column names.
func (e *copyEncoder) appendHeader(dst []byte) []byte {
	for i, col := range e.cols {
		if i > 0 {
			dst = append(dst, e.delim)
		}
		dst = e.appendField(dst, []byte(col.Name))
	}
	return append(dst, '\n')
}

// appendRow appends row i of the arrays as one line.
func (e *copyEncoder) appendRow(dst []byte, arrs []arrow.Array, i int, fo *types.FormatOptions) []byte {
	for j, col := range e.cols {
		if j > 0 {
			dst = append(dst, e.delim)
		}
		var null bool
		e.valBuf, null = appendTextValue(e.valBuf[:0], arrs[j], i, col.Type, fo)
		if null {
			dst = append(dst, e.null...)
			continue
		}
		if e.csv && j < len(e.forceQuote) && e.forceQuote[j] {
			dst = e.appendQuoted(dst, e.valBuf)
			continue
		}
		dst = e.appendField(dst, e.valBuf)
	}
	return append(dst, '\n')
}

// appendField appends one non-NULL value with the format's escaping.
func (e *copyEncoder) appendField(dst, v []byte) []byte {
	if e.csv {
		return e.appendCSV(dst, v)
	}
	return e.appendText(dst, v)
}

// appendText escapes like PostgreSQL's text COPY: backslash, the delimiter
// and the control characters \b \f \n \r \t \v get a backslash escape.
func (e *copyEncoder) appendText(dst, v []byte) []byte {
	for _, ch := range v {
		switch ch {
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\v':
			dst = append(dst, '\\', 'v')
		case '\\':
			dst = append(dst, '\\', '\\')
		default:
			if ch == e.delim {
				dst = append(dst, '\\')
			}
			dst = append(dst, ch)
		}
	}
	return dst
}

// appendCSV quotes a value when it holds the delimiter, the quote, a line
// break, equals the NULL string, or is a lone `\.` in a one-column COPY;
// inside quotes the quote and escape characters are escaped.
func (e *copyEncoder) appendCSV(dst, v []byte) []byte {
	s := string(v)
	quote := s == e.null || (e.singleCol && s == `\.`) ||
		strings.IndexByte(s, e.delim) >= 0 || strings.IndexByte(s, e.quote) >= 0 ||
		strings.ContainsAny(s, "\r\n")
	if !quote {
		return append(dst, v...)
	}
	return e.appendQuoted(dst, v)
}

// appendQuoted appends v in CSV quotes, escaping the quote and escape
// characters inside.
func (e *copyEncoder) appendQuoted(dst, v []byte) []byte {
	dst = append(dst, e.quote)
	for _, ch := range v {
		if ch == e.quote || ch == e.escape {
			dst = append(dst, e.escape)
		}
		dst = append(dst, ch)
	}
	return append(dst, e.quote)
}

// copyBinaryHeader is PostgreSQL's binary COPY file header: the signature,
// flags 0 (no OIDs) and an empty header extension.
var copyBinaryHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

// appendBinaryHeader appends the file header unless it was sent; as in
// PostgreSQL it travels in the first row's CopyData (or the trailer's).
func (e *copyEncoder) appendBinaryHeader(dst []byte) []byte {
	if e.headerSent {
		return dst
	}
	e.headerSent = true
	return append(dst, copyBinaryHeader...)
}

// appendBinaryRow appends row i as a binary COPY tuple: the field count,
// then each field's length (-1 for NULL) and its binary send format, the
// same bytes the extended protocol sends for a binary result column.
func (e *copyEncoder) appendBinaryRow(dst []byte, arrs []arrow.Array, i int) ([]byte, error) {
	dst = e.appendBinaryHeader(dst)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(e.cols)))
	for j, col := range e.cols {
		lenAt := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		var null bool
		var err error
		dst, null, err = appendBinaryValue(dst, arrs[j], i, col.Type)
		if err != nil {
			return dst, err
		}
		n := int32(len(dst) - lenAt - 4)
		if null {
			n = -1
		}
		binary.BigEndian.PutUint32(dst[lenAt:], uint32(n))
	}
	return dst, nil
}
