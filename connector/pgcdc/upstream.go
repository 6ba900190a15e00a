package pgcdc

import (
	"context"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// UpstreamColumns reads the columns and primary key of the upstream table
// that opts (a postgres-cdc table's options, table.name among them) name,
// from the upstream catalog (pg_attribute, pg_index), for a CREATE TABLE
// that leaves its columns out. Types keep their modifiers (varchar(n),
// numeric(p,s), timestamp(p)); a type streamsql does not have (uuid,
// inet, an enum, ...) becomes text, which reads its text form. pk names
// the replica identity's columns (the primary key, or the REPLICA
// IDENTITY USING INDEX index), in column order. A table without one (or
// with REPLICA IDENTITY NOTHING) is a 55000 error, as Check gives.
func UpstreamColumns(ctx context.Context, opts map[string]string) (cols []types.Column, pk []string, err error) {
	cfg, err := ParseConfig(opts)
	if err != nil {
		return nil, nil, err
	}
	s := &Source{cfg: cfg}
	conn, err := s.connect(ctx, false)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close(context.Background())
	t, err := s.describe(ctx, conn)
	if err != nil {
		return nil, nil, err
	}
	for _, u := range t.cols {
		typ := types.TText
		if u.ok {
			typ = u.typ
			if full, err := types.ParseTypeString(u.typeName); err == nil && full.SameKind(u.typ) {
				typ = full // with its modifier
			}
		}
		cols = append(cols, types.Column{Name: u.name, Type: typ})
		if u.identity {
			pk = append(pk, u.name)
		}
	}
	if len(pk) == 0 {
		hint := "Add a primary key upstream, or declare the columns and PRIMARY KEY in CREATE TABLE."
		if t.replIdent == 'n' {
			hint = "ALTER TABLE " + cfg.qualified() + " REPLICA IDENTITY DEFAULT upstream (with a primary key)."
		}
		return nil, nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "upstream table %s has no primary key (or replica identity index) to key the table by", cfg.qualified()).
			WithHint("%s", hint)
	}
	if len(cols) == 0 {
		return nil, nil, pgerr.New(pgerr.InvalidTableDefinition, "upstream table %s has no columns", cfg.qualified())
	}
	return cols, pk, nil
}
