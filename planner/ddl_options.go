package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/pgerr"
)

// RelOptionKind is the statement whose WITH (...) list RelOptions checks.
type RelOptionKind int

const (
	OptTable   RelOptionKind = iota // CREATE TABLE, CREATE TABLE AS
	OptMatView                      // CREATE MATERIALIZED VIEW
	OptView                         // CREATE VIEW
	OptIndex                        // CREATE INDEX
)

// pgRelParams are the parameters PostgreSQL accepts in the WITH (...) of
// each kind: none has a meaning here, so each is refused by name (0A000)
// rather than ignored. (Tables and materialized views take the same
// storage parameters; autovacuum_* and toast.* are matched by prefix.)
var pgRelParams = map[RelOptionKind]map[string]bool{
	OptTable: {"fillfactor": true, "toast_tuple_target": true, "parallel_workers": true,
		"vacuum_index_cleanup": true, "vacuum_truncate": true, "user_catalog_table": true,
		"log_autovacuum_min_duration": true},
	OptView:  {"check_option": true, "security_barrier": true, "security_invoker": true},
	OptIndex: {"fillfactor": true, "deduplicate_items": true, "buffering": true, "fastupdate": true, "gin_pending_list_limit": true, "pages_per_range": true, "autosummarize": true},
}

// RelOptions checks the WITH (...) list of CREATE TABLE (AS), CREATE
// [MATERIALIZED] VIEW and CREATE INDEX: streamsql relations take no
// options, so every one is refused by name. On a table, a connector option
// (the spec's CREATE TABLE ... WITH (connector = ...), a table that stores
// what a connector reads) is not built yet: 0A000 with a CREATE SOURCE
// hint. PostgreSQL's own parameters are 0A000; anything else is
// PostgreSQL's 22023 "unrecognized parameter". It returns the option's
// location with the error (-1 when none).
func RelOptions(kind RelOptionKind, opts []*pg.Node) (int32, error) {
	for _, n := range opts {
		d := n.GetDefElem()
		if d == nil {
			continue
		}
		name := strings.ToLower(d.Defname)
		storage := kind == OptTable || kind == OptMatView
		full := name
		if d.Defnamespace != "" {
			full = d.Defnamespace + "." + name
		}
		switch {
		case d.Defnamespace == "" && name == "connector" && kind == OptTable:
			// The parser lifts a WITH list naming a connector (a kafka
			// table); one it could not read ends here.
			return d.Location, pgerr.New(pgerr.FeatureNotSupported, "CREATE TABLE with a connector is not supported in this form").
				WithHint("Write CREATE TABLE t (...) WITH (connector = 'kafka', key = 'value', ...) FORMAT ..., or use CREATE SOURCE.")
		case d.Defnamespace == "" && (pgRelParams[kind][name] || (storage && (pgRelParams[OptTable][name] || strings.HasPrefix(name, "autovacuum_")))),
			storage && d.Defnamespace == "toast":
			return d.Location, pgerr.New(pgerr.FeatureNotSupported, "storage parameter \"%s\" is not supported", full)
		case d.Defnamespace != "":
			return d.Location, pgerr.New(pgerr.InvalidParameterValue, "unrecognized parameter namespace \"%s\"", d.Defnamespace)
		default:
			return d.Location, pgerr.New(pgerr.InvalidParameterValue, "unrecognized parameter \"%s\"", d.Defname)
		}
	}
	return -1, nil
}

// relOptions is RelOptions with the error's position in the statement.
func relOptions(b *binder, kind RelOptionKind, opts []*pg.Node) error {
	loc, err := RelOptions(kind, opts)
	return b.errAtLoc(err, loc)
}

// errAtLoc gives err (a *pgerr.Error) the position of loc in the
// statement, when loc is one.
func (b *binder) errAtLoc(err error, loc int32) error {
	if e := pgerr.As(err); e != nil {
		if p := b.pos(loc); p > 0 {
			e.Position = p
		}
	}
	return err
}
