package catalog

import (
	"fmt"
	"slices"

	"github.com/streamsql/streamsql/types"
)

// User types on disk (catalog.json "types") and in pg_type and pg_enum
// (usertype.go has the model).

// fileUserType is a UserType on disk: an enum's labels, or a composite
// type's fields with their types by OID and typmod (a field may be of an
// earlier user type: types load in OID order).
type fileUserType struct {
	OID      uint32      `json:"oid"`
	ArrayOID uint32      `json:"array_oid"`
	Schema   string      `json:"schema"`
	Name     string      `json:"name"`
	Owner    uint32      `json:"owner,omitempty"`
	Labels   []EnumLabel `json:"labels,omitempty"`
	Fields   []fileField `json:"fields,omitempty"`
	Enum     bool        `json:"enum,omitempty"`
}

type fileField struct {
	Name       string `json:"name"`
	TypeOID    uint32 `json:"type_oid"`
	Typmod     int32  `json:"typmod"`
	ElemTypmod int32  `json:"elem_typmod,omitempty"`
}

func saveUserTypes(s *snapshot) []fileUserType {
	var out []fileUserType
	for _, u := range s.sortedUserTypes() {
		fu := fileUserType{OID: u.OID, ArrayOID: u.ArrayOID, Schema: u.Schema, Name: u.Name, Owner: u.Owner, Enum: u.Enum, Labels: u.Labels}
		if !u.Enum {
			for i, t := range u.T.Rec.Types {
				ff := fileField{Name: u.T.Rec.Names[i], TypeOID: t.OID(), Typmod: t.Typmod}
				if t.Kind == types.Array {
					ff.ElemTypmod = t.Elem.Typmod
				}
				fu.Fields = append(fu.Fields, ff)
			}
		}
		out = append(out, fu)
	}
	return out
}

func loadUserTypes(s *snapshot, fus []fileUserType) error {
	slices.SortFunc(fus, func(a, b fileUserType) int { return int(a.OID) - int(b.OID) })
	for _, fu := range fus {
		u := &UserType{OID: fu.OID, ArrayOID: fu.ArrayOID, Schema: fu.Schema, Name: fu.Name, Owner: fu.Owner, Enum: fu.Enum, Labels: fu.Labels}
		if u.Enum {
			u.T = types.EnumOf(types.NewEnumType(u.OID, u.ArrayOID, u.Schema, u.Name, enumLabels(u.Labels)))
		} else {
			names := make([]string, len(fu.Fields))
			ts := make([]types.T, len(fu.Fields))
			for i, ff := range fu.Fields {
				t, ok := s.typeByOID(ff.TypeOID)
				if !ok {
					return fmt.Errorf("field %s of type %s has unknown type oid %d", ff.Name, fu.Name, ff.TypeOID)
				}
				t.Typmod = ff.Typmod
				if t.Kind == types.Array {
					e := *t.Elem
					e.Typmod = ff.ElemTypmod
					t.Elem = &e
				}
				names[i], ts[i] = ff.Name, t
			}
			u.T = compositeT(u, names, ts)
		}
		s.utypes[u.OID] = u
	}
	return nil
}

func (s *snapshot) sortedUserTypes() []*UserType {
	us := make([]*UserType, 0, len(s.utypes))
	for _, u := range s.utypes {
		us = append(us, u)
	}
	slices.SortFunc(us, func(a, b *UserType) int { return int(a.OID) - int(b.OID) })
	return us
}

// PostgreSQL 15's I/O functions of enums.
const (
	procEnumIn   uint32 = 3506
	procEnumOut  uint32 = 3507
	procEnumRecv uint32 = 3532
	procEnumSend uint32 = 3533
)

// userTypeRows adds the pg_type rows of the user's enums (typtype 'e') and
// composite types (typtype 'c'; typrelid 0, as they have no pg_class row
// here, so that psql's \dT lists them) and of their array types.
func userTypeRows(s *snapshot, b *rowBuilder) error {
	for _, u := range s.sortedUserTypes() {
		r := row{
			"oid": u.OID, "typname": u.Name, "typnamespace": s.schemaOID(u.Schema), "typowner": u.Owner,
			"typlen": int16(4), "typbyval": true, "typtype": "e", "typcategory": "E",
			"typispreferred": false, "typisdefined": true, "typdelim": ",", "typrelid": uint32(0),
			"typsubscript": uint32(0), "typelem": uint32(0), "typarray": u.ArrayOID,
			"typinput": procEnumIn, "typoutput": procEnumOut, "typreceive": procEnumRecv, "typsend": procEnumSend,
			"typmodin": uint32(0), "typmodout": uint32(0), "typanalyze": uint32(0),
			"typalign": "i", "typstorage": "p", "typnotnull": false,
			"typbasetype": uint32(0), "typtypmod": -1, "typndims": 0, "typcollation": uint32(0),
		}
		align := "i"
		if !u.Enum {
			r["typlen"], r["typbyval"], r["typtype"], r["typcategory"] = int16(-1), false, "c", "C"
			r["typinput"], r["typoutput"], r["typreceive"], r["typsend"] = procRecordIn, procRecordOut, procRecordRecv, procRecordSend
			r["typalign"], r["typstorage"] = "d", "x"
			align = "d"
		}
		if err := b.add(r); err != nil {
			return err
		}
		err := b.add(row{
			"oid": u.ArrayOID, "typname": "_" + u.Name, "typnamespace": s.schemaOID(u.Schema), "typowner": u.Owner,
			"typlen": int16(-1), "typbyval": false, "typtype": "b", "typcategory": "A",
			"typispreferred": false, "typisdefined": true, "typdelim": ",", "typrelid": uint32(0),
			"typsubscript": procArraySubscript, "typelem": u.OID, "typarray": uint32(0),
			"typinput": procArrayIn, "typoutput": procArrayOut, "typreceive": procArrayRecv, "typsend": procArraySend,
			"typmodin": uint32(0), "typmodout": uint32(0), "typanalyze": procArrayTypanalyze,
			"typalign": align, "typstorage": "x", "typnotnull": false,
			"typbasetype": uint32(0), "typtypmod": -1, "typndims": 0, "typcollation": uint32(0),
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func init() { registerRows("pg_catalog.pg_enum", pgEnumRows) }

// pgEnumRows lists the labels of the user's enums.
func pgEnumRows(_ *Catalog, s *snapshot, _ RowsContext, b *rowBuilder) error {
	for _, u := range s.sortedUserTypes() {
		for _, l := range u.Labels {
			if err := b.add(row{"oid": l.OID, "enumtypid": u.OID, "enumsortorder": l.Sort, "enumlabel": l.Label}); err != nil {
				return err
			}
		}
	}
	return nil
}
