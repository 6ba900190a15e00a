package catalog

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/streamsql/streamsql/pgerr"
)

// defaultSearchPath is PostgreSQL's default search_path.
var defaultSearchPath = []string{"$user", "public"}

// kindWord names a relation kind in messages ("table", "view", ...).
func kindWord(k RelKind) string {
	switch k {
	case KindTable:
		return "table"
	case KindView:
		return "view"
	case KindMatView:
		return "materialized view"
	case KindSource:
		return "source"
	case KindSequence:
		return "sequence"
	case KindSink:
		return "sink"
	}
	return "relation"
}

// Drop removes a relation of the given kind. Schema "" resolves name along
// searchPath. Errors are PostgreSQL's: 42P01 `table "x" does not exist`
// (with ifExists a notice `table "x" does not exist, skipping` is returned
// instead), 42809 `"v" is not a table`, 42501 for system relations, and
// 2BP01 `cannot drop table t because other objects depend on it` while views
// read it, unless cascade, which drops those views too and returns the
// notice `drop cascades to view v`. The notice is "" when there is none.
func (c *Catalog) Drop(kind RelKind, schema, name string, ifExists, cascade bool, searchPath []string) (string, error) {
	n, err := c.DropWithDetail(kind, schema, name, ifExists, cascade, searchPath)
	if n == nil {
		return "", err
	}
	return n.Message, err
}

// DropWithDetail is Drop returning its notice as a *pgerr.Error of severity
// NOTICE (nil when there is none), whose Detail lists every object a
// cascade dropped, as PostgreSQL reports it.
func (c *Catalog) DropWithDetail(kind RelKind, schema, name string, ifExists, cascade bool, searchPath []string) (*pgerr.Error, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.snap()
	schema = tempAlias(schema, searchPath)
	word := kindWord(kind)
	given := name
	if schema != "" {
		given = schema + "." + name
	}
	var r *Relation
	if schema != "" {
		if cur.schemas[schema] == nil {
			if ifExists {
				return notice(pgerr.SuccessfulCompletion, "schema \"%s\" does not exist, skipping", schema), nil
			}
			return nil, pgerr.New(pgerr.UndefinedSchema, "schema \"%s\" does not exist", schema)
		}
		r = cur.rels[schema][name]
	} else {
		r = cur.lookup(name, searchPath)
	}
	if r == nil {
		if ifExists {
			return notice(pgerr.SuccessfulCompletion, "%s \"%s\" does not exist, skipping", word, given), nil
		}
		return nil, pgerr.New(pgerr.UndefinedTable, "%s \"%s\" does not exist", word, given)
	}
	if r.Kind == KindSystem {
		return nil, pgerr.New(pgerr.InsufficientPrivilege, "permission denied: \"%s\" is a system catalog", r.Name)
	}
	if r.Kind != kind {
		w := kindWord(r.Kind)
		return nil, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a %s", r.Name, word).
			WithHint("Use DROP %s to remove a %s.", strings.ToUpper(w), w)
	}
	if err := cur.checkOwnedSequenceDrop(r, cascade); err != nil {
		return nil, err
	}
	return c.dropObjects(cur, []*Relation{r}, nil, nil, cascade, searchPath, fmt.Sprintf("%s %s", word, r.Name))
}

