package expr

// STUBS to be replaced by the evaluator: they let dependent packages compile.

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

func stub() error { return pgerr.Unsupported("expression evaluation is not implemented yet") }

func (e *ColRef) Type() types.T                                         { return e.T }
func (e *ColRef) Eval(*Context, arrow.RecordBatch) (arrow.Array, error) { return nil, stub() }
func (e *ColRef) String() string                                        { return e.Name }
func (e *Const) Type() types.T                                          { return e.T }
func (e *Const) Eval(*Context, arrow.RecordBatch) (arrow.Array, error)  { return nil, stub() }
func (e *Const) String() string                                         { return "const" }
