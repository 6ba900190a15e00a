package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/streamsql/streamsql/cluster/dist"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/exec/stream"
)

// Tables on a cluster (docs/contributing/cluster.md, "Tables in a
// cluster"): the coordinator adds its tables' images to each cluster
// checkpoint it commits (tableFiles), and a node that becomes the
// coordinator loads the committed checkpoint's tables before it accepts
// writes or commits (ensureTables, from the supervision).

// clusterTables is the clusterNode's part for tables.
type clusterTables struct {
	mu     sync.Mutex
	eng    *engine.Engine               // set once the engine is open
	images map[uint32]engine.TableImage // the last images, without their bytes
}

// setEngine gives the node its engine (the engine is opened after the
// node joined).
func (c *clusterNode) setEngine(eng *engine.Engine) {
	c.tabs.mu.Lock()
	c.tabs.eng = eng
	c.tabs.mu.Unlock()
}

// WaitTables implements engine.ClusterTables.
func (c *clusterNode) WaitTables(ctx context.Context) error { return c.r.WaitTables(ctx) }

// tableFiles are the images of the tables for a checkpoint's commit:
// those uploaded before with the same content are named, not read again
// (an image is serialized again only when its table was written since).
func (c *clusterNode) tableFiles() ([]dist.LocalFile, error) {
	c.tabs.mu.Lock()
	defer c.tabs.mu.Unlock()
	if c.tabs.eng == nil {
		return nil, fmt.Errorf("the engine is not open yet")
	}
	prev := map[uint32]engine.TableImage{}
	for oid, img := range c.tabs.images {
		if img.Exact && c.r.TableUploaded(img.Name) {
			prev[oid] = img
		}
	}
	imgs, err := c.tabs.eng.ClusterTableImages(prev)
	if err != nil {
		return nil, err
	}
	out := make([]dist.LocalFile, len(imgs))
	c.tabs.images = map[uint32]engine.TableImage{}
	for i, img := range imgs {
		out[i] = dist.LocalFile{Name: img.Name, Size: -1, Data: img.Data}
		if c.r.TableUploaded(img.Name) {
			out[i].Data = nil
		}
		img.Data = nil
		c.tabs.images[img.OID] = img
	}
	return out, nil
}

// ensureTables (the coordinator, each supervision round) loads the
// committed checkpoint's tables once per term; false until they are
// (the views are not restarted before: a view over a table reads the
// loaded rows).
func ensureTables(ctx context.Context, r *dist.Runner, eng *engine.Engine, logf func(string, ...any)) bool {
	t0 := time.Now()
	var tables int
	var rows int64
	done, from, err := r.EnsureTables(ctx, func(images map[uint32][]byte) error {
		var err error
		tables, rows, err = eng.LoadClusterTables(ctx, images)
		return err
	})
	if err != nil {
		logf("cluster: tables not loaded from the committed checkpoint: %v; again in %s", err, superviseEvery)
		return false
	}
	if done && from != 0 {
		logf("cluster: tables loaded from checkpoint %d: %d tables, %d rows, in %s", from, tables, rows, time.Since(t0).Round(time.Millisecond))
	}
	return done
}

// readsTable says whether plan reads a table's change feed: its
// checkpointed position is a table's LSN on the node that took it.
func readsTable(plan stream.Node) bool {
	if sc, ok := plan.(*stream.Scan); ok && sc.Kind == stream.ScanTable {
		return true
	}
	for _, in := range plan.Inputs() {
		if readsTable(in) {
			return true
		}
	}
	return false
}
