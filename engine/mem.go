package engine

import "github.com/apache/arrow-go/v18/arrow/memory"

// memAlloc allocates the engine's own arrays (Go heap; see architecture.md).
var memAlloc = memory.DefaultAllocator
