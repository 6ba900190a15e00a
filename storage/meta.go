package storage

import (
	"context"
	"errors"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
)

// Write metadata: a small byte string committed atomically with a write,
// for writers that must remember how far their input went (a Kafka
// table's ingest keeps its reader's position there; docs/contributing/
// storage.md, "Write metadata").
//
// The metadata travels as one recMeta frame chained (recMore) after the
// write's own frames, so recovery applies the rows and the metadata
// together or neither: after a crash, Meta names exactly the input the
// table holds. Compaction folds the frames away and keeps the last
// metadata in the new log's header (headerDef.Meta); ALTER TABLE keeps it
// too. The metadata is not a write of its own: it takes no LSN and feeds
// see only the rows.

// maxMeta bounds the metadata of one write.
const maxMeta = 1 << 20

// encodeMeta encodes a recMeta frame.
func encodeMeta(meta []byte) []byte {
	e := newFrame(recMeta, 8+len(meta))
	e.u64(uint64(len(meta)))
	e.bytes(meta)
	return sealFrame(e)
}

// Meta returns the metadata of the table's last durable write that carried
// some (InsertBatchesMeta), nil if none did. Safe from any goroutine; the
// caller must not modify the result.
func (t *Table) Meta() []byte { return t.pub.Load().meta }

// InsertBatchesMeta is InsertBatches that also records meta (at most 1 MiB)
// as the table's Meta, in the same all-or-nothing write: after a crash the
// table holds both the rows and meta, or neither. When no batch has rows
// nothing is written and Meta does not change. It must not be called in a
// transaction (ctx carrying a Tx): it is its own write.
func (t *Table) InsertBatchesMeta(ctx context.Context, recs []arrow.RecordBatch, meta []byte) (int64, error) {
	if len(meta) > maxMeta {
		return 0, errMetaTooLong
	}
	if TxFrom(ctx) != nil {
		return 0, errMetaInTx
	}
	meta = slices.Clone(meta)
	return t.write(ctx, nil, func(base *state) (change, error) {
		c, err := t.prepInsert(base, recs)
		if err != nil || len(c.frames) == 0 {
			return c, err
		}
		if c.st == base {
			c.st = c.st.clone()
		}
		c.st.meta = meta
		c.frames = append(c.frames, encodeMeta(meta))
		chainFrames(c.frames)
		return c, nil
	})
}

var (
	errMetaTooLong = errors.New("storage: write metadata longer than 1 MiB")
	errMetaInTx    = errors.New("storage: InsertBatchesMeta inside a transaction")
)
