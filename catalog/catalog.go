package catalog

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// RelKind is pg_class.relkind.
type RelKind byte

// Relation kinds.
const (
	KindTable   RelKind = 'r'
	KindView    RelKind = 'v'
	KindMatView RelKind = 'm' // streaming issues
	KindSource  RelKind = 's' // streaming issues (shown as 'f', foreign, in pg_class)
	KindSystem  RelKind = 'S' // a virtual pg_catalog / information_schema table (pg_class shows 'v')
)

// Relation is a table, view or system table. A *Relation is immutable once
// published in the catalog: DDL publishes a new value, so a statement that
// resolved a relation keeps a stable description for its whole run.
type Relation struct {
	OID     uint32
	Schema  string // "public", "pg_catalog", "information_schema"
	Name    string
	Kind    RelKind
	Columns []Column
	// PrimaryKey lists column indexes of the primary key, in key order; nil if none.
	PrimaryKey []int
	// PKName is the primary key constraint's name ("t_pkey").
	PKName string
	// ViewQuery is a view's defining SELECT, as text that Parse accepts.
	ViewQuery string
	// Rows produces a system table's current contents; nil for others.
	Rows func(ctx RowsContext) ([]arrow.RecordBatch, error) `json:"-"`
}

// Column is one column of a relation.
type Column struct {
	Name    string
	Type    types.T
	NotNull bool
	// Default is the column default as SQL expression text ("" = none),
	// bound by the planner at INSERT time.
	Default string
}

// RowsContext is what a system table needs to produce its rows.
type RowsContext struct {
	User       string
	Database   string
	SearchPath []string
}

// ColumnTypes returns the relation's columns as result columns.
func (r *Relation) ColumnTypes() []types.Column {
	out := make([]types.Column, len(r.Columns))
	for i, c := range r.Columns {
		out[i] = types.Column{Name: c.Name, Type: c.Type}
	}
	return out
}

// ColumnIndex finds a column by exact (already case-folded) name; -1 if absent.
func (r *Relation) ColumnIndex(name string) int {
	for i, c := range r.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}
