package catalog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// User-defined types (CREATE TYPE): enums (CREATE TYPE t AS ENUM (...))
// and composite types (CREATE TYPE t AS (f1 int, ...)). Each has an OID
// and an array type's OID, in the relations' OID space, and lives in the
// snapshot's utypes map, persisted in catalog.json under "types" (an
// optional key: older files load unchanged). A column of such a type
// keeps it in Column.Type: an Enum T pointing to the enum's shared
// types.EnumType, or a Record T whose RecordType carries the composite's
// OID and name; on disk a column names the type by OID, resolved when the
// catalog loads (typeByOID). Read without locks like the rest of the
// snapshot; DDL on them is serialized by Catalog.mu. ALTER TYPE ... ADD
// VALUE / RENAME VALUE publish a new snapshot and then swap the labels of
// the shared EnumType, so that running plans print the new labels.

// UserType is an enum or a composite type. Immutable once in a snapshot
// (the EnumType its T points to is shared and changes only its labels).
type UserType struct {
	OID      uint32
	ArrayOID uint32
	Schema   string
	Name     string
	Owner    uint32
	// Enum is set for an enum: its labels in sort order.
	Enum bool
	// Labels are an enum's labels, in sort order.
	Labels []EnumLabel
	// T is the type itself (types.EnumOf or a named record type).
	T types.T
}

// EnumLabel is one label of an enum (a pg_enum row).
type EnumLabel struct {
	OID   uint32  `json:"oid"`
	Label string  `json:"label"`
	Sort  float64 `json:"sort"`
}

// maxLabelLen is NAMEDATALEN-1: an enum label's limit in bytes.
const maxLabelLen = 63

// enumLabels builds the types package's view of labels.
func enumLabels(ls []EnumLabel) *types.EnumLabels {
	out := &types.EnumLabels{Labels: make([]string, len(ls)), Sorts: make([]float64, len(ls))}
	for i, l := range ls {
		out.Labels[i], out.Sorts[i] = l.Label, l.Sort
	}
	return out
}

func checkLabel(l string) error {
	if len(l) > maxLabelLen {
		return pgerr.New(pgerr.Code("42602"), "invalid enum label \"%s\"", l).
			WithDetail("Labels must be %d bytes or less.", maxLabelLen)
	}
	return nil
}

// typeNameTaken reports whether schema.name already names a type: a user
// type, a domain or a relation's row type.
func (s *snapshot) typeNameTaken(schema, name string) bool {
	if s.userTypeIn(schema, name) != nil || s.domainIn(schema, name) != nil {
		return true
	}
	r := s.rels[schema][name]
	return r != nil && r.RowTypeOID != 0
}

// CreateEnumType adds an enum with labels in the given order.
func (c *Catalog) CreateEnumType(schema, name string, labels []string, owner uint32) (*UserType, error) {
	for i, l := range labels {
		if err := checkLabel(l); err != nil {
			return nil, err
		}
		if slices.Contains(labels[:i], l) {
			return nil, pgerr.New(pgerr.UniqueViolation, "enum label \"%s\" used more than once", l)
		}
	}
	return c.createUserType(schema, name, owner, func(s *snapshot, u *UserType) {
		for i, l := range labels {
			u.Labels = append(u.Labels, EnumLabel{OID: s.allocOID(), Label: l, Sort: float64(i + 1)})
		}
		u.Enum = true
		u.T = types.EnumOf(types.NewEnumType(u.OID, u.ArrayOID, u.Schema, u.Name, enumLabels(u.Labels)))
	})
}

// CreateCompositeType adds a composite type with the given fields.
func (c *Catalog) CreateCompositeType(schema, name string, names []string, ts []types.T, owner uint32) (*UserType, error) {
	for i, n := range names {
		if slices.Contains(names[:i], n) {
			return nil, pgerr.New(pgerr.DuplicateColumn, "column \"%s\" specified more than once", n)
		}
	}
	return c.createUserType(schema, name, owner, func(_ *snapshot, u *UserType) {
		u.T = compositeT(u, slices.Clone(names), slices.Clone(ts))
	})
}

