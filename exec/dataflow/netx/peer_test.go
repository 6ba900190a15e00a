package netx

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/pgerr"
)

// The peer tests run the other end of a stream in a child process (this
// test binary, TestPeerProcess), so that the peer can really be killed
// (SIGKILL: the kernel closes its sockets) or paused (SIGSTOP: its socket
// stays open and silent, as a partitioned or frozen node's).

const peerEnv = "NETX_TEST_PEER" // "send <addr>" or "recv"

// TestPeerProcess is the child's body; it does nothing in a normal run.
func TestPeerProcess(t *testing.T) {
	mode := os.Getenv(peerEnv)
	if mode == "" {
		t.Skip("the child process of the peer tests")
	}
	ctx := context.Background()
	opt := testOptions()
	msgs := randMessages(5, 200)
	switch f := strings.Fields(mode); f[0] {
	case "send": // send forever
		fmt.Println("dialing")
		s, err := Dial(ctx, f[1], "peer", opt)
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(2)
		}
		for i := 0; ; i++ {
			if err := s.Send(ctx, msgs[i%len(msgs)]); err != nil {
				fmt.Println("send:", err)
				os.Exit(2)
			}
		}
	case "recv": // receive forever
		srv, err := Listen("127.0.0.1:0", opt)
		if err != nil {
			os.Exit(2)
		}
		r, _ := srv.Expect("peer")
		fmt.Println(srv.Addr())
		for {
			if _, _, err := r.Recv(ctx); err != nil {
				os.Exit(2)
			}
		}
	}
}

// startPeer runs the child in mode; it is killed at the end of the test.
func startPeer(t *testing.T, mode string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPeerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), peerEnv+"="+mode)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, bufio.NewReader(out)
}

// startSender starts a sending child and expects its stream once it
// dials (a loaded machine may take seconds to start the child; the
// receiver's wait for its sender starts at Expect).
func startSender(t *testing.T, srv *Server) (*exec.Cmd, *Receiver) {
	t.Helper()
	cmd, out := startPeer(t, "send "+srv.Addr())
	if l, err := out.ReadString('\n'); err != nil || l != "dialing\n" {
		t.Fatalf("child: %q %v", l, err)
	}
	r, err := srv.Expect("peer")
	if err != nil {
		t.Fatal(err)
	}
	return cmd, r
}

// recvUntilError receives until the stream fails, and returns the error
// and how long after signal() it came. It fails the test on a clean end
// or when nothing happens for 20 s.
func recvUntilError(t *testing.T, r *Receiver, after int, signal func()) (error, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var at time.Time
	for i := 0; ; i++ {
		if i == after {
			signal()
			at = time.Now()
		}
		_, ok, err := r.Recv(ctx)
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatal("the stream hangs after its peer died")
		}
		if err != nil {
			if i < after {
				t.Fatalf("failed before the signal, after %d messages: %v", i, err)
			}
			return err, time.Since(at)
		}
		if !ok {
			t.Fatal("clean end from a peer that was killed")
		}
	}
}

// TestPeerKilledMidStream: the sending process is killed with SIGKILL in
// the middle of the stream; the receiver fails with 08000 at once (the
// kernel closed the connection), never ends cleanly, never hangs.
func TestPeerKilledMidStream(t *testing.T) {
	srv := listen(t, testOptions())
	cmd, r := startSender(t, srv)
	err, d := recvUntilError(t, r, 500, func() { _ = cmd.Process.Kill() })
	if pgerr.CodeOf(err) != pgerr.ConnectionException || !strings.Contains(err.Error(), "closed before the end") {
		t.Fatalf("error %v (%s)", err, pgerr.CodeOf(err))
	}
	t.Logf("receiver failed %s after the kill: %v", d, err)
}

// TestPeerPausedMidStream: the sending process is stopped (SIGSTOP) in
// the middle of the stream; its socket stays open but silent, and the
// receiver fails once no frame came for the timeout.
func TestPeerPausedMidStream(t *testing.T) {
	opt := testOptions()
	srv := listen(t, opt)
	cmd, r := startSender(t, srv)
	err, d := recvUntilError(t, r, 500, func() { _ = cmd.Process.Signal(syscall.SIGSTOP) })
	if pgerr.CodeOf(err) != pgerr.ConnectionException || !strings.Contains(err.Error(), "silent") {
		t.Fatalf("error %v (%s)", err, pgerr.CodeOf(err))
	}
	if d < opt.Timeout/2 || d > 3*opt.Timeout {
		t.Fatalf("failed %s after the pause, want about the timeout %s", d, opt.Timeout)
	}
	t.Logf("receiver failed %s after the pause: %v", d, err)
}

// TestReceiverKilledOrPaused: the receiving process dies or pauses while
// the sender sends; the sender's Send fails (it does not block forever
// waiting for credit).
func TestReceiverKilledOrPaused(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGSTOP} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, out := startPeer(t, "recv")
			addr, err := out.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			s, err := Dial(ctx, strings.TrimSpace(addr), "peer", testOptions())
			if err != nil {
				t.Fatal(err)
			}
			msgs := randMessages(3, 100)
			var at time.Time
			for i := 0; ; i++ {
				if i == 300 {
					_ = cmd.Process.Signal(sig)
					at = time.Now()
				}
				err := s.Send(ctx, msgs[i%len(msgs)])
				if errors.Is(err, context.DeadlineExceeded) {
					t.Fatal("the sender hangs after its receiver died")
				}
				if err != nil {
					if i < 300 {
						t.Fatalf("failed before the signal: %v", err)
					}
					if pgerr.CodeOf(err) != pgerr.ConnectionException {
						t.Fatalf("error %v (%s)", err, pgerr.CodeOf(err))
					}
					t.Logf("sender failed %s after %s: %v", time.Since(at), sig, err)
					return
				}
			}
		})
	}
}
