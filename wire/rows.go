package wire

import (
	"context"
	"encoding/binary"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// Format codes of the protocol.
const (
	formatText   int16 = 0
	formatBinary int16 = 1
)

// flushBytes is how much encoded output is gathered before it is written.
const flushBytes = 64 << 10

// rowDescription describes result columns sent in the given formats.
func rowDescription(cols []types.Column, formats []int16) *pgproto3.RowDescription {
	fields := make([]pgproto3.FieldDescription, len(cols))
	for i, col := range cols {
		f := formatText
		if i < len(formats) {
			f = formats[i]
		}
		fields[i] = pgproto3.FieldDescription{
			Name:                 []byte(col.Name),
			DataTypeOID:          col.Type.OID(),
			DataTypeSize:         col.Type.Len(),
			TypeModifier:         col.Type.Typmod,
			Format:               f,
			TableOID:             col.TableOID,
			TableAttributeNumber: uint16(col.AttNum),
		}
	}
	return &pgproto3.RowDescription{Fields: fields}
}

// rowsTag completes a row-returning command's tag with its row count.
// INSERT ... RETURNING gets PostgreSQL's "INSERT 0 n" (the 0 is the oid
// field that PostgreSQL keeps for compatibility).
func rowsTag(verb string, n int64) []byte {
	tag := make([]byte, 0, len(verb)+23)
	tag = append(tag, verb...)
	if verb == "INSERT" {
		tag = append(tag, " 0"...)
	}
	tag = append(tag, ' ')
	return strconv.AppendInt(tag, n, 10)
}

// rawMessage is an already encoded run of backend messages.
type rawMessage []byte

func (rawMessage) Backend()                            {}
func (m rawMessage) Decode([]byte) error               { return nil }
func (m rawMessage) Encode(dst []byte) ([]byte, error) { return append(dst, m...), nil }

// rowSource is an open result being sent as DataRows: its iterator and the
// batch it is in the middle of, so a portal can stop after max rows and
// continue on the next Execute. Used by the connection goroutine only.
type rowSource struct {
	it      exec.Iterator
	live    engine.TryNexter // it, if its rows may wait for input
	cols    []types.Column
	formats []int16 // per column
	batch   arrow.RecordBatch
	arrs    []arrow.Array // batch's columns
	pos     int           // next row of batch
	done    bool
}

// newRowSource prepares to send its rows; formats are per column (nil =
// all text).
func newRowSource(it exec.Iterator, cols []types.Column, formats []int16) *rowSource {
	f := make([]int16, len(cols))
	copy(f, formats)
	rs := &rowSource{it: it, cols: cols, formats: f}
	rs.live, _ = it.(engine.TryNexter)
	return rs
}

// close releases the iterator; safe to call more than once.
func (rs *rowSource) close() {
	if rs.batch != nil {
		rs.batch.Release()
		rs.batch = nil
	}
	if rs.it != nil {
		_ = rs.it.Close()
		rs.it = nil
	}
	rs.done = true
}

// send sends up to limit rows (0 = all) as DataRows. It reports how many it
// sent and whether the result is exhausted. The context is checked between
// batches so a cancel stops even an iterator that ignores it. Rows that must
// wait for input (a subscription) reach the client before the wait.
func (rs *rowSource) send(ctx context.Context, c *conn, limit int64) (n int64, done bool, err error) {
	defer c.recoverTo(&err) // a value the formatting code cannot handle
	buf := c.wbuf[:0]
	complete := 0 // buf[:complete] holds whole DataRows
	defer func() {
		if complete > 0 {
			c.be.Send(rawMessage(buf[:complete]))
		}
		c.wbuf = buf[:0]
	}()
	for !rs.done && (limit == 0 || n < limit) {
		if rs.batch == nil || rs.pos >= int(rs.batch.NumRows()) {
			err := rs.nextBatch(ctx, c, func() error {
				if complete > 0 {
					c.be.Send(rawMessage(buf[:complete]))
					buf, complete = buf[:0], 0
				}
				return c.flush()
			})
			if err != nil {
				return n, false, err
			}
			if ns := c.notices.Take(); len(ns) > 0 { // raised computing the batch: before its rows
				if complete > 0 {
					c.be.Send(rawMessage(buf[:complete]))
					buf, complete = buf[:0], 0
				}
				for _, m := range ns {
					c.be.Send(noticeResponse(m))
				}
			}
			continue
		}
		end := int(rs.batch.NumRows())
		if limit > 0 && int64(end-rs.pos) > limit-n {
			end = rs.pos + int(limit-n)
		}
		for ; rs.pos < end; rs.pos++ {
			buf, err = appendDataRow(buf, rs.arrs, rs.pos, rs.cols, rs.formats, &c.fo)
			if err != nil {
				return n, false, err
			}
			complete = len(buf)
			n++
			if complete >= flushBytes {
				c.be.Send(rawMessage(buf))
				buf, complete = buf[:0], 0
				if err := c.flush(); err != nil {
					return n, false, err
				}
			}
		}
	}
	return n, rs.done, nil
}

// nextBatch moves to the iterator's next batch, or closes the source at the
// end. beforeWait runs before waiting for a live iterator (see
// conn.nextBatch).
func (rs *rowSource) nextBatch(ctx context.Context, c *conn, beforeWait func() error) error {
	if rs.batch != nil {
		rs.batch.Release()
		rs.batch = nil
	}
	b, err := c.nextBatch(ctx, rs.it, rs.live, beforeWait)
	if err != nil {
		return err
	}
	if b == nil {
		rs.close()
		return nil
	}
	rs.batch, rs.arrs, rs.pos = b, b.Columns(), 0
	return nil
}

// appendDataRow appends one DataRow message for row i of the arrays.
func appendDataRow(dst []byte, arrs []arrow.Array, i int, cols []types.Column, formats []int16, fo *types.FormatOptions) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 'D', 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(cols)))
	for j, col := range cols {
		lenAt := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		var null bool
		var err error
		if formats[j] == formatBinary {
			dst, null, err = appendBinaryValue(dst, arrs[j], i, col.Type)
		} else {
			dst, null = appendTextValue(dst, arrs[j], i, col.Type, fo)
		}
		if err != nil {
			return dst, err
		}
		n := int32(len(dst) - lenAt - 4)
		if null {
			n = -1
		}
		binary.BigEndian.PutUint32(dst[lenAt:], uint32(n))
	}
	binary.BigEndian.PutUint32(dst[start+1:], uint32(len(dst)-start-1))
	return dst, nil
}