func compositeT(u *UserType, names []string, ts []types.T) types.T {
	t := types.RecordOf(names, ts)
	t.Rec.OID, t.Rec.ArrayOID, t.Rec.Schema, t.Rec.Name = u.OID, u.ArrayOID, u.Schema, u.Name
	return t
}

func (c *Catalog) createUserType(schema, name string, owner uint32, fill func(*snapshot, *UserType)) (*UserType, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.snap().clone()
	if schema == "" {
		schema = "public"
	}
	if s.schemas[schema] == nil {
		return nil, pgerr.New(pgerr.InvalidSchemaName, "schema \"%s\" does not exist", schema)
	}
	if s.typeNameTaken(schema, name) {
		return nil, pgerr.New(codeDuplicateObject, "type \"%s\" already exists", name)
	}
	u := &UserType{OID: s.allocOID(), Schema: schema, Name: name, Owner: owner}
	u.ArrayOID = s.allocOID()
	fill(s, u)
	s.utypes[u.OID] = u
	if err := c.commit(s); err != nil {
		return nil, err
	}
	return u, nil
}

// userTypeIn returns the user type schema.name, or nil.
func (s *snapshot) userTypeIn(schema, name string) *UserType {
	for _, u := range s.utypes {
		if u.Schema == schema && u.Name == name {
			return u
		}
	}
	return nil
}

// LookupUserType returns the enum or composite type named name: in
// schema, or (schema "") in the first schema of searchPath that has one.
func (c *Catalog) LookupUserType(schema, name string, searchPath []string) *UserType {
	s := c.snap()
	if len(s.utypes) == 0 {
		return nil
	}
	return onPath(schema, searchPath, func(sc string) *UserType { return s.userTypeIn(sc, name) })
}

// onPath returns find's first result over schema (when given) or else
// the schemas of searchPath in order; nil when none has one.
func onPath[T any](schema string, searchPath []string, find func(schema string) *T) *T {
	path := searchPath
	if schema != "" {
		path = []string{schema}
	}
	for _, sc := range path {
		if x := find(sc); x != nil {
			return x
		}
	}
	return nil
}

// UserType returns the user type of that OID, or nil.
func (c *Catalog) UserType(oid uint32) *UserType { return c.snap().utypes[oid] }

// typeByOID resolves a type OID: a built-in type, or a user type or its
// array.
func (s *snapshot) typeByOID(oid uint32) (types.T, bool) {
	if t, ok := types.FromOID(oid); ok {
		return t, true
	}
	for _, u := range s.utypes {
		switch oid {
		case u.OID:
			return u.T, true
		case u.ArrayOID:
			return types.ArrayOf(u.T), true
		}
	}
	return types.T{}, false
}

// usesType reports whether t is, or contains (as an array's element or a
// record's field), the user type oid.
func usesType(t types.T, oid uint32) bool {
	switch t.Kind {
	case types.Array:
		return t.Elem != nil && usesType(*t.Elem, oid)
	case types.Enum:
		return t.Enum != nil && t.Enum.OID == oid
	case types.Record:
		if t.Rec == nil {
			return false
		}
		if t.Rec.OID == oid {
			return true
		}
		for _, f := range t.Rec.Types {
			if usesType(f, oid) {
				return true
			}
		}
	}
	return false
}

// userTypeDependent describes an object that uses u: a column of a
// relation or of a composite type, a domain over it (unless
// skipDomains), or a view whose query uses it; "" when there is none.
func (s *snapshot) userTypeDependent(u *UserType, skipDomains bool) string {
	for _, r := range s.sortedRelations() {
		for _, col := range r.Columns {
			if usesType(col.Type, u.OID) {
				return fmt.Sprintf("column %s of %s %s depends on type %s", col.Name, relNoun(r.Kind), r.Name, u.Name)
			}
		}
		if slices.Contains(r.DependsOn, u.OID) {
			return fmt.Sprintf("%s %s depends on type %s", relNoun(r.Kind), r.Name, u.Name)
		}
	}
	for _, o := range s.utypes {
		if o.OID != u.OID && !o.Enum {
			for i, f := range o.T.Rec.Types {
				if usesType(f, u.OID) {
					return fmt.Sprintf("column %s of composite type %s depends on type %s", o.T.Rec.Names[i], o.Name, u.Name)
				}
			}
		}
	}
	for _, d := range s.domains {
		if usesType(d.Base, u.OID) && !skipDomains {
			return fmt.Sprintf("type %s depends on type %s", d.Name, u.Name)
		}
	}
	return ""
}

