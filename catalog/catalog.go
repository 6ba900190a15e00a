package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/storage"
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
	// KindSequence is a sequence (pg_class shows 'S'; 'S' is taken by KindSystem here).
	KindSequence RelKind = 'q'
	// KindSink is a sink (CREATE SINK): a running query whose output goes
	// to a connector. It has a name, an owner and dependencies like a
	// view, but no rows: pg_class and information_schema leave it out;
	// streamsql_sinks lists it.
	KindSink RelKind = 'k'
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
	// Unique lists the UNIQUE constraints in creation order. The planner
	// may leave a Name empty: CreateTable then picks PostgreSQL's default
	// ("t_a_b_key", made unique with a number) and assigns each IndexOID.
	Unique []UniqueKey
	// Checks are the table's CHECK constraints and ForeignKeys its
	// FOREIGN KEY constraints, in creation order (constraints.go).
	Checks      []CheckConstraint `json:",omitempty"`
	ForeignKeys []ForeignKey      `json:",omitempty"`
	// StorageParams are a table's PostgreSQL storage parameters
	// ("fillfactor=70"), pg_class.reloptions; accepted for compatibility,
	// they change nothing (planner/storage_params.go).
	StorageParams []string `json:",omitempty"`
	// ViewQuery is a view's defining SELECT, as text that Parse accepts.
	ViewQuery string
	// DependsOn lists the OIDs of the relations a view reads (set by the
	// catalog from CreateView's deps).
	DependsOn []uint32
	// PKIndexOID is the OID of the primary key's index (pg_index.indexrelid,
	// a pg_class row of relkind 'i' named PKName); 0 when there is no key.
	// Assigned by the catalog.
	PKIndexOID uint32
	// RowTypeOID is pg_class.reltype, the relation's composite type in
	// pg_type (0 for system relations). Assigned by the catalog.
	RowTypeOID uint32
	// AppendOnly marks a table created APPEND ONLY (UPDATE and DELETE are
	// refused) and is set for every source.
	AppendOnly bool `json:",omitempty"`
	// Watermark is the WATERMARK FOR clause of a table or source.
	Watermark *Watermark `json:",omitempty"`
	// Connector, Options and Format describe a source: the connector name
	// ("datagen", "nexmark", "file", ...), its other WITH options (keys in
	// lower case) and its FORMAT ("JSON", "CSV" or "").
	Connector string            `json:",omitempty"`
	Options   map[string]string `json:",omitempty"`
	Format    string            `json:",omitempty"`
	// Parallelism is the streaming_parallelism a materialized view or
	// sink was created with: its keyed operators run as that many
	// instances, also after a restart (0, catalogs written before it: 1).
	Parallelism int `json:",omitempty"`
	// ParallelismDefault marks a materialized view created without an
	// explicit streaming_parallelism (the server's default): it is planned
	// with the server's --streaming-parallelism at every start, so a
	// restart with another value rescales it (its keyed state is
	// redistributed by vnode, docs/contributing/parallel.md).
	ParallelismDefault bool `json:",omitempty"`
	// SplitDistinct is the streaming_split_distinct (on, off, auto) a
	// materialized view or sink was created with, planned with it again
	// at every start; "" (catalogs written before it): off, the plan
	// such a view was created with.
	SplitDistinct string `json:",omitempty"`
	// Encode is a sink's ENCODE (FORMAT UPSERT ENCODE JSON: "JSON").
	Encode string `json:",omitempty"`
	// Owner is the OID of the role that owns the relation (pg_class.relowner),
	// set by the creator; 0 (system relations, catalogs written before
	// owners were kept) means the bootstrap superuser (OwnerOID).
	Owner uint32 `json:",omitempty"`
	// ACL is pg_class.relacl; nil is the owner's default (acl.go).
	ACL []ACLItem `json:",omitempty"`
	// Seq holds a sequence's parameters (KindSequence only; sequence.go).
	Seq *SeqOptions `json:",omitempty"`
	// Rows produces a system table's current contents; nil for others.
	Rows func(ctx RowsContext) ([]arrow.RecordBatch, error) `json:"-"`
}

// Watermark is a WATERMARK FOR clause: Column's watermark is the largest
// value of Expr (SQL text over the relation's columns) seen so far.
type Watermark struct {
	Column  string
	Expr    string
	Options map[string]string `json:",omitempty"` // e.g. idle_timeout
}