// appendTextValue appends the text output of row i of a (of SQL type t),
// or reports NULL. The common storage types are formatted here directly;
// the rest goes through types.AppendText.
func appendTextValue(dst []byte, a arrow.Array, i int, t types.T, fo *types.FormatOptions) ([]byte, bool) {
	if t.Kind == types.Void {
		return dst, false // void prints as an empty string, never NULL
	}
	if a.IsNull(i) {
		return dst, true
	}
	switch t.Kind {
	case types.Int2:
		if a, ok := a.(*array.Int16); ok {
			return strconv.AppendInt(dst, int64(a.Value(i)), 10), false
		}
	case types.Int4:
		if a, ok := a.(*array.Int32); ok {
			return strconv.AppendInt(dst, int64(a.Value(i)), 10), false
		}
	case types.Int8:
		if a, ok := a.(*array.Int64); ok {
			return strconv.AppendInt(dst, a.Value(i), 10), false
		}
	case types.Oid:
		if a, ok := a.(*array.Uint32); ok {
			return strconv.AppendUint(dst, uint64(a.Value(i)), 10), false
		}
	case types.Bool:
		if a, ok := a.(*array.Boolean); ok {
			if a.Value(i) {
				return append(dst, 't'), false
			}
			return append(dst, 'f'), false
		}
	case types.Text, types.Varchar, types.Name, types.Unknown, types.JSON, types.UUID:
		if a, ok := a.(*array.String); ok {
			return append(dst, a.Value(i)...), false
		}
	}
	v := types.ValueAt(a, i, t)
	if v == nil {
		return dst, true
	}
	return types.AppendText(dst, v, t, fo), false
}

// PostgreSQL sends every NaN with the bits of C's NAN; Go's math.NaN()
// differs in the last bit.
const (
	nan4Bits uint32 = 0x7fc00000
	nan8Bits uint64 = 0x7ff8000000000000
)

// appendBinaryValue appends the binary send format of row i of a, or
// reports NULL.
func appendBinaryValue(dst []byte, a arrow.Array, i int, t types.T) ([]byte, bool, error) {
	if t.Kind == types.Void {
		return dst, false, nil
	}
	if a.IsNull(i) {
		return dst, true, nil
	}
	switch t.Kind {
	case types.Int2:
		if a, ok := a.(*array.Int16); ok {
			return binary.BigEndian.AppendUint16(dst, uint16(a.Value(i))), false, nil
		}
	case types.Int4:
		if a, ok := a.(*array.Int32); ok {
			return binary.BigEndian.AppendUint32(dst, uint32(a.Value(i))), false, nil
		}
	case types.Int8:
		if a, ok := a.(*array.Int64); ok {
			return binary.BigEndian.AppendUint64(dst, uint64(a.Value(i))), false, nil
		}
	case types.Float4:
		if a, ok := a.(*array.Float32); ok {
			f := a.Value(i)
			if f != f {
				return binary.BigEndian.AppendUint32(dst, nan4Bits), false, nil
			}
			return binary.BigEndian.AppendUint32(dst, math.Float32bits(f)), false, nil
		}
	case types.Float8:
		if a, ok := a.(*array.Float64); ok {
			f := a.Value(i)
			if f != f {
				return binary.BigEndian.AppendUint64(dst, nan8Bits), false, nil
			}
			return binary.BigEndian.AppendUint64(dst, math.Float64bits(f)), false, nil
		}
	case types.Oid:
		if a, ok := a.(*array.Uint32); ok {
			return binary.BigEndian.AppendUint32(dst, a.Value(i)), false, nil
		}
	case types.Bool:
		if a, ok := a.(*array.Boolean); ok {
			if a.Value(i) {
				return append(dst, 1), false, nil
			}
			return append(dst, 0), false, nil
		}
	case types.Text, types.Varchar, types.Name, types.Unknown, types.JSON:
		if a, ok := a.(*array.String); ok {
			return append(dst, a.Value(i)...), false, nil
		}
	case types.Bytea:
		if a, ok := a.(*array.Binary); ok {
			return append(dst, a.Value(i)...), false, nil
		}
	}
	v := types.ValueAt(a, i, t)
	if v == nil {
		return dst, true, nil
	}
	out, err := types.AppendBinary(dst, v, t)
	return out, false, err
}
