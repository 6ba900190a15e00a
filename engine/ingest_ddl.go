package engine

import (
	"context"
	"slices"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
)

// connectorTable completes rel, planned from CREATE TABLE ... [INCLUDE
// ...] WITH (connector = ...) [FORMAT ...], into a table that stores what
// the connector reads (ingest.go): it checks what such a table may have,
// adds the INCLUDE columns and the connector's options, and opens (and,
// for kafka, checks) the connector so that a bad option or an unknown
// topic fails here.
func (s *Session) connectorTable(ctx context.Context, rel *catalog.Relation, x *sql.Source) error {
	if len(rel.Checks) > 0 || len(rel.ForeignKeys) > 0 { // the ingest writes around them (constraints.go)
		return pgerr.Unsupported("CHECK and FOREIGN KEY constraints on a table with a connector are not supported")
	}
	if planner.HasGenerated(rel) { // the ingest writes the rows as read
		return pgerr.Unsupported("generated columns on a table with a connector are not supported")
	}
	if x.FromSource != "" {
		return s.cdcTableFrom(ctx, rel, x) // ingest_cdc.go
	}
	name, opts, err := connectorOptions(x.Options)
	if err != nil {
		return err
	}
	if name == cdcConnector {
		return s.cdcTable(ctx, rel, x, opts)
	}
	if name != "kafka" {
		return pgerr.Unsupported("CREATE TABLE ... WITH (connector = '%s') is not supported: only kafka and postgres-cdc tables store what they read", name).
			WithHint("Use CREATE SOURCE ... WITH (connector = '%s'), and a materialized view over it to keep what it reads.", name)
	}
	format := strings.ToUpper(x.Format)
	if x.Encode != "" {
		format += " ENCODE " + strings.ToUpper(x.Encode)
	}
	upsert := strings.EqualFold(x.Format, "UPSERT") || strings.EqualFold(x.Format, "DEBEZIUM") // keyed by the messages
	switch {
	case upsert && len(rel.PrimaryKey) == 0:
		return pgerr.New(pgerr.InvalidTableDefinition, "FORMAT %s needs a PRIMARY KEY", strings.ToUpper(x.Format)).
			WithHint("Messages replace (and tombstones delete) the row with their key: CREATE TABLE t (id int, ..., PRIMARY KEY (id)) ... FORMAT UPSERT ENCODE JSON.")
	case upsert && len(rel.Unique) > 0:
		return pgerr.Unsupported("a kafka table with FORMAT %s cannot have UNIQUE constraints besides its primary key", strings.ToUpper(x.Format)).
			WithHint("A message violating one would stop the ingest.")
	case !upsert && (len(rel.PrimaryKey) > 0 || len(rel.Unique) > 0):
		return pgerr.Unsupported("a kafka table with FORMAT %s cannot have PRIMARY KEY or UNIQUE constraints", strings.TrimSpace(format+" ")).
			WithHint("Each message appends a row; use FORMAT UPSERT ENCODE JSON for a table keyed by its messages' keys.")
	}
	for i, c := range rel.Columns {
		switch {
		case c.Default != "" || c.Identity != 0 || c.Serial != "":
			return pgerr.Unsupported("column \"%s\" of a kafka table cannot have a default or be an identity or serial column", c.Name).
				WithHint("Its values come from the messages: a missing key is NULL.")
		case c.NotNull && !slices.Contains(rel.PrimaryKey, i):
			return pgerr.Unsupported("column \"%s\" of a kafka table cannot be NOT NULL", c.Name).
				WithHint("Its values come from the messages: a missing key is NULL.")
		}
	}
	for _, inc := range x.Include { // connector metadata columns, after the declared ones
		col, key, err := connector.IncludeColumn(name, inc.What, inc.Name)
		if err != nil {
			return err
		}
		for _, c := range rel.Columns {
			if c.Name == col.Name {
				return pgerr.New(pgerr.DuplicateColumn, "column \"%s\" specified more than once", col.Name).
					WithHint("Name the INCLUDE column with AS.")
			}
		}
		if _, dup := opts[key]; dup {
			return pgerr.New(pgerr.SyntaxError, "INCLUDE %s is given twice", inc.What)
		}
		rel.Columns = append(rel.Columns, catalog.Column{Name: col.Name, Type: col.Type})
		opts[key] = col.Name
	}
	rel.Connector, rel.Options, rel.Format = name, opts, x.Format
	if x.Encode != "" {
		rel.Format += " ENCODE " + x.Encode
	}
	src, err := s.eng.openConnector(rel)
	if err != nil {
		return err
	}
	if c, ok := src.(connector.Checker); ok {
		cctx, cancel := context.WithTimeout(ctx, sourceCheckTimeout)
		err := c.Check(cctx)
		cancel()
		if err != nil {
			return err
		}
	}
	if _, ok := src.(connector.Resumable); !ok {
		return pgerr.Unsupported("the %s connector cannot resume at a position, which a table that stores what it reads needs", name)
	}
	return nil
}

// refuseConnectorAlter refuses an ALTER TABLE of a kafka table that
// changes more than its name (columns are matched to the messages by
// name and type).
func refuseConnectorAlter(a *planner.Alter) error {
	if !isConnectorTable(a.Old) {
		return nil
	}
	same := len(a.Old.Columns) == len(a.New.Columns) && a.Exprs == nil &&
		len(a.New.PrimaryKey) == 0 && len(a.New.Unique) == 0 && len(a.New.Checks) == 0 && len(a.New.ForeignKeys) == 0
	for i := 0; same && i < len(a.Old.Columns); i++ {
		o, n := a.Old.Columns[i], a.New.Columns[i]
		same = o.Name == n.Name && o.Type == n.Type && o.NotNull == n.NotNull && o.Default == n.Default
	}
	if !same {
		return pgerr.Unsupported("ALTER TABLE of kafka table \"%s\" is not supported, except RENAME TO and OWNER TO", a.Old.Name).
			WithHint("Its columns are matched to the messages: drop the table and create it again.")
	}
	return nil
}
