package pgsink_test

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/types"
)

func arrowBatch(a, b arrow.Array, n int) arrow.RecordBatch {
	return array.NewRecordBatch(types.ArrowSchema(cols), []arrow.Array{a, b}, int64(n))
}
