package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// catalogFile is the catalog's file in the data directory.
const catalogFile = "catalog.json"

// catalogVersion is the version save writes. Version 1 data directories
// stored interval values in nanoseconds (Arrow's field), version 2 in
// microseconds (docs/contributing/storage.md): a version 1 directory
// opens only when no relation has an interval column, and is written as
// version 2 from then on.
const catalogVersion = 2

// checkV1 refuses a version 1 catalog whose relations have interval
// columns: their stored values would read 1000 times too large.
func checkV1(path string, f fileCatalog) error {
	for _, r := range f.Relations {
		for _, c := range r.Columns {
			if c.TypeOID == 1186 || c.TypeOID == 1187 { // interval, interval[]
				return fmt.Errorf("catalog: %s was written by an earlier streamsql that stored interval values in another unit, and %s.%s has the interval column %s: export its data with that version (COPY ... TO) and load it into a new data directory", path, r.Schema, r.Name, c.Name)
			}
		}
	}
	return nil
}

// The on-disk form. Types are stored by PostgreSQL OID and typmod, which are
// stable, rather than by types.Kind, whose numbering is internal.
type fileCatalog struct {
	Version   int            `json:"version"`
	NextOID   uint32         `json:"next_oid"`
	Schemas   []fileSchema   `json:"schemas"`
	Relations []fileRelation `json:"relations"`
	Comments  []fileComment  `json:"comments,omitempty"`
	Functions []fileFunction `json:"functions,omitempty"`
	Domains   []fileDomain   `json:"domains,omitempty"`
	Types     []fileUserType `json:"types,omitempty"` // usertype_file.go
}

type fileSchema struct {
	OID  uint32 `json:"oid"`
	Name string `json:"name"`
}

type fileRelation struct {
	OID        uint32       `json:"oid"`
	Schema     string       `json:"schema"`
	Name       string       `json:"name"`
	Kind       string       `json:"kind"`
	Columns    []fileColumn `json:"columns"`
	PrimaryKey []int        `json:"primary_key,omitempty"`
	PKName     string       `json:"pk_name,omitempty"`
	PKIndexOID uint32       `json:"pk_index_oid,omitempty"`
	Unique     []UniqueKey  `json:"unique,omitempty"`
	// Checks and ForeignKeys: constraints.go (optional keys).
	Checks      []CheckConstraint `json:"checks,omitempty"`
	ForeignKeys []ForeignKey      `json:"foreign_keys,omitempty"`
	RowTypeOID  uint32            `json:"row_type_oid,omitempty"`
	ViewQuery   string            `json:"view_query,omitempty"`
	DependsOn   []uint32          `json:"depends_on,omitempty"`
	AppendOnly  bool              `json:"append_only,omitempty"`
	Watermark   *Watermark        `json:"watermark,omitempty"`
	// A source's connector, WITH options and FORMAT.
	Connector string            `json:"connector,omitempty"`
	Options   map[string]string `json:"options,omitempty"`
	Format    string            `json:"format,omitempty"`
	Encode    string            `json:"encode,omitempty"` // a sink's ENCODE
	// Parallelism is a view's or sink's streaming_parallelism.
	Parallelism int `json:"parallelism,omitempty"`
	// ParallelismDefault: a view created with the server's default
	// streaming_parallelism, which follows that default at every start.
	ParallelismDefault bool `json:"parallelism_default,omitempty"`
	// SplitDistinct is a view's or sink's streaming_split_distinct.
	SplitDistinct string `json:"split_distinct,omitempty"`
	// Owner is the owning role's OID (absent in old catalogs: the
	// bootstrap superuser); ACL is relacl, null for the default one.
	Owner uint32    `json:"owner,omitempty"`
	ACL   []ACLItem `json:"acl"`
	// Seq is a sequence's parameters.
	Seq *SeqOptions `json:"seq,omitempty"`
}

type fileColumn struct {
	Name       string `json:"name"`
	TypeOID    uint32 `json:"type_oid"`
	Typmod     int32  `json:"typmod"`
	ElemTypmod int32  `json:"elem_typmod,omitempty"`
	NotNull    bool   `json:"not_null,omitempty"`
	Default    string `json:"default,omitempty"`
	// Identity is attidentity ('a' or 'd'); IdentityDefault its nextval.
	Identity        string `json:"identity,omitempty"`
	IdentityDefault string `json:"identity_default,omitempty"`
	// Domain is the OID of the column's domain (domain.go); TypeOID is then
	// the domain's base type.
	Domain uint32 `json:"domain,omitempty"`
	// Generated is a generated column's expression (Column.Generated).
	Generated string `json:"generated,omitempty"`
}

