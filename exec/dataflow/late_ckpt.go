package dataflow

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/storage/checkpoint"
)

// A job's late rows that a checkpoint holds (lateWriter.cut) are the state
// of a pseudo operator "<job id>/late", written whole at each checkpoint:
// one record per batch, its key the batch's place (8 bytes, big endian),
// its value the batch's checkpoint (uvarint), its watermark (varint) and
// its rows as an Arrow IPC stream.

func lateOpID(id uint32) string { return fmt.Sprintf("%d/late", id) }

// writeLatePending stores job id's late rows in run's checkpoint
// (replacing what earlier checkpoints of the chain hold), and releases
// their rows (lateWriter.cut).
func writeLatePending(run *ckptRun, id uint32, batches []lateBatch) error {
	defer func() {
		for _, b := range batches {
			b.rows.Release()
		}
	}()
	ow := run.w.Op(lateOpID(id))
	ow.Reset()
	var err error
	for i, b := range batches {
		var v []byte
		if v, err = encodeLateBatch(b); err != nil {
			break
		}
		ow.Put(binary.BigEndian.AppendUint64(nil, uint64(i)), v)
	}
	if cerr := ow.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("late rows of job %d in checkpoint %d: %w", id, run.epoch, err)
	}
	return nil
}

func encodeLateBatch(b lateBatch) ([]byte, error) {
	out := binary.AppendUvarint(nil, b.ckpt)
	out = binary.AppendVarint(out, b.mark)
	buf := bytes.NewBuffer(out)
	w := ipc.NewWriter(buf, ipc.WithSchema(b.rows.Schema()))
	if err := w.Write(b.rows); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// restoredLate is job id's late rows in the checkpoint rec it resumes
// from, in the order they were dropped.
func restoredLate(rec *checkpoint.Checkpoint, id uint32) ([]lateBatch, error) {
	op := rec.Op(lateOpID(id))
	if op == nil {
		return nil, nil
	}
	type kv struct {
		k uint64
		b lateBatch
	}
	var all []kv
	err := op.Range(func(key, value []byte) error {
		if len(key) != 8 {
			return errors.New("bad key")
		}
		b, err := decodeLateBatch(value)
		if err != nil {
			return err
		}
		all = append(all, kv{binary.BigEndian.Uint64(key), b})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("late rows of job %d: %w", id, err)
	}
	out := make([]lateBatch, len(all))
	for _, x := range all {
		if x.k >= uint64(len(all)) {
			return nil, fmt.Errorf("late rows of job %d: batch %d of %d", id, x.k, len(all))
		}
		out[x.k] = x.b
	}
	return out, nil
}

func decodeLateBatch(v []byte) (lateBatch, error) {
	var b lateBatch
	ck, n := binary.Uvarint(v)
	if n <= 0 {
		return b, errors.New("bad checkpoint epoch")
	}
	v = v[n:]
	mark, n := binary.Varint(v)
	if n <= 0 {
		return b, errors.New("bad watermark")
	}
	r, err := ipc.NewReader(bytes.NewReader(v[n:]), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return b, err
	}
	defer r.Release()
	if !r.Next() {
		if err := r.Err(); err != nil {
			return b, err
		}
		return b, errors.New("no rows")
	}
	rec := r.RecordBatch()
	rec.Retain()
	return lateBatch{rows: rec, mark: mark, ckpt: ck}, nil
}
