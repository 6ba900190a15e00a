// Package checkpoint stores the streaming runtime's checkpoints: the state
// of every stateful operator and the runtime's own record (source
// positions, jobs, epoch) as of one checkpoint barrier, committed
// atomically, incremental, and verified when read back.
//
// # Model
//
// An operator's state is a set of key/value pairs (both byte strings the
// operator encodes). At a checkpoint an operator writes what changed since
// its previous checkpoint: Put(key, value) and Delete(key), or, for a full
// snapshot, Reset() followed by Puts of everything. A checkpoint is thus a
// chain of segments: the state of an operator is the fold of its records
// over the chain, oldest first. The runtime asks for a full checkpoint
// (Writer.Full) when the chain's deltas have grown past its base, so the
// bytes written stay within about twice the changes and recovery reads at
// most about twice the state.
//
// # On disk (a directory, <datadir>/checkpoints)
//
//	seg-<epoch>.dat      one segment per checkpoint: frames of records
//	MANIFEST-<epoch>     the checkpoint: JSON, then a CRC-32C line
//
// A segment is a sequence of frames, each
//
//	u32 payload length | u32 CRC-32C of the payload | payload
//
// and a payload is: uvarint length + operator id, then records, each a kind
// byte (put, delete, reset), then for put and delete a uvarint length and
// the key, and for put a uvarint length and the value. Operators write
// concurrently (each on its own goroutine as the barrier passes it); each
// buffers up to frameTarget bytes and appends whole frames under the
// writer's lock, so frames of different operators interleave but records
// of one operator keep their order.
//
// Commit fsyncs the segment, writes the manifest to a temporary file,
// fsyncs it, renames it into place and fsyncs the directory: a checkpoint
// exists exactly when its manifest does. The manifest names the chain of
// segments (with their sizes) and carries the runtime's metadata. The
// store keeps the newest two committed checkpoints (and the segments they
// name) and removes the rest after each commit.
//
// # Recovery
//
// Open reads the newest manifest whose CRC matches and whose segments are
// all present, of the named size, with every frame's CRC correct; a torn
// or corrupt manifest or segment makes it log the reason and fall back to
// the previous checkpoint, never to a partial state. A segment or manifest
// of an unfinished checkpoint (no manifest, or a temporary one) is
// removed.
//
// # Concurrency
//
// Store methods are safe for concurrent use; one Writer is open at a time
// (Begin waits for the previous one to commit or abort). OpWriters of one
// Writer may be used concurrently, each by one goroutine.
package checkpoint