type fileComment struct {
	OID  uint32 `json:"oid"`
	Sub  int32  `json:"sub,omitempty"`
	Text string `json:"text"`
}

// emptySnapshot holds the built-in schemas and nothing else.
func emptySnapshot() *snapshot {
	s := &snapshot{
		schemas:  map[string]*Schema{},
		rels:     map[string]map[string]*Relation{},
		byOID:    map[uint32]*Relation{},
		indexes:  map[uint32]*Relation{},
		comments: map[objKey]string{},
		funcs:    map[uint32]*Function{},
		domains:  map[uint32]*Domain{},
		utypes:   map[uint32]*UserType{},
		nextOID:  FirstUserOID,
		fks:      &fkIndex{},
	}
	for _, sc := range []*Schema{{PgCatalogOID, "pg_catalog"}, {PublicOID, "public"}, {InformationSchemaOID, "information_schema"}} {
		s.schemas[sc.Name] = sc
		s.rels[sc.Name] = map[string]*Relation{}
	}
	return s
}

// load reads the catalog file of dir; a missing file is an empty catalog.
func load(dir string) (*snapshot, error) {
	path := filepath.Join(dir, catalogFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return emptySnapshot(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	var f fileCatalog
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("catalog: %s is corrupt: %w", path, err)
	}
	if f.Version != 1 && f.Version != catalogVersion {
		return nil, fmt.Errorf("catalog: %s has unknown version %d", path, f.Version)
	}
	if f.Version == 1 {
		if err := checkV1(path, f); err != nil {
			return nil, err
		}
	}
	s := emptySnapshot()
	if f.NextOID > s.nextOID {
		s.nextOID = f.NextOID
	}
	for _, fs := range f.Schemas {
		if _, ok := s.schemas[fs.Name]; !ok {
			s.schemas[fs.Name] = &Schema{OID: fs.OID, Name: fs.Name}
			s.rels[fs.Name] = map[string]*Relation{}
		}
	}
	if err := loadUserTypes(s, f.Types); err != nil { // usertype_file.go
		return nil, fmt.Errorf("catalog: %s: %w", path, err)
	}
	for _, fr := range f.Relations {
		if s.rels[fr.Schema] == nil || len(fr.Kind) != 1 {
			return nil, fmt.Errorf("catalog: %s: relation %s.%s is malformed", path, fr.Schema, fr.Name)
		}
		r := &Relation{
			OID: fr.OID, Schema: fr.Schema, Name: fr.Name, Kind: RelKind(fr.Kind[0]),
			PrimaryKey: fr.PrimaryKey, PKName: fr.PKName, PKIndexOID: fr.PKIndexOID, Unique: fr.Unique,
			Checks: fr.Checks, ForeignKeys: fr.ForeignKeys,
			RowTypeOID: fr.RowTypeOID, ViewQuery: fr.ViewQuery, DependsOn: fr.DependsOn,
			AppendOnly: fr.AppendOnly, Watermark: fr.Watermark,
			Connector: fr.Connector, Options: fr.Options, Format: fr.Format, Encode: fr.Encode, Parallelism: fr.Parallelism, ParallelismDefault: fr.ParallelismDefault, SplitDistinct: fr.SplitDistinct,
			Owner: fr.Owner, ACL: fr.ACL, Seq: fr.Seq,
		}
		for _, fc := range fr.Columns {
			t, ok := s.typeByOID(fc.TypeOID) // a user type too (usertype.go)
			if !ok {
				return nil, fmt.Errorf("catalog: %s: column %s of %s has unknown type oid %d", path, fc.Name, fr.Name, fc.TypeOID)
			}
			t.Typmod = fc.Typmod
			if t.Kind == types.Array {
				e := *t.Elem
				e.Typmod = fc.ElemTypmod
				t.Elem = &e
			}
			col := Column{Name: fc.Name, Type: t, NotNull: fc.NotNull, Default: fc.Default, IdentityDefault: fc.IdentityDefault, Domain: fc.Domain, Generated: fc.Generated}
			if len(fc.Identity) == 1 {
				col.Identity = fc.Identity[0]
			}
			r.Columns = append(r.Columns, col)
		}
		s.add(r)
	}
	for _, fc := range f.Comments {
		s.comments[objKey{fc.OID, fc.Sub}] = fc.Text
	}
	for _, ff := range f.Functions {
		fn, err := fromFileFunction(ff)
		if err != nil {
			return nil, fmt.Errorf("catalog: %s: %w", path, err)
		}
		s.funcs[fn.OID] = fn
	}
	for _, fd := range f.Domains {
		d, err := fromFileDomain(s, fd)
		if err != nil {
			return nil, fmt.Errorf("catalog: %s: %w", path, err)
		}
		s.domains[d.OID] = d
	}
	return s, nil
}

// save writes s atomically: a temporary file, fsync, rename over the old
// file, fsync of the directory.
func (c *Catalog) save(s *snapshot) error {
	f := fileCatalog{Version: catalogVersion, NextOID: s.nextOID}
	for _, sc := range s.schemas {
		f.Schemas = append(f.Schemas, fileSchema{sc.OID, sc.Name})
	}
	sort.Slice(f.Schemas, func(i, j int) bool { return f.Schemas[i].OID < f.Schemas[j].OID })
	for _, r := range s.byOID {
		if r.Kind == KindSystem {
			continue
		}
		fr := fileRelation{
			OID: r.OID, Schema: r.Schema, Name: r.Name, Kind: string(rune(r.Kind)),
			PrimaryKey: r.PrimaryKey, PKName: r.PKName, PKIndexOID: r.PKIndexOID, Unique: r.Unique,
			Checks: r.Checks, ForeignKeys: r.ForeignKeys,
			RowTypeOID: r.RowTypeOID, ViewQuery: r.ViewQuery, DependsOn: r.DependsOn,
			AppendOnly: r.AppendOnly, Watermark: r.Watermark,
			Connector: r.Connector, Options: r.Options, Format: r.Format, Encode: r.Encode, Parallelism: r.Parallelism, ParallelismDefault: r.ParallelismDefault, SplitDistinct: r.SplitDistinct,
			Owner: r.Owner, ACL: r.ACL, Seq: r.Seq,
			Columns: make([]fileColumn, len(r.Columns)),
		}
		for i, col := range r.Columns {
			fc := fileColumn{Name: col.Name, TypeOID: col.Type.OID(), Typmod: col.Type.Typmod, NotNull: col.NotNull, Default: col.Default,
				IdentityDefault: col.IdentityDefault, Domain: col.Domain, Generated: col.Generated}
			if col.Identity != 0 {
				fc.Identity = string(rune(col.Identity))
			}
			if col.Type.Kind == types.Array {
				fc.ElemTypmod = col.Type.Elem.Typmod
			}
			fr.Columns[i] = fc
		}
		f.Relations = append(f.Relations, fr)
	}
	sort.Slice(f.Relations, func(i, j int) bool { return f.Relations[i].OID < f.Relations[j].OID })
	for k, text := range s.comments {
		f.Comments = append(f.Comments, fileComment{k.OID, k.Sub, text})
	}
	sort.Slice(f.Comments, func(i, j int) bool {
		if f.Comments[i].OID != f.Comments[j].OID {
			return f.Comments[i].OID < f.Comments[j].OID
		}
		return f.Comments[i].Sub < f.Comments[j].Sub
	})
	for _, fn := range s.funcs {
		f.Functions = append(f.Functions, toFileFunction(fn))
	}
	sort.Slice(f.Functions, func(i, j int) bool { return f.Functions[i].OID < f.Functions[j].OID })
	for _, d := range s.domains {
		f.Domains = append(f.Domains, toFileDomain(d))
	}
	sort.Slice(f.Domains, func(i, j int) bool { return f.Domains[i].OID < f.Domains[j].OID })
	f.Types = saveUserTypes(s) // usertype_file.go
	data, err := json.MarshalIndent(&f, "", " ")
	if err != nil {
		return fmt.Errorf("catalog: encode: %w", err)
	}
	return writeFileAtomic(filepath.Join(c.dir, catalogFile), data)
}

func writeFileAtomic(path string, data []byte) error { return writeFileAtomicMode(path, data, 0o644) }

// writeFileAtomicMode is writeFileAtomic with the file's permissions. A
// failure leaves the old file as it was and is 53100 (disk_full) when the
// disk is full, else 58030 (io_error).
func writeFileAtomicMode(path string, data []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	os.Remove(tmp) // a leftover would keep its old permissions
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return fileError(err, path)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fileError(err, path)
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return fileError(err, path)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fileError(err, path)
	}
	return nil
}

// fileError is the user-facing error of a failed write of the catalog file
// path.
func fileError(err error, path string) error {
	code := pgerr.IOError
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		code = pgerr.DiskFull
	}
	msg := err.Error()
	var pe *os.PathError
	if errors.As(err, &pe) {
		msg = pe.Err.Error()
	}
	e := pgerr.Wrap(err, code, "could not write the catalog file %s: %s", filepath.Base(path), msg).WithDetail("File %s.", path)
	if code == pgerr.DiskFull {
		e = e.WithHint("Free disk space. The statement changed nothing; it can be retried.")
	}
	return e
}