// cascadeDomains drops from s the domains over u for DROP TYPE ...
// CASCADE, when nothing uses them in turn, and returns the notice naming
// them (nil when there are none); anything else that depends on u is
// refused by name.
func (s *snapshot) cascadeDomains(u *UserType) (*pgerr.Error, error) {
	if dep := s.userTypeDependent(u, true); dep != "" {
		return nil, pgerr.Unsupported("DROP TYPE ... CASCADE is not supported: drop or alter the dependent objects first (%s)", dep)
	}
	var names []string
	for _, d := range s.domains {
		if !usesType(d.Base, u.OID) {
			continue
		}
		if dep := s.domainDependent(d, true); dep != "" {
			return nil, pgerr.Unsupported("DROP TYPE ... CASCADE is not supported: drop or alter the dependent objects first (%s)", dep)
		}
		names = append(names, d.Name)
		delete(s.domains, d.OID)
		delete(s.comments, objKey{d.OID, 0})
	}
	switch len(names) {
	case 0:
		return nil, nil
	case 1:
		return notice(pgerr.Code("00000"), "drop cascades to type %s", names[0]), nil
	}
	slices.Sort(names)
	n := notice(pgerr.Code("00000"), "drop cascades to %d other objects", len(names))
	return n.WithDetail("drop cascades to type %s", strings.Join(names, "\ndrop cascades to type ")), nil
}

// DropUserType removes an enum or composite type. One in use (a column,
// a composite type's field, a domain, a view) is not dropped (2BP01);
// CASCADE drops the domains over it that nothing uses (the notice says
// which) and is refused by name for anything else. skipped is the notice
// to send (IF EXISTS of a missing type, or what CASCADE dropped).
func (c *Catalog) DropUserType(schema, name string, searchPath []string, missingOK, cascade bool) (skipped *pgerr.Error, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.snap().clone()
	u := c.LookupUserType(schema, name, searchPath)
	if u == nil {
		if missingOK {
			return notice(pgerr.Code("00000"), "type \"%s\" does not exist, skipping", name), nil
		}
		return nil, pgerr.New(pgerr.UndefinedObject, "type \"%s\" does not exist", name)
	}
	if cascade {
		if skipped, err = s.cascadeDomains(u); err != nil {
			return nil, err
		}
	}
	if dep := s.userTypeDependent(u, false); dep != "" {
		return nil, pgerr.New(pgerr.DependentObjectsStillExist, "cannot drop type %s because other objects depend on it", u.Name).
			WithDetail("%s", dep).
			WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
	}
	delete(s.utypes, u.OID)
	delete(s.comments, objKey{u.OID, 0})
	return skipped, c.commit(s)
}

// AddEnumValue is ALTER TYPE ... ADD VALUE [IF NOT EXISTS] label
// [BEFORE|AFTER neighbor] (neighbor "": at the end).
func (c *Catalog) AddEnumValue(oid uint32, label, neighbor string, before, ifNotExists bool) (*pgerr.Error, error) {
	if err := checkLabel(label); err != nil {
		return nil, err
	}
	var skipped *pgerr.Error
	err := c.alterEnum(oid, func(s *snapshot, ls []EnumLabel) ([]EnumLabel, error) {
		if enumLabelIndex(ls, label) >= 0 {
			if ifNotExists {
				skipped = notice(pgerr.Code("00000"), "enum label \"%s\" already exists, skipping", label)
				return nil, nil
			}
			return nil, pgerr.New(pgerr.DuplicateObject, "enum label \"%s\" already exists", label)
		}
		at := len(ls) // insert before index at
		if neighbor != "" {
			i := enumLabelIndex(ls, neighbor)
			if i < 0 {
				return nil, pgerr.New(pgerr.InvalidParameterValue, "\"%s\" is not an existing enum label", neighbor)
			}
			at = i
			if !before {
				at = i + 1
			}
		}
		var lo, hi float64
		if at > 0 {
			lo = ls[at-1].Sort
		}
		if at < len(ls) {
			hi = ls[at].Sort
		}
		pos, ok := types.EnumInsertPosition(lo, hi, at > 0, at < len(ls))
		if !ok {
			return nil, pgerr.Unsupported("ALTER TYPE ... ADD VALUE: no room left between \"%s\" and \"%s\" (renumbering the labels of an enum is not supported)", ls[at-1].Label, ls[at].Label)
		}
		out := slices.Insert(slices.Clone(ls), at, EnumLabel{OID: s.allocOID(), Label: label, Sort: pos})
		return out, nil
	})
	return skipped, err
}

