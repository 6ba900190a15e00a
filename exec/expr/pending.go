package expr

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Nodes whose evaluation is not written yet: they report 0A000.

func pending(what string) error { return pgerr.Unsupported("%s is not implemented yet", what) }

func (e *Subquery) Type() types.T { return e.T }
func (e *Subquery) Eval(*Context, arrow.RecordBatch) (arrow.Array, error) {
	return nil, pending("subquery")
}
func (e *Subquery) String() string { return "(SubPlan)" }