// Column is one column of a relation.
type Column struct {
	Name    string
	Type    types.T
	NotNull bool
	// Default is the column default as SQL expression text ("" = none),
	// bound by the planner at INSERT time.
	Default string
	// Serial is set by the planner for a serial column ("smallint",
	// "integer" or "bigint"): CreateTable creates its owned sequence and
	// sets Default and NotNull. Never stored.
	Serial string `json:"-"`
	// SerialSpec holds the sequence options of an identity column
	// (GENERATED ... AS IDENTITY (options)). Never stored.
	SerialSpec *SeqSpec `json:"-"`
	// Identity is pg_attribute.attidentity: 'a' (GENERATED ALWAYS), 'd'
	// (BY DEFAULT) or 0. An identity column's value comes from
	// IdentityDefault (nextval of its owned sequence), which, unlike
	// Default, catalogs do not show as a column default.
	Identity        byte   `json:",omitempty"`
	IdentityDefault string `json:",omitempty"`
	// Domain is the OID of the column's domain (0: none); Type is then the
	// domain's base type (domain.go).
	Domain uint32 `json:",omitempty"`
	// Generated is the generation expression of a GENERATED ALWAYS AS
	// (expr) STORED column, as SQL text over the row's other columns (""
	// = not generated): every write computes it (planner.RowGen).
	Generated string
}

// RowsContext is what a system table needs to produce its rows.
type RowsContext struct {
	User       string
	Database   string
	SearchPath []string
	// Settings lists the session's run-time parameters for pg_settings; nil
	// means the built-in list, valued through Setting.
	Settings func() []Setting
	// Setting returns the session's value of a run-time parameter (as
	// expr.SessionInfo.Setting does); nil means boot values.
	Setting func(name string) (string, bool)
}

