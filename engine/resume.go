package engine

import (
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/storage"
)

// Tables for exactly-once recovery (dataflow.TableResumer): a checkpoint
// records the LSN each view read a table to; after a restart the view
// reads the table's writes after it (storage.Table.FeedFrom), which the
// table keeps once told by Retain.

// PositionLSN implements dataflow.TableResumer.
func (in flowInputs) PositionLSN(p dataflow.Position) uint64 {
	if sp, ok := p.(storage.Position); ok {
		return sp.LSN()
	}
	return 0
}

// TableFeedFrom implements dataflow.TableResumer.
func (in flowInputs) TableFeedFrom(oid uint32, lsn uint64) (dataflow.Feed, error) {
	t := in.e.store.Table(oid)
	if t == nil {
		return nil, pgerr.Internal("table %d has no storage", oid)
	}
	f, err := t.FeedFrom(lsn)
	if err != nil {
		return nil, err
	}
	return in.tableFeed(f, oid), nil
}

// RetainTable implements dataflow.TableResumer.
func (in flowInputs) RetainTable(oid uint32, lsn uint64) {
	t := in.e.store.Table(oid)
	if t == nil {
		return // dropped meanwhile
	}
	if err := t.Retain(lsn); err != nil {
		in.e.cfg.Logf("checkpoint: table %d cannot retain its writes after %d: %v", oid, lsn, err)
	}
}

// ReleaseTable implements dataflow.TableResumer.
func (in flowInputs) ReleaseTable(oid uint32) {
	if t := in.e.store.Table(oid); t != nil {
		if err := t.ReleaseRetained(); err != nil {
			in.e.cfg.Logf("checkpoint: table %d: releasing its retained writes: %v", oid, err)
		}
	}
}