// dropObjects removes targets (and, with cascade, everything that depends
// on them) and the schema dropSchema if not nil. what names the object for
// the 2BP01 message ("table t", "schema s").
func (c *Catalog) dropObjects(cur *snapshot, targets []*Relation, dropSchema *Schema, funcs []*Function, cascade bool, searchPath []string, what string) (*pgerr.Error, error) {
	gone := map[uint32]bool{}
	for _, t := range targets {
		gone[t.OID] = true
		if f := cur.rowFunction(t.RowTypeOID); f != nil && !slices.Contains(funcs, f) {
			// PostgreSQL's dependency of the function on the row type.
			e := pgerr.New(pgerr.DependentObjectsStillExist, "cannot drop %s because other objects depend on it", what)
			if cascade {
				e = pgerr.Unsupported("DROP ... CASCADE does not drop function %s, which returns the rows of %s: drop it first", f.Signature(), t.Name)
			}
			return nil, e.WithDetail("function %s depends on type %s", f.Signature(), t.Name)
		}
	}
	funcName := func(f *Function) string {
		if slices.Contains(searchPath, f.Schema) {
			return f.Signature()
		}
		return f.Schema + "." + f.Signature()
	}
	// Dependents, found breadth-first so that each is reported after the
	// object it depends on; ties in OID order for stable messages.
	var lines []string
	var deps []*Relation
	if dropSchema != nil {
		for _, t := range targets {
			lines = append(lines, fmt.Sprintf("%s %s depends on schema %s", kindWord(t.Kind), cur.displayName(t.OID, searchPath), dropSchema.Name))
		}
	}
	users := cur.dependents()
	var queue []*Relation
	// visit adds the views reading oid (named what) that are not gone yet.
	visit := func(oid uint32, what string) {
		for _, d := range users[oid] {
			if gone[d.OID] {
				continue
			}
			gone[d.OID] = true
			deps = append(deps, d)
			queue = append(queue, d)
			lines = append(lines, fmt.Sprintf("%s %s depends on %s", kindWord(d.Kind), cur.displayName(d.OID, searchPath), what))
		}
	}
	// A schema's functions (DROP SCHEMA): the views calling them go too.
	for _, f := range funcs {
		lines = append(lines, fmt.Sprintf("function %s depends on schema %s", funcName(f), dropSchema.Name))
	}
	queue = append(queue, targets...)
	for _, f := range funcs {
		visit(f.OID, "function "+funcName(f))
	}
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		visit(t.OID, kindWord(t.Kind)+" "+cur.displayName(t.OID, searchPath))
	}
	var cascaded []*Relation
	if dropSchema != nil {
		cascaded = append(cascaded, targets...)
	}
	cascaded = append(cascaded, deps...)
	fkLines, fkNotices, fkChanged := cur.fkDependents(gone, searchPath) // constraints.go
	lines = append(lines, fkLines...)
	if len(fkLines) > 0 && !cascade {
		return nil, pgerr.New(pgerr.DependentObjectsStillExist, "cannot drop %s because other objects depend on it", what).
			WithDetail("%s", strings.Join(lines, "\n")).
			WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
	}
	if (len(cascaded) > 0 || len(funcs) > 0) && !cascade {
		return nil, pgerr.New(pgerr.DependentObjectsStillExist, "cannot drop %s because other objects depend on it", what).
			WithDetail("%s", strings.Join(lines, "\n")).
			WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
	}
	var n *pgerr.Error
	detail := fkNotices
	if dropSchema != nil {
		for _, t := range targets {
			detail = append(detail, fmt.Sprintf("drop cascades to %s %s", kindWord(t.Kind), cur.displayName(t.OID, searchPath)))
		}
	}
	for _, f := range funcs {
		detail = append(detail, fmt.Sprintf("drop cascades to function %s", funcName(f)))
	}
	for _, d := range deps {
		detail = append(detail, fmt.Sprintf("drop cascades to %s %s", kindWord(d.Kind), cur.displayName(d.OID, searchPath)))
	}
	switch {
	case len(detail) == 1:
		n = notice(pgerr.SuccessfulCompletion, "%s", detail[0])
	case len(detail) > 1:
		n = notice(pgerr.SuccessfulCompletion, "drop cascades to %d other objects", len(detail)).WithDetail("%s", strings.Join(detail, "\n"))
	}
	s := cur.clone()
	for _, r := range fkChanged {
		s.add(r) // the same OID, name and keys: replaces the old version
	}
	all := append(append([]*Relation(nil), targets...), deps...)
	all = append(all, cur.ownedSequences(all)...) // serial columns' sequences go with their tables
	for _, r := range all {
		s.remove(r)
	}
	for _, f := range funcs {
		delete(s.funcs, f.OID)
	}
	if dropSchema != nil {
		delete(s.schemas, dropSchema.Name)
		delete(s.rels, dropSchema.Name)
		for k := range s.comments {
			if k.OID == dropSchema.OID {
				delete(s.comments, k)
			}
		}
	}
	// A table an open transaction has written cannot go (55006): its
	// COMMIT would report success for rows that are gone. Reserving stops
	// new writers until the drop is done, or canceled when it fails.
	var cancels []func()
	defer func() {
		for _, f := range cancels {
			f()
		}
	}()
	for _, r := range all {
		if r.Kind == KindTable {
			cancel, err := c.store.ReserveDrop(r.OID)
			if err != nil {
				return nil, err
			}
			cancels = append(cancels, cancel)
		}
	}
	if err := c.commit(s); err != nil {
		return nil, err
	}
	cancels = nil
	// The catalog no longer names these tables; a failure to remove their
	// files leaves orphans that the next Open drops.
	for _, r := range all {
		if r.Kind == KindTable {
			_ = c.store.DropTable(r.OID)
		}
		if r.Kind == KindSequence {
			c.dropSeqState(r.OID)
		}
	}
	return n, nil
}

