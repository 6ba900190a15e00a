// Package stream is streamsql's streaming runtime: operators that consume
// and produce messages over bounded channels, one goroutine each.
//
// Three kinds of message flow between operators, as in RisingWave and Flink:
//
//   - a Chunk: an Arrow record batch plus one change op per row (insert,
//     delete, update-before, update-after);
//   - a Watermark: no later row will carry an event time below it;
//   - a Barrier: the end of an epoch; when marked as a checkpoint, every
//     operator snapshots its state as it forwards it.
//
// A query such as
//
//	SELECT auction, price * 2 AS doubled FROM bid WHERE price > 100
//
// runs as
//
//	source(bid) --chan--> Filter(price > 100) --chan--> Project(auction, price*2) --chan--> view
//
// Plans are immutable (the *Node types); Start builds an operator's running
// state. Channels are bounded (ChannelSize messages), so a slow consumer
// slows its producers: backpressure reaches the sources. An operator with
// several inputs aligns barriers: after it receives epoch e's barrier on one
// input it reads nothing more from that input until e's barrier arrived on
// every input, then forwards one barrier (Chandy-Lamport, as in Flink).
// Watermarks of several inputs combine to their minimum.
package stream
