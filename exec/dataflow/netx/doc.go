// Package netx carries one stream of stream.Messages (change chunks,
// watermarks, barriers) from one process to another over TCP: the
// network form of the bounded channel between two operators, used where a
// hash exchange's output instance runs on another node (design:
// docs/contributing/cluster.md, "The network exchange").
//
// One TCP connection carries one stream, in one direction of data:
//
//   - The Sender dials and names the stream (Hello: protocol version,
//     stream id, assignment generation). The Receiver's Server answers
//     Welcome with the initial credit, or Error (unknown stream, stale
//     generation).
//   - Chunks travel as Arrow IPC record batch messages (the schema once,
//     again only when it changes), with the row ops beside them;
//     watermarks and barriers as small frames in the same sequence, so
//     they stay in-band: a barrier arrives after every row sent before it.
//   - Flow control is by credit: the Receiver grants Credits messages at
//     Welcome and one more for each message its consumer takes (sent back
//     in Credit frames, in batches). A Sender without credit blocks in
//     Send, as a full channel blocks, so a slow consumer holds back the
//     sender's whole fragment across the network. At most Credits
//     messages are ever buffered at the receiver.
//   - Liveness: both ends send a Heartbeat every Options.Heartbeat and
//     fail the stream when nothing arrives from the peer for
//     Options.Timeout (a dead, paused or partitioned peer), and every write
//     has the same deadline. A stream never hangs on a dead peer; it fails
//     with an error (SQLSTATE 08000) naming the stream and the peer.
//   - End: Sender.Close sends End and waits for the receiver's EndAck;
//     Recv then reports the end after the last message. Either side may
//     Abort with an error, which the peer's next Send or Recv returns
//     (the job's failure crosses the network).
//
// Frames: a 1-byte type, a 4-byte big-endian payload length, the payload
// (wire.go). Senders, Receivers and the Server are safe for use by
// several goroutines as documented on each method; a Sender's Send and a
// Receiver's Recv are each meant for one goroutine.
package netx
