package catalog

import (
	"fmt"
	"slices"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Domains (CREATE DOMAIN): a built-in base type with NOT NULL, CHECK
// constraints over VALUE and a DEFAULT. The catalog keeps each domain's
// definition; a column of a domain type stores its base type in
// Column.Type and the domain's OID in Column.Domain, and the planner adds
// the domain's checks where a value becomes the domain's (casts,
// INSERT, UPDATE, COPY FROM: planner.DomainCheck). Domains live in the
// snapshot like functions (same OID space, persisted in catalog.json
// under "domains", an optional key older files do without) and are read
// without locks; DDL on them is serialized by Catalog.mu.

// Domain is a user-defined domain. Immutable once in a snapshot.
type Domain struct {
	OID    uint32  `json:"oid"`
	Schema string  `json:"schema"`
	Name   string  `json:"name"`
	Base   types.T `json:"-"`
	// NotNull is the domain's NOT NULL constraint.
	NotNull bool `json:"not_null,omitempty"`
	// Default is the domain's DEFAULT as SQL text ("" = none): a column
	// of the domain without a default of its own takes it.
	Default string `json:"default,omitempty"`
	// Checks are the CHECK constraints, in creation order.
	Checks []DomainCheck `json:"checks,omitempty"`
	Owner  uint32        `json:"owner,omitempty"`
}

// DomainCheck is one CHECK constraint of a domain: its name and its
// expression as SQL text over VALUE.
type DomainCheck struct {
	Name string `json:"name"`
	Expr string `json:"expr"`
}

// codeDuplicateObject is 42710, "type already exists".
const codeDuplicateObject pgerr.Code = "42710"

// CreateDomain adds d (OID assigned here; d is not modified).
func (c *Catalog) CreateDomain(d Domain) (*Domain, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.snap().clone()
	if d.Schema == "" {
		d.Schema = "public"
	}
	if s.schemas[d.Schema] == nil {
		return nil, pgerr.New(pgerr.InvalidSchemaName, "schema \"%s\" does not exist", d.Schema)
	}
	if s.typeNameTaken(d.Schema, d.Name) { // usertype.go
		return nil, pgerr.New(codeDuplicateObject, "type \"%s\" already exists", d.Name)
	}
	d.OID = s.allocOID()
	d.Checks = slices.Clone(d.Checks)
	s.domains[d.OID] = &d
	if err := c.commit(s); err != nil {
		return nil, err
	}
	return &d, nil
}

// domainIn returns the domain schema.name, or nil.
func (s *snapshot) domainIn(schema, name string) *Domain {
	for _, d := range s.domains {
		if d.Schema == schema && d.Name == name {
			return d
		}
	}
	return nil
}

// LookupDomain returns the domain named name: in schema, or (schema "") in
// the first schema of searchPath that has one. Nil when there is none.
func (c *Catalog) LookupDomain(schema, name string, searchPath []string) *Domain {
	s := c.snap()
	if len(s.domains) == 0 {
		return nil
	}
	return onPath(schema, searchPath, func(sc string) *Domain { return s.domainIn(sc, name) }) // usertype.go
}

// Domain returns the domain of that OID, or nil.
func (c *Catalog) Domain(oid uint32) *Domain { return c.snap().domains[oid] }

// DropDomain removes a domain. A domain that a column's type is, or that
// a view's query uses (its OID in the view's DependsOn), cannot be
// dropped (2BP01); CASCADE, which would drop those columns and views, is
// refused by name.
func (c *Catalog) DropDomain(schema, name string, searchPath []string, missingOK, cascade bool) (skipped *pgerr.Error, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.snap().clone()
	d := c.LookupDomain(schema, name, searchPath)
	if d == nil {
		if missingOK {
			return notice(pgerr.Code("00000"), "type \"%s\" does not exist, skipping", name), nil
		}
		return nil, pgerr.New(pgerr.UndefinedObject, "type \"%s\" does not exist", name)
	}
	if dep := s.domainDependent(d, true); dep != "" {
		if cascade {
			return nil, pgerr.Unsupported("DROP DOMAIN ... CASCADE is not supported: drop or alter the dependent objects first (%s)", dep)
		}
		return nil, pgerr.New(pgerr.DependentObjectsStillExist, "cannot drop type %s because other objects depend on it", d.Name).
			WithDetail("%s", dep).
			WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
	}
	delete(s.domains, d.OID)
	delete(s.comments, objKey{d.OID, 0})
	return nil, c.commit(s)
}

// domainDependent describes an object that uses d: a column of it, or
// (withViews) a view whose query uses it; "" when there is none.
func (s *snapshot) domainDependent(d *Domain, withViews bool) string {
	for _, r := range s.byOID {
		for _, col := range r.Columns {
			if col.Domain == d.OID {
				return fmt.Sprintf("column %s of table %s depends on type %s", col.Name, r.Name, d.Name)
			}
		}
		if withViews && slices.Contains(r.DependsOn, d.OID) {
			return fmt.Sprintf("%s %s depends on type %s", kindNoun(r.Kind), r.Name, d.Name)
		}
	}
	return ""
}

// AlterDomain applies change to a copy of the domain of OID oid and
// publishes it (a new catalog generation: plans using it are planned
// again, with the new constraints). change is told which column uses the
// domain ("" when none: no stored value would need checking).
func (c *Catalog) AlterDomain(oid uint32, change func(d *Domain, usedBy string) error) (*Domain, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.snap().clone()
	old := s.domains[oid]
	if old == nil {
		return nil, pgerr.New(pgerr.UndefinedObject, "cache lookup failed for type %d", oid)
	}
	d := *old
	d.Checks = slices.Clone(old.Checks)
	if err := change(&d, s.domainDependent(old, false)); err != nil {
		return nil, err
	}
	s.domains[oid] = &d
	if err := c.commit(s); err != nil {
		return nil, err
	}
	return &d, nil
}

// domainTypeRows adds the pg_type rows of the user's domains (typtype
// 'd', as psql's \dD reads them; no array type of their own).
func domainTypeRows(s *snapshot, b *rowBuilder) error {
	ds := make([]*Domain, 0, len(s.domains))
	for _, d := range s.domains {
		ds = append(ds, d)
	}
	slices.SortFunc(ds, func(a, b *Domain) int { return int(a.OID) - int(b.OID) })
	for _, d := range ds {
		var base *pgType
		for i := range pgTypes {
			if pgTypes[i].oid == d.Base.OID() || d.Base.Kind == types.Array && pgTypes[i].oid == d.Base.Elem.OID() {
				base = &pgTypes[i]
				break
			}
		}
		if base == nil {
			continue
		}
		r := row{
			"oid": d.OID, "typname": d.Name, "typnamespace": s.schemaOID(d.Schema), "typowner": d.Owner,
			"typlen": d.Base.Len(), "typbyval": base.byVal, "typtype": "d", "typcategory": string(rune(d.Base.Category())),
			"typispreferred": false, "typisdefined": true, "typdelim": ",", "typrelid": uint32(0),
			"typsubscript": uint32(0), "typelem": uint32(0), "typarray": uint32(0),
			"typinput": procDomainIn, "typoutput": base.procs[1], "typreceive": procDomainRecv, "typsend": base.procs[3],
			"typmodin": uint32(0), "typmodout": uint32(0), "typanalyze": uint32(0),
			"typalign": string(rune(base.align)), "typstorage": string(rune(base.storage)), "typnotnull": d.NotNull,
			"typbasetype": d.Base.OID(), "typtypmod": d.Base.Typmod, "typndims": 0, "typcollation": base.collation,
			"typdefault": nullIfEmpty(d.Default),
		}
		if d.Base.Kind == types.Array {
			r["typlen"], r["typbyval"], r["typcategory"], r["typndims"] = -1, false, "A", 1
			r["typoutput"], r["typsend"], r["typalign"], r["typstorage"] = procArrayOut, procArraySend, alignOfArray(*d.Base.Elem), "x"
		}
		if err := b.add(r); err != nil {
			return err
		}
	}
	return nil
}

// fileDomain is a Domain on disk (its base type by OID and typmod).
type fileDomain struct {
	Domain
	BaseType fileType `json:"base_type"`
	// ElemTypmod is an array base type's element typmod.
	ElemTypmod int32 `json:"elem_typmod,omitempty"`
}

func toFileDomain(d *Domain) fileDomain {
	fd := fileDomain{Domain: *d, BaseType: toFileType(d.Base)}
	if d.Base.Kind == types.Array {
		fd.ElemTypmod = d.Base.Elem.Typmod
	}
	return fd
}

func fromFileDomain(s *snapshot, fd fileDomain) (*Domain, error) {
	d := fd.Domain
	t, ok := s.typeByOID(fd.BaseType.OID) // a user type too (usertype.go)
	if !ok {
		return nil, fmt.Errorf("domain %s: unknown type oid %d", d.Name, fd.BaseType.OID)
	}
	t.Typmod = fd.BaseType.Typmod
	d.Base = t
	if d.Base.Kind == types.Array && d.Base.Elem != nil {
		e := *d.Base.Elem
		e.Typmod = fd.ElemTypmod
		d.Base.Elem = &e
	}
	return &d, nil
}
