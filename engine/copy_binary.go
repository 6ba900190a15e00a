package engine

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// copyBinarySignature starts PostgreSQL's binary COPY format.
var copyBinarySignature = []byte("PGCOPY\n\xff\r\n\x00")

// writeBinary consumes binary COPY data: a header, then tuples of
// (int16 field count, then per field int32 length (-1 = NULL) and bytes in
// the type's binary format), then the int16 -1 trailer. Incomplete input is
// kept until the next Write.
func (c *copyIn) writeBinary(data []byte) error {
	if len(c.partial) > 0 {
		data = append(c.partial, data...)
		c.partial = nil
	}
	if !c.headerDone {
		// signature (11) + flags (4) + extension length (4) + extension
		if len(data) < 19 {
			c.partial = append([]byte(nil), data...)
			return nil
		}
		if !bytes.Equal(data[:11], copyBinarySignature) {
			return c.errorf(pgerr.BadCopyFileFormat, "COPY file signature not recognized")
		}
		ext := int(binary.BigEndian.Uint32(data[15:19]))
		if len(data) < 19+ext {
			c.partial = append([]byte(nil), data...)
			return nil
		}
		data = data[19+ext:]
		c.headerDone = true
	}
	for len(data) >= 2 {
		nf := int(int16(binary.BigEndian.Uint16(data)))
		if nf == -1 {
			c.done = true
			return nil
		}
		end, ok := tupleEnd(data, nf)
		if !ok {
			break
		}
		c.line++
		if nf != len(c.target) {
			return c.errorf(pgerr.BadCopyFileFormat, "row field count is %d, expected %d", nf, len(c.target))
		}
		if err := c.binaryRow(data[2:end], nf); err != nil {
			return err
		}
		data = data[end:]
	}
	c.partial = append([]byte(nil), data...)
	return nil
}

// tupleEnd returns the end offset of a complete tuple of nf fields at data.
func tupleEnd(data []byte, nf int) (int, bool) {
	off := 2
	for i := 0; i < nf; i++ {
		if len(data) < off+4 {
			return 0, false
		}
		n := int(int32(binary.BigEndian.Uint32(data[off:])))
		off += 4
		if n > 0 {
			off += n
		}
	}
	return off, off <= len(data)
}

func (c *copyIn) binaryRow(data []byte, nf int) error {
	filled := make([]bool, len(c.rel.Columns))
	for i := 0; i < nf; i++ {
		n := int(int32(binary.BigEndian.Uint32(data)))
		data = data[4:]
		col := c.target[i]
		filled[col] = true
		if n < 0 {
			c.builders[col].AppendNull()
			continue
		}
		t := c.rel.Columns[col].Type
		v, err := types.ParseBinary(data[:n], t)
		data = data[n:]
		if err == nil {
			err = types.AppendValue(c.builders[col], v, t)
		}
		if err != nil {
			if e := pgerr.As(err); e != nil {
				e2 := *e
				e2.Detail = fmt.Sprintf("COPY %s, line %d, column %s", c.rel.Name, c.line, c.rel.Columns[col].Name)
				return &e2
			}
			return err
		}
	}
	for i, ok := range filled {
		if !ok {
			c.builders[i].AppendNull()
		}
	}
	c.rows++
	if c.rows >= copyRowsPerBatch {
		c.flushBatch()
	}
	return nil
}
