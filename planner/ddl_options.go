package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/pgerr"
)

// pgStorageParams are the storage parameters PostgreSQL accepts in CREATE
// TABLE ... WITH (...): none has a meaning here, so each is refused by name
// (0A000) rather than ignored.
var pgStorageParams = map[string]bool{
	"fillfactor": true, "toast_tuple_target": true, "parallel_workers": true,
	"autovacuum_enabled": true, "vacuum_index_cleanup": true, "vacuum_truncate": true,
	"user_catalog_table": true, "log_autovacuum_min_duration": true,
}

// tableOptions checks CREATE TABLE's WITH (...) list: streamsql tables take
// no options. A connector option (the spec's CREATE TABLE ... WITH
// (connector = ...), a table that stores what a connector reads) is not
// built yet (0A000, hint: CREATE SOURCE); PostgreSQL's storage parameters
// are refused by name (0A000); anything else is PostgreSQL's 22023
// "unrecognized parameter".
func tableOptions(b *binder, opts []*pg.Node) error {
	for _, n := range opts {
		d := n.GetDefElem()
		if d == nil {
			continue
		}
		name := strings.ToLower(d.Defname)
		switch {
		case d.Defnamespace == "" && name == "connector":
			e := pgerr.New(pgerr.FeatureNotSupported, "CREATE TABLE with a connector is not supported").
				WithHint("Use CREATE SOURCE ... WITH (connector = ...) to read the connector, and a materialized view over the source to keep what it reads.")
			if p := b.pos(d.Location); p > 0 {
				e.Position = p
			}
			return e
		case d.Defnamespace == "" && (pgStorageParams[name] || strings.HasPrefix(name, "autovacuum_")),
			d.Defnamespace == "toast":
			full := name
			if d.Defnamespace != "" {
				full = d.Defnamespace + "." + name
			}
			return b.newErr(pgerr.FeatureNotSupported, d.Location, "storage parameter \"%s\" is not supported", full)
		case d.Defnamespace != "":
			return b.newErr(pgerr.InvalidParameterValue, d.Location, "unrecognized parameter namespace \"%s\"", d.Defnamespace)
		default:
			return b.newErr(pgerr.InvalidParameterValue, d.Location, "unrecognized parameter \"%s\"", d.Defname)
		}
	}
	return nil
}
