package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// The statement log: the DDL the coordinator ran, in order, under
// <prefix>/ddl/<seq:020d>, for every other node to run too (their
// catalogs then agree, and a worker plans a view's query as the
// coordinator did). Appended only by the coordinator, in a transaction
// fenced on its term; never rewritten. Design: docs/contributing/cluster.md,
// "The statement log".

// Statement is one entry of the statement log. Immutable once appended.
type Statement struct {
	Seq         uint64   `json:"seq"`
	SQL         string   `json:"sql"`
	SearchPath  []string `json:"search_path,omitempty"`
	User        string   `json:"user"`
	Parallelism int      `json:"parallelism,omitempty"` // streaming_parallelism it ran with (a view)
	// SplitDistinct is the streaming_split_distinct it ran with (a view).
	SplitDistinct string `json:"split_distinct,omitempty"`
	// OID is the relation the statement created on the coordinator: a
	// node that runs it must create the same OID (checked), since jobs
	// and exchange streams are named by it.
	OID         uint32 `json:"oid"`
	Coordinator string `json:"coordinator"`
	Term        int64  `json:"term"`
	// Assignment places a view's instances: the one its job runs with
	// (nil for other statements).
	Assignment *Assignment `json:"assignment,omitempty"`
	// Restart, when set, is no SQL: the coordinator restarted view OID
	// with Assignment from a committed checkpoint (after a node's loss
	// or arrival); every node stops its instances of the view and starts
	// the ones Assignment gives it, restored from that checkpoint.
	Restart *Restart `json:"restart,omitempty"`
	// NodeSplits is the coordinator's --cluster-node-splits ("on",
	// "off"; "" not said) for a view's entries: a node whose own differs
	// does not run the view's instances (they would expect other
	// streams).
	NodeSplits string    `json:"node_splits,omitempty"`
	Time       time.Time `json:"time"`
}

// Restart is a view's restart from a committed checkpoint.
type Restart struct {
	// Epoch and Manifest name the committed checkpoint (the object key
	// of its manifest); Manifest "" restarts from the inputs.
	Epoch    uint64 `json:"epoch,omitempty"`
	Manifest string `json:"manifest,omitempty"`
}

func ddlPrefix(prefix string) string { return prefix + "/ddl/" }

func ddlKey(prefix string, seq uint64) string { return fmt.Sprintf("%s%020d", ddlPrefix(prefix), seq) }

// AppendStatement appends st to the statement log as the entry after the
// last one, in one transaction that succeeds only while the fence's term
// holds and no other entry took that number (ErrNotCoordinator,
// ErrStalePointer otherwise). It returns st with its Seq, Coordinator,
// Term and Time set.
func (f *Fence) AppendStatement(ctx context.Context, st Statement) (Statement, error) {
	resp, err := f.cli.Get(ctx, ddlPrefix(f.prefix), clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend), clientv3.WithLimit(1))
	if err != nil {
		return Statement{}, fmt.Errorf("cluster: read the statement log: %w", err)
	}
	st.Seq = 1
	if len(resp.Kvs) > 0 {
		last, err := strconv.ParseUint(strings.TrimPrefix(string(resp.Kvs[0].Key), ddlPrefix(f.prefix)), 10, 64)
		if err != nil {
			return Statement{}, fmt.Errorf("cluster: statement log key %q: %w", resp.Kvs[0].Key, err)
		}
		st.Seq = last + 1
	}
	st.Coordinator, st.Term, st.Time = f.node, f.term.Rev, time.Now().UTC()
	val, err := json.Marshal(st)
	if err != nil {
		return Statement{}, fmt.Errorf("cluster: encode statement: %w", err)
	}
	key := ddlKey(f.prefix, st.Seq)
	err = f.fencedPut(ctx, key, clientv3.Compare(clientv3.CreateRevision(key), "=", 0), string(val),
		fmt.Sprintf("statement %d not logged", st.Seq), fmt.Sprintf("statement %d was logged by another coordinator meanwhile", st.Seq))
	if err != nil {
		return Statement{}, err
	}
	return st, nil
}

// LastStatement is the number of the log's last entry (0: empty).
func LastStatement(ctx context.Context, cli *clientv3.Client, prefix string) (uint64, error) {
	resp, err := cli.Get(ctx, ddlPrefix(prefix), clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend),
		clientv3.WithLimit(1), clientv3.WithKeysOnly())
	if err != nil {
		return 0, fmt.Errorf("cluster: read the statement log: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return 0, nil
	}
	return strconv.ParseUint(strings.TrimPrefix(string(resp.Kvs[0].Key), ddlPrefix(prefix)), 10, 64)
}

// FollowStatements calls fn with every entry of the statement log in
// order, from the first, then with each new one as it is appended, until
// ctx ends or fn fails (its error is returned). Entries are read once
// and watched from the revision of that read, so none is missed or seen
// twice.
func FollowStatements(ctx context.Context, cli *clientv3.Client, prefix string, fn func(Statement) error) error {
	resp, err := cli.Get(ctx, ddlPrefix(prefix), clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return fmt.Errorf("cluster: read the statement log: %w", err)
	}
	apply := func(val []byte) error {
		var st Statement
		if err := json.Unmarshal(val, &st); err != nil {
			return fmt.Errorf("cluster: statement log entry: %w", err)
		}
		return fn(st)
	}
	for _, kv := range resp.Kvs {
		if err := apply(kv.Value); err != nil {
			return err
		}
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	for wr := range cli.Watch(wctx, ddlPrefix(prefix), clientv3.WithPrefix(), clientv3.WithRev(resp.Header.Revision+1)) {
		if err := wr.Err(); err != nil {
			return fmt.Errorf("cluster: watch the statement log: %w", err)
		}
		for _, ev := range wr.Events {
			if ev.Type != clientv3.EventTypePut || ev.Kv.Version != 1 {
				continue // entries are never rewritten; a delete is a test's cleanup
			}
			if err := apply(ev.Kv.Value); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}