// Setting is one row of pg_settings (the columns psql and drivers read).
type Setting struct {
	Name      string
	Setting   string
	Unit      string // "" = NULL
	Category  string
	ShortDesc string
	Context   string // "user", "superuser", "internal", ...
	VarType   string // "bool", "integer", "real", "string", "enum"
	Source    string // "default", "session", "client", ...
	BootVal   string
	ResetVal  string
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

// Schema is a namespace (pg_namespace row).
type Schema struct {
	OID  uint32
	Name string
}

// Fixed OIDs of the built-in schemas (PostgreSQL 15's values).
const (
	PgCatalogOID         uint32 = 11
	PublicOID            uint32 = 2200
	InformationSchemaOID uint32 = 13207
	// FirstUserOID is the first OID the catalog assigns (PostgreSQL's FirstNormalObjectId).
	FirstUserOID uint32 = 16384
	// SuperuserOID is the OID of the single role (pg_roles.oid, relowner, nspowner).
	SuperuserOID uint32 = 10
	// DatabaseOwnerOID is the pg_database_owner role, owner of schema public.
	DatabaseOwnerOID uint32 = 6171
)

// tableStore is the part of *storage.Store the catalog uses (a fake in tests).
type tableStore interface {
	CreateTable(def storage.TableDef) (*storage.Table, error)
	DropTable(oid uint32) error
	ReserveDrop(oid uint32) (cancel func(), err error)
	Table(oid uint32) *storage.Table
	Tables() []uint32
}

// Catalog is the set of schemas and relations. Safe for concurrent use:
// readers load the current immutable snapshot without locking; DDL methods
// serialize on mu, persist a new snapshot and publish it.
type Catalog struct {
	dir   string
	store tableStore

	mu  sync.Mutex // serializes DDL (and the file writes)
	cur atomic.Pointer[snapshot]

	// system holds the pg_catalog and information_schema relations, built once
	// in Open (their Rows read c.cur).
	system []*Relation

	// streamStatus reports the running state of materialized views for
	// streamsql_views (set by the engine, see SetStreamStatus).
	streamStatus atomic.Pointer[func(oid uint32) (StreamStatus, bool)]
	// checkpointStatus reports the runtime's checkpoints for
	// streamsql_checkpoints (set by the engine, see SetCheckpointStatus).
	checkpointStatus atomic.Pointer[func() (CheckpointStatus, bool)]
	// sourceStatus reports the source readers for streamsql_sources
	// (set by the engine, see SetSourceStatus).
	sourceStatus atomic.Pointer[func() []SourceStatus]
	// sinkStatus reports the sinks' writers for streamsql_sinks (set by
	// the engine, see SetSinkStatus).
	sinkStatus atomic.Pointer[func(oid uint32) (SinkStatus, bool)]
	activity   atomic.Pointer[func() []ActivityRow] // pg_stat_activity (sys_activity.go)
	// nodeStatus lists the cluster's nodes for streamsql_nodes (set by
	// the engine of a cluster node, see SetNodeStatus).
	nodeStatus atomic.Pointer[func() ([]NodeStatus, error)]
	// operatorStatus feeds streamsql_operators (sys_operators.go).
	operatorStatus atomic.Pointer[func() []OperatorStatus]
	// jobStatus feeds streamsql_jobs (sys_jobs.go).
	jobStatus atomic.Pointer[func() []JobStatus]
	// subStatus feeds streamsql_subscriptions (sys_jobs.go).
	subStatus atomic.Pointer[func() []SubscriptionStatus]

	// roles holds the stored roles (users.go); changed under mu.
	roles atomic.Pointer[roleSet]

	// seqs holds the sequences' current values (sequence.go).
	seqs seqStates
}

// snapshot is one immutable version of the catalog. DDL copies it, changes
// the copy and publishes the copy; nothing in a published snapshot changes.
type snapshot struct {
	schemas  map[string]*Schema              // by name
	rels     map[string]map[string]*Relation // schema name -> relation name -> relation
	byOID    map[uint32]*Relation            // every relation, system ones included
	indexes  map[uint32]*Relation            // key index OID (primary or unique) -> its table
	comments map[objKey]string
	funcs    map[uint32]*Function // SQL-language functions by OID (function.go)
	domains  map[uint32]*Domain   // domains by OID (domain.go)
	utypes   map[uint32]*UserType // enums and composite types by OID (usertype.go)
	nextOID  uint32
	// fks indexes the foreign keys by referenced table once the snapshot
	// is published (constraints.go); set by clone and emptySnapshot (nil:
	// Referencing scans).
	fks *fkIndex
}

// objKey identifies a commented object: a relation or schema OID, and a
// column number (0 for the object itself).
type objKey struct {
	OID uint32
	Sub int32
}

func (s *snapshot) clone() *snapshot {
	n := &snapshot{
		schemas:  make(map[string]*Schema, len(s.schemas)),
		rels:     make(map[string]map[string]*Relation, len(s.rels)),
		byOID:    make(map[uint32]*Relation, len(s.byOID)),
		indexes:  make(map[uint32]*Relation, len(s.indexes)),
		comments: make(map[objKey]string, len(s.comments)),
		funcs:    make(map[uint32]*Function, len(s.funcs)),
		domains:  make(map[uint32]*Domain, len(s.domains)),
		utypes:   make(map[uint32]*UserType, len(s.utypes)),
		nextOID:  s.nextOID,
		fks:      &fkIndex{},
	}
	for k, v := range s.utypes {
		n.utypes[k] = v
	}
	for k, v := range s.domains {
		n.domains[k] = v
	}
	for k, v := range s.funcs {
		n.funcs[k] = v
	}
	for k, v := range s.schemas {
		n.schemas[k] = v
	}
	for k, m := range s.rels {
		c := make(map[string]*Relation, len(m))
		for name, r := range m {
			c[name] = r
		}
		n.rels[k] = c
	}
	for k, v := range s.byOID {
		n.byOID[k] = v
	}
	for k, v := range s.indexes {
		n.indexes[k] = v
	}
	for k, v := range s.comments {
		n.comments[k] = v
	}
	return n
}

// add puts r into the snapshot (the schema map must exist).
func (s *snapshot) add(r *Relation) {
	s.rels[r.Schema][r.Name] = r
	s.byOID[r.OID] = r
	for _, k := range r.keyIndexes() {
		s.indexes[k.oid] = r
	}
}

// remove takes r out of the snapshot, with its comments.
func (s *snapshot) remove(r *Relation) {
	delete(s.rels[r.Schema], r.Name)
	delete(s.byOID, r.OID)
	for _, k := range r.keyIndexes() {
		delete(s.indexes, k.oid)
	}
	for k := range s.comments {
		if _, isIndex := r.keyIndex(k.OID); k.OID == r.OID || isIndex {
			delete(s.comments, k)
		}
	}
}

// AdvanceOID makes oid the next user OID when the catalog would hand out
// a lower one (never lowers it). A cluster node replaying the
// coordinator's statement log calls it with the OID the coordinator gave
// the statement's relation, so that OIDs the coordinator used for a
// statement it refused afterwards (created, then dropped, never logged)
// are skipped here too.
func (c *Catalog) AdvanceOID(oid uint32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.snap()
	if s.nextOID >= oid {
		return nil
	}
	ns := s.clone()
	ns.nextOID = oid
	return c.commit(ns)
}

// allocOID hands out the next user OID.
func (s *snapshot) allocOID() uint32 {
	o := s.nextOID
	s.nextOID++
	return o
}

// Open loads the catalog from dataDir (creating an empty one when there is
// none) and reconciles it with the tables in store: a stored table the
// catalog does not know (left by a crash between the two writes of a CREATE
// or DROP) is dropped; a catalog table without stored data is an error.
func Open(dataDir string, store *storage.Store) (*Catalog, error) {
	if store == nil {
		return nil, fmt.Errorf("catalog: open %s: nil store", dataDir)
	}
	return open(dataDir, store)
}

func open(dataDir string, store tableStore) (*Catalog, error) {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	c := &Catalog{dir: dataDir, store: store}
	snap, err := load(dataDir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dataDir, catalogFile)); os.IsNotExist(err) {
		// A new catalog is written before any table can exist, so stored
		// tables without a catalog file mean the file was lost: refuse to
		// treat them as orphans and drop them.
		if n := len(store.Tables()); n > 0 {
			return nil, fmt.Errorf("catalog: %s is missing but storage holds %d tables; refusing to start (restore the file or remove the tables)",
				filepath.Join(dataDir, catalogFile), n)
		}
		if err := c.save(snap); err != nil {
			return nil, err
		}
	}
	if c.dropTempSchemas(snap) { // temp.go: a previous run's sessions are gone
		if err := c.save(snap); err != nil {
			return nil, err
		}
	}
	if err := c.loadRoles(); err != nil {
		return nil, err
	}
	c.system = systemRelations(c)
	for _, r := range c.system {
		snap.byOID[r.OID] = r
		snap.rels[r.Schema][r.Name] = r
	}
	if err := c.reconcile(snap); err != nil {
		return nil, err
	}
	c.cur.Store(snap)
	return c, nil
}

