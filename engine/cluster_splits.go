package engine

import "github.com/streamsql/streamsql/exec/dataflow"

// Dataflow is the engine's dataflow runtime: a cluster node runs the
// split readers the coordinator places on it in it
// (docs/contributing/cluster.md, "Source splits on the nodes").
func (e *Engine) Dataflow() *dataflow.Runtime { return e.flow }