// dependents maps each relation OID to the views that read it, in OID order.
func (s *snapshot) dependents() map[uint32][]*Relation {
	out := map[uint32][]*Relation{}
	for _, r := range s.byOID {
		for _, d := range r.DependsOn {
			out[d] = append(out[d], r)
		}
	}
	for _, l := range out {
		sort.Slice(l, func(i, j int) bool { return l[i].OID < l[j].OID })
	}
	return out
}

// DropSchema removes a schema. Errors: 3F000 `schema "s" does not exist`
// (with ifExists a notice instead), 2BP01 when it holds relations (unless
// cascade, which drops them and whatever depends on them) or is a system
// schema. Messages qualify names not visible on the default search_path.
func (c *Catalog) DropSchema(name string, ifExists, cascade bool) (string, error) {
	n, err := c.DropSchemaWithDetail(name, ifExists, cascade)
	if n == nil {
		return "", err
	}
	return n.Message, err
}

// DropSchemaWithDetail is DropSchema returning its notice as a
// *pgerr.Error of severity NOTICE (nil when there is none), whose Detail
// lists every object a cascade dropped.
func (c *Catalog) DropSchemaWithDetail(name string, ifExists, cascade bool) (*pgerr.Error, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.snap()
	sc := cur.schemas[name]
	if sc == nil {
		if ifExists {
			return notice(pgerr.SuccessfulCompletion, "schema \"%s\" does not exist, skipping", name), nil
		}
		return nil, pgerr.New(pgerr.UndefinedSchema, "schema \"%s\" does not exist", name)
	}
	if name == "pg_catalog" || name == "information_schema" {
		return nil, pgerr.New(pgerr.DependentObjectsStillExist, "cannot drop schema %s because it is required by the database system", name)
	}
	var funcs []*Function // function.go: dropped with the schema under CASCADE
	for _, f := range cur.funcs {
		if f.Schema == name {
			funcs = append(funcs, f)
		}
	}
	slices.SortFunc(funcs, func(a, b *Function) int { return int(a.OID) - int(b.OID) })
	for _, d := range cur.domains { // domain.go: dropped one by one, not by CASCADE
		if d.Schema == name {
			return nil, pgerr.New(pgerr.DependentObjectsStillExist, "cannot drop schema %s because other objects depend on it", name).
				WithDetail("type %s depends on schema %s", d.Name, name).
				WithHint("Drop the schema's domains first (DROP DOMAIN).")
		}
	}
	for _, u := range cur.sortedUserTypes() { // usertype.go: dropped one by one, not by CASCADE
		if u.Schema == name {
			return nil, pgerr.New(pgerr.DependentObjectsStillExist, "cannot drop schema %s because other objects depend on it", name).
				WithDetail("type %s depends on schema %s", u.Name, name).
				WithHint("Drop the schema's types first (DROP TYPE).")
		}
	}
	var targets []*Relation
	for _, r := range cur.rels[name] {
		targets = append(targets, r)
	}
	sort.Slice(targets, func(i, j int) bool { return targets[i].OID < targets[j].OID })
	return c.dropObjects(cur, targets, sc, funcs, cascade, defaultSearchPath, "schema "+name)
}
