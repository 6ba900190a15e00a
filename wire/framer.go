package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
)

// framer sits between the socket and pgproto3.Backend, which allocates a
// message's whole declared length before reading its body: a client that
// declares 64 MiB and sends 5 bytes would cost 64 MiB. The framer reads
// each message header itself; a body up to framerDirect bytes (or one over
// the limit, which the Backend refuses from the header) passes straight
// through, and a larger one is first collected in a buffer that grows as
// its bytes arrive (doubling, from framerDirect), so memory follows what
// the client has sent, not what it announced. The Backend then copies the
// whole message once. Used by the connection's goroutine only.
type framer struct {
	r       *bufio.Reader
	limit   *int   // the Backend's body limit (conn.maxBody)
	pending []byte // bytes to hand out before reading more
	direct  int    // body bytes of the current message still to pass through
	hdr     [5]byte
}

// framerDirect is the largest body passed through without collecting it.
const framerDirect = 64 << 10

func newFramer(r io.Reader, limit *int) *framer {
	return &framer{r: bufio.NewReaderSize(r, 8192), limit: limit}
}

func (f *framer) Read(p []byte) (int, error) {
	if len(f.pending) > 0 {
		n := copy(p, f.pending)
		f.pending = f.pending[n:]
		if len(f.pending) == 0 {
			f.pending = nil // let a collected body go
		}
		return n, nil
	}
	if f.direct > 0 {
		n, err := f.r.Read(p[:min(len(p), f.direct)])
		f.direct -= n
		return n, err
	}
	if _, err := io.ReadFull(f.r, f.hdr[:]); err != nil {
		return 0, err
	}
	body := int(int32(binary.BigEndian.Uint32(f.hdr[1:]))) - 4
	if body <= framerDirect || body > *f.limit {
		// Small, or refused by the Backend from its header (it reads no
		// further); a negative length is refused there too.
		f.direct = max(body, 0)
		f.pending = f.hdr[:]
		return f.Read(p)
	}
	buf := make([]byte, 5, 5+framerDirect)
	copy(buf, f.hdr[:])
	for len(buf) < 5+body {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, min(cap(buf), 5+body-len(buf)))...)[:len(buf)]
		}
		n, err := f.r.Read(buf[len(buf):min(cap(buf), 5+body)])
		buf = buf[:len(buf)+n]
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
	}
	f.pending = buf
	return f.Read(p)
}