// RenameEnumValue is ALTER TYPE ... RENAME VALUE old TO new.
func (c *Catalog) RenameEnumValue(oid uint32, old, new string) error {
	if err := checkLabel(new); err != nil {
		return err
	}
	return c.alterEnum(oid, func(_ *snapshot, ls []EnumLabel) ([]EnumLabel, error) {
		i := enumLabelIndex(ls, old)
		if i < 0 {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "\"%s\" is not an existing enum label", old)
		}
		if enumLabelIndex(ls, new) >= 0 {
			return nil, pgerr.New(pgerr.DuplicateObject, "enum label \"%s\" already exists", new)
		}
		out := slices.Clone(ls)
		out[i].Label = new
		return out, nil
	})
}

func enumLabelIndex(ls []EnumLabel, l string) int {
	return slices.IndexFunc(ls, func(x EnumLabel) bool { return x.Label == l })
}

// alterEnum replaces the labels of enum oid with change's result (nil:
// no change), publishes the snapshot and then the shared EnumType's labels.
func (c *Catalog) alterEnum(oid uint32, change func(*snapshot, []EnumLabel) ([]EnumLabel, error)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.snap().clone()
	old := s.utypes[oid]
	if old == nil || !old.Enum {
		return pgerr.New(pgerr.WrongObjectType, "type with OID %d is not an enum", oid)
	}
	ls, err := change(s, old.Labels)
	if err != nil || ls == nil {
		return err
	}
	u := *old
	u.Labels = ls
	s.utypes[oid] = &u
	if err := c.commit(s); err != nil {
		return err
	}
	u.T.Enum.SetLabels(enumLabels(ls))
	return nil
}

// userTypeName is format_type's name of a user type or its array type
// (schema-qualified when its schema is not on searchPath).
func (s *snapshot) userTypeName(oid uint32, searchPath []string) (string, bool) {
	for _, u := range s.utypes {
		if oid != u.OID && oid != u.ArrayOID {
			continue
		}
		n := u.Name
		if !slices.Contains(searchPath, u.Schema) {
			n = u.Schema + "." + n
		}
		if oid == u.ArrayOID {
			n += "[]"
		}
		return n, true
	}
	return "", false
}

// userTypeOID resolves a type name as regtype input does (name,
// schema.name, either with "[]").
func (s *snapshot) userTypeOID(n string) (uint32, bool) {
	arr := false
	if b, ok := strings.CutSuffix(n, "[]"); ok {
		n, arr = strings.TrimSpace(b), true
	}
	for _, u := range s.utypes {
		if u.Name == n || u.Schema+"."+u.Name == n {
			if arr {
				return u.ArrayOID, true
			}
			return u.OID, true
		}
	}
	return 0, false
}

// userTypeVisible reports whether a user type (or its array) is visible
// on searchPath; found is false when oid is no user type.
func (s *snapshot) userTypeVisible(oid uint32, searchPath []string) (visible, found bool) {
	for _, u := range s.utypes {
		if oid == u.OID || oid == u.ArrayOID {
			return slices.Contains(searchPath, u.Schema), true
		}
	}
	return false, false
}

// relNoun names a relation's kind as PostgreSQL's dependency messages do.
func relNoun(k RelKind) string {
	switch k {
	case KindTable:
		return "table"
	case KindSource:
		return "source"
	}
	return kindNoun(k)
}
