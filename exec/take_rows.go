package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TakeRows returns a new batch of rows idx of b, in that order (every
// column type, intervals included). The streaming runtime's hash exchange
// splits chunks with it.
func TakeRows(mem memory.Allocator, b arrow.RecordBatch, idx []int32) arrow.RecordBatch {
	return takeBatch(mem, b.Schema(), b.Columns(), idx)
}
