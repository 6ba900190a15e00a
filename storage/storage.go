package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// Store owns every table's data in a data directory. Safe for concurrent use.
type Store struct {
	dir    string   // holds <oid>.log per table
	lock   *os.File // holds dir/LOCK while open
	commit *committer

	mu     sync.Mutex
	tables map[uint32]*Table
	closed bool

	bg sync.WaitGroup // background compactions

	opts Options // as given to OpenWith; read-only
}

// Snapshot is an immutable view of a table's rows at one moment; later writes
// never change it. Readers must not modify it (the chunks are shared).
type Snapshot struct {
	Chunks []Chunk
}

// Chunk is a run of rows with consecutive row ids.
type Chunk struct {
	// Rec holds the table's columns in table order (Arrow storage per types/arrow.go).
	Rec arrow.RecordBatch
	// FirstRowID is the row id of Rec's row 0; row i has id FirstRowID+i.
	FirstRowID int64
	// Deleted marks deleted rows (bit i set = row i deleted), LSB-first as in
	// Arrow validity bitmaps; nil when no row of the chunk is deleted.
	Deleted []byte
}

// TableDef is what storage needs to know about a table.
type TableDef struct {
	OID     uint32
	Columns []types.Column
	NotNull []bool
	// PrimaryKey lists column indexes; inserts and updates that duplicate a key
	// fail with 23505, and PK columns are NOT NULL (23502).
	PrimaryKey []int
	PKName     string // constraint name for the error message ("t_pkey")
	// Unique lists the UNIQUE constraints, checked after the primary key in
	// this order. A row with a NULL in any of a key's columns never
	// conflicts (PostgreSQL's default NULLS DISTINCT).
	Unique    []UniqueKey `json:",omitempty"`
	TableName string      // for error messages
}

// UniqueKey is one UNIQUE constraint: its name ("t_x_key", for 23505
// errors and ON CONFLICT ON CONSTRAINT) and column indexes in key order.
type UniqueKey struct {
	Name    string
	Columns []int
}

// Open opens (creating if needed) the store in dir and recovers every table
// from its log, dir/<oid>.log (the engine passes <datadir>/tables). A
// damaged log fails it with a *DamagedError (damage.go).
func Open(dir string) (*Store, error) { return OpenWith(dir, Options{}) }

// OpenWith is Open with options.
func OpenWith(dir string, opts Options) (*Store, error) {
	if opts.DamagedDir == "" {
		opts.DamagedDir = filepath.Join(filepath.Dir(filepath.Clean(dir)), "damaged")
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	tdir := dir
	if _, err := os.Stat(tdir); os.IsNotExist(err) {
		if err := os.MkdirAll(tdir, 0o755); err != nil {
			return nil, fmt.Errorf("storage: %w", err)
		}
		if err := syncDir(filepath.Dir(tdir)); err != nil { // the new directory's entry
			return nil, err
		}
	}
	lock, err := lockDir(tdir)
	if err != nil {
		return nil, err
	}
	s := &Store{dir: tdir, lock: lock, tables: make(map[uint32]*Table), opts: opts}
	ents, err := os.ReadDir(tdir)
	if err != nil {
		s.closeFiles()
		return nil, fmt.Errorf("storage: %w", err)
	}
	var damaged []error
	for _, e := range ents {
		name := e.Name()
		if strings.HasSuffix(name, ".tmp") { // an unfinished compaction
			if err := os.Remove(filepath.Join(tdir, name)); err != nil {
				s.closeFiles()
				return nil, fmt.Errorf("storage: %w", err)
			}
			continue
		}
		base, ok := strings.CutSuffix(name, ".log")
		if !ok {
			continue
		}
		oid, err := strconv.ParseUint(base, 10, 32)
		if err != nil {
			continue
		}
		t, err := recoverTable(s, uint32(oid), filepath.Join(tdir, name))
		var d *DamagedError
		if errors.As(err, &d) { // go on, to report every damaged log at once
			damaged = append(damaged, err)
			continue
		}
		if err != nil {
			s.closeFiles()
			return nil, err
		}
		if t != nil {
			s.tables[uint32(oid)] = t
		}
	}
	if len(damaged) > 0 {
		s.closeFiles()
		return nil, errors.Join(damaged...)
	}
	if err := syncDir(tdir); err != nil {
		s.closeFiles()
		return nil, err
	}
	s.commit = newCommitter()
	return s, nil
}

// Close waits for background work, commits what is pending and closes all
// logs. Later calls on the store or its tables fail.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.bg.Wait()
	s.commit.close()
	s.endFeeds()
	return s.closeFiles()
}

// endFeeds ends every table's change feeds once the store closed.
func (s *Store) endFeeds() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.tables {
		t.mu.Lock()
		t.endFeeds(fmt.Errorf("%w: the store was closed", ErrFeedEnded))
		t.mu.Unlock()
	}
}

func (s *Store) closeFiles() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, t := range s.tables {
		if t.log != nil && t.log.f != nil {
			errs = append(errs, t.log.f.Close())
			t.log.f = nil
		}
	}
	if s.lock != nil {
		errs = append(errs, s.lock.Close())
		s.lock = nil
	}
	return errors.Join(errs...)
}

func (s *Store) logPath(oid uint32) string {
	return filepath.Join(s.dir, strconv.FormatUint(uint64(oid), 10)+".log")
}