// reconcile checks the catalog's tables against the store (see Open).
func (c *Catalog) reconcile(s *snapshot) error {
	for _, r := range s.byOID {
		if r.Kind == KindTable && c.store.Table(r.OID) == nil {
			return fmt.Errorf("catalog: table %s.%s (oid %d) is in %s but its data is missing from storage",
				r.Schema, r.Name, r.OID, filepath.Join(c.dir, catalogFile))
		}
	}
	for _, oid := range c.store.Tables() {
		if r := s.byOID[oid]; r == nil || r.Kind != KindTable {
			if err := c.store.DropTable(oid); err != nil {
				return fmt.Errorf("catalog: dropping orphaned stored table %d: %w", oid, err)
			}
		}
	}
	return nil
}

func (c *Catalog) snap() *snapshot { return c.cur.Load() }

// Table returns the stored data of a table relation (nil for others).
func (c *Catalog) Table(oid uint32) *storage.Table {
	r := c.snap().byOID[oid]
	if r == nil || r.Kind != KindTable {
		return nil
	}
	return c.store.Table(oid)
}

// Relation returns a relation (user or system) by OID, or nil.
func (c *Catalog) Relation(oid uint32) *Relation { return c.snap().byOID[oid] }

// Relations returns the user relations (no system ones), ordered by schema
// then name, for SHOW TABLES and the like.
func (c *Catalog) Relations() []*Relation {
	s := c.snap()
	out := make([]*Relation, 0, len(s.byOID))
	for _, r := range s.byOID {
		if r.Kind != KindSystem {
			out = append(out, r)
		}
	}
	sortRelations(out)
	return out
}

// Schemas returns every schema (built-in ones included), ordered by name.
func (c *Catalog) Schemas() []*Schema {
	s := c.snap()
	out := make([]*Schema, 0, len(s.schemas))
	for _, sc := range s.schemas {
		out = append(out, sc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func sortRelations(rs []*Relation) {
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].Schema != rs[j].Schema {
			return rs[i].Schema < rs[j].Schema
		}
		return rs[i].Name < rs[j].Name
	})
}

// Close releases the catalog. Every DDL is already durable when it returns,
// so there is nothing to flush; the store is closed by its owner.
func (c *Catalog) Close() error { return nil }
