// Package faultproxy is a TCP proxy that a test cuts and heals: a
// network partition between whoever connects through it and its target
// (the cluster's fault tests, tests/cluster; the network exchange's,
// exec/dataflow). Only tests import it.
package faultproxy

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards the TCP connections it accepts to a target, and cuts
// them when the test says (a network partition between whoever connects
// through it and the target). Safe for concurrent use.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	conns []*net.TCPConn
	open  chan struct{} // closed while forwarding; a new one while cut
}

// Start listens on a loopback port and forwards every connection
// to target (dialed when a connection arrives). It is closed, and its
// connections reset, when the test ends.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target, open: make(chan struct{})}
	close(p.open)
	t.Cleanup(func() { p.Heal(); ln.Close(); p.Reset() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c.(*net.TCPConn))
		}
	}()
	return p
}

// forward connects c to the target and copies both ways. A connection
// made during a cut does not reach the target until it heals (as its
// SYN would be lost).
func (p *Proxy) forward(c *net.TCPConn) {
	p.mu.Lock()
	gate := p.open
	p.mu.Unlock()
	<-gate
	u, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	ut := u.(*net.TCPConn)
	p.mu.Lock()
	p.conns = append(p.conns, c, ut)
	p.mu.Unlock()
	go p.copy(ut, c)
	go p.copy(c, ut)
}

// Addr is the address to connect to instead of the target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut stops forwarding, both ways, on every connection, present and
// future (a new one reaches the target once healed), without closing
// any: both ends see silence, as in a network
// partition (nothing is lost: what was sent meanwhile is delivered
// after Heal, as TCP retransmits it once a partition heals).
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
		p.open = make(chan struct{})
	default: // cut already
	}
}

// Heal forwards again.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
	default:
		close(p.open)
	}
}

func (p *Proxy) copy(dst, src *net.TCPConn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			gate := p.open
			p.mu.Unlock()
			<-gate
			if _, werr := dst.Write(buf[:n]); werr != nil {
				_ = src.Close()
				return
			}
		}
		if err != nil {
			if err == io.EOF {
				_ = dst.CloseWrite()
			} else {
				_ = dst.Close()
			}
			return
		}
	}
}

// Reset closes every connection with a reset (SO_LINGER 0), as the
// kernel of a killed peer may.
func (p *Proxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.SetLinger(0)
		c.Close()
	}
	p.conns = nil
}