// CreateTable creates an empty table; durable when it returns (the log file
// with its header record is fsynced, then the directory).
func (s *Store) CreateTable(def TableDef) (*Table, error) {
	if err := checkDef(def); err != nil {
		return nil, err
	}
	def = cloneDef(def)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	if s.tables[def.OID] != nil {
		return nil, fmt.Errorf("storage: table %d already exists", def.OID)
	}
	path := s.logPath(def.OID)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, ioError(err, "could not create the log of new table %q: %s", def.TableName, errnoText(err)).WithDetail("File %s.", path)
	}
	hdr := encodeHeader(headerDef{Def: def, Format: logFormat}, 0)
	markAt := int64(len(hdr))
	hdr = append(hdr, encodeMarkBlock(retainMarks{})...)
	fail := func(what string, err error) (*Table, error) {
		f.Close()
		os.Remove(path) // Open ignores a log without a whole header anyway
		return nil, ioError(err, "could not %s the log of new table %q: %s", what, def.TableName, errnoText(err)).
			WithDetail("File %s.", path)
	}
	if _, err := f.Write(hdr); err != nil {
		return fail("write", err)
	}
	if err := f.Sync(); err != nil {
		return fail("fsync", err)
	}
	if err := syncDir(s.dir); err != nil {
		return fail("fsync the directory of", err)
	}
	t := newTable(s, def, &state{}, &logFile{f: f, path: path, markAt: markAt})
	t.log.size.Store(int64(len(hdr)))
	t.resetCompactionCheck()
	s.tables[def.OID] = t
	return t, nil
}

// DropTable removes a table and its log file, durably. Pending writes to the
// table finish first; later writes through an old *Table fail. Dropping a
// table that does not exist does nothing.
func (s *Store) DropTable(oid uint32) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errClosed
	}
	t := s.tables[oid]
	if t == nil {
		s.mu.Unlock()
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.owner != nil {
		s.mu.Unlock()
		return t.errLocked("drop")
	}
	delete(s.tables, oid)
	s.mu.Unlock()
	t.dropped = true
	if err := t.drain(); err != nil {
		return err
	}
	t.endFeeds(fmt.Errorf("%w: table %q was dropped", ErrFeedEnded, t.def.TableName))
	if err := t.log.f.Close(); err != nil {
		return fmt.Errorf("storage: close %s: %w", t.log.path, err)
	}
	t.log.f = nil
	if err := os.Remove(t.log.path); err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	return syncDir(s.dir)
}

// ReserveDrop prepares DropTable of a table: it fails with 55006 when an
// open transaction has written the table, and otherwise makes every later
// write to it fail (as after DropTable) until cancel is called. The caller
// then removes the table from its catalog and calls DropTable, or cancel
// when that failed. A table that does not exist reserves nothing.
func (s *Store) ReserveDrop(oid uint32) (cancel func(), err error) {
	t := s.Table(oid)
	if t == nil {
		return func() {}, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.owner != nil {
		return nil, t.errLocked("drop")
	}
	if t.dropped {
		return func() {}, nil
	}
	t.dropped = true
	return func() {
		live := s.Table(oid) == t // not dropped since (s.mu before t.mu)
		t.mu.Lock()
		if live {
			t.dropped = false
		}
		t.mu.Unlock()
	}, nil
}

// Table returns a table by OID, or nil.
func (s *Store) Table(oid uint32) *Table {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tables[oid]
}

// Tables returns the OIDs of every table, ascending: after Open, the tables
// recovered from disk, so that the catalog can reconcile (a table whose OID
// the catalog does not know is left over from a crash and may be dropped).
func (s *Store) Tables() []uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	oids := make([]uint32, 0, len(s.tables))
	for oid := range s.tables {
		oids = append(oids, oid)
	}
	slices.Sort(oids)
	return oids
}

// Stats reports group commit counters since Open.
func (s *Store) Stats() CommitStats {
	return CommitStats{
		Commits: s.commit.commits.Load(),
		Groups:  s.commit.groups.Load(),
		Fsyncs:  s.commit.fsyncs.Load(),
	}
}

// syncDir fsyncs a directory so that file creations, renames and removals
// in it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("storage: fsync %s: %w", dir, err)
	}
	return nil
}

// checkDef reports a malformed TableDef.
func checkDef(def TableDef) error {
	if len(def.NotNull) != 0 && len(def.NotNull) != len(def.Columns) {
		return fmt.Errorf("storage: table %d: %d not-null flags for %d columns", def.OID, len(def.NotNull), len(def.Columns))
	}
	for _, c := range def.PrimaryKey {
		if c < 0 || c >= len(def.Columns) {
			return fmt.Errorf("storage: table %d: primary key column %d out of range", def.OID, c)
		}
	}
	for _, u := range def.Unique {
		if len(u.Columns) == 0 {
			return fmt.Errorf("storage: table %d: unique key %q without columns", def.OID, u.Name)
		}
		for _, c := range u.Columns {
			if c < 0 || c >= len(def.Columns) {
				return fmt.Errorf("storage: table %d: unique key column %d out of range", def.OID, c)
			}
		}
	}
	return nil
}

func cloneDef(def TableDef) TableDef {
	def.Columns = slices.Clone(def.Columns)
	def.NotNull = slices.Clone(def.NotNull)
	def.PrimaryKey = slices.Clone(def.PrimaryKey)
	if def.Unique != nil {
		u := make([]UniqueKey, len(def.Unique))
		for i, k := range def.Unique {
			u[i] = UniqueKey{Name: k.Name, Columns: slices.Clone(k.Columns)}
		}
		def.Unique = u
	}
	if def.NotNull == nil {
		def.NotNull = make([]bool, len(def.Columns))
	}
	return def
}
