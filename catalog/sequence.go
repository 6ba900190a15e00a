package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/streamsql/streamsql/pgerr"
)

// Sequences. A sequence is a relation (KindSequence) whose parameters
// (SeqOptions) live in the catalog file and whose current value lives in a
// small file of its own, sequences/<oid>.json, written with fsync and
// rename. As in PostgreSQL, values are non-transactional (a rolled-back
// nextval is not given back) and logged ahead: before nextval hands out a
// value beyond the last logged one, the file records a value seqLogAhead
// increments further, and a restart continues after the logged value.
// Values between the last one returned and the logged one are skipped after
// a crash or restart, never returned twice.
//
// Concurrency: each sequence's state has its own mutex; nextval of one
// sequence is serialized (one fsync per seqLogAhead values), different
// sequences proceed in parallel.

// seqLogAhead is how many values a log write reserves (PostgreSQL's SEQ_LOG_VALS).
const seqLogAhead = 32

// seqDir is the directory of the sequences' value files in the data directory.
const seqDir = "sequences"

// SeqOptions are a sequence's parameters (pg_sequence).
type SeqOptions struct {
	Type      string `json:"type"` // "smallint", "integer" or "bigint"
	Start     int64  `json:"start"`
	Increment int64  `json:"increment"`
	Min       int64  `json:"min"`
	Max       int64  `json:"max"`
	Cache     int64  `json:"cache"`
	Cycle     bool   `json:"cycle,omitempty"`
	// OwnedBy is the table and column (1-based) that owns the sequence
	// (serial columns): dropping the table drops the sequence.
	OwnedBy    uint32 `json:"owned_by,omitempty"`
	OwnedByCol int16  `json:"owned_by_col,omitempty"`
}

// SeqSpec is what CREATE or ALTER SEQUENCE says; nil fields were not given.
// NoMin and NoMax are NO MINVALUE / NO MAXVALUE.
type SeqSpec struct {
	Type                       string
	Start, Increment, Min, Max *int64
	Cache                      *int64
	Cycle                      *bool
	NoMin, NoMax               bool
	Restart                    bool   // RESTART given
	RestartWith                *int64 // RESTART WITH n
	// OwnedBy is OWNED BY's name list ([table..., column], or ["none"]);
	// nil when not given. The engine resolves it (ApplySeqSpec leaves it).
	OwnedBy []string
}

// Params reports whether spec changes a parameter (anything but OWNED BY):
// such an ALTER SEQUENCE drops the sessions' preallocated values.
func (spec SeqSpec) Params() bool {
	return spec.Type != "" || spec.Start != nil || spec.Increment != nil || spec.Min != nil || spec.Max != nil ||
		spec.Cache != nil || spec.Cycle != nil || spec.NoMin || spec.NoMax || spec.Restart
}

func typeBounds(t string) (int64, int64) {
	switch t {
	case "smallint":
		return math.MinInt16, math.MaxInt16
	case "integer":
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

func seqParamErr(format string, args ...any) error {
	return pgerr.New(pgerr.InvalidParameterValue, format, args...)
}

// ApplySeqSpec returns old (nil for CREATE) changed by spec, checked as
// PostgreSQL checks it (22023 messages of init_params).
func ApplySeqSpec(old *SeqOptions, spec SeqSpec) (*SeqOptions, error) {
	o := SeqOptions{Type: "bigint", Increment: 1, Cache: 1}
	create := old == nil
	if old != nil {
		o = *old
	}
	oldLo, oldHi := typeBounds(o.Type)
	if spec.Type != "" {
		o.Type = spec.Type
	}
	lo, hi := typeBounds(o.Type)
	if spec.Increment != nil {
		if *spec.Increment == 0 {
			return nil, seqParamErr("INCREMENT must not be zero")
		}
		o.Increment = *spec.Increment
	}
	switch {
	case spec.Max != nil:
		o.Max = *spec.Max
	case create || spec.NoMax || (spec.Type != "" && o.Max == oldHi):
		if o.Increment > 0 {
			o.Max = hi
		} else {
			o.Max = -1
		}
	}
	switch {
	case spec.Min != nil:
		o.Min = *spec.Min
	case create || spec.NoMin || (spec.Type != "" && o.Min == oldLo):
		if o.Increment > 0 {
			o.Min = 1
		} else {
			o.Min = lo
		}
	}
	if o.Max < lo || o.Max > hi {
		return nil, seqParamErr("MAXVALUE (%d) is out of range for sequence data type %s", o.Max, o.Type)
	}
	if o.Min < lo || o.Min > hi {
		return nil, seqParamErr("MINVALUE (%d) is out of range for sequence data type %s", o.Min, o.Type)
	}
	if o.Min >= o.Max {
		return nil, seqParamErr("MINVALUE (%d) must be less than MAXVALUE (%d)", o.Min, o.Max)
	}
	if spec.Start != nil {
		o.Start = *spec.Start
	} else if create {
		if o.Increment > 0 {
			o.Start = o.Min
		} else {
			o.Start = o.Max
		}
	}
	if o.Start < o.Min {
		return nil, seqParamErr("START value (%d) cannot be less than MINVALUE (%d)", o.Start, o.Min)
	}
	if o.Start > o.Max {
		return nil, seqParamErr("START value (%d) cannot be greater than MAXVALUE (%d)", o.Start, o.Max)
	}
	if spec.RestartWith != nil {
		if r := *spec.RestartWith; r < o.Min {
			return nil, seqParamErr("RESTART value (%d) cannot be less than MINVALUE (%d)", r, o.Min)
		} else if r > o.Max {
			return nil, seqParamErr("RESTART value (%d) cannot be greater than MAXVALUE (%d)", r, o.Max)
		}
	}
	if spec.Cache != nil {
		if *spec.Cache <= 0 {
			return nil, seqParamErr("CACHE (%d) must be greater than zero", *spec.Cache)
		}
		o.Cache = *spec.Cache
	}
	if spec.Cycle != nil {
		o.Cycle = *spec.Cycle
	}
	return &o, nil
}

// seqStates holds the loaded sequence values by OID.
type seqStates struct {
	mu sync.Mutex
	m  map[uint32]*seqState
}

// seqState is one sequence's shared value. last is the last value handed
// out to a session (the end of its cache block), or the next one when
// !called; logged is the value the file records, and loggedOK says whether
// values up to it may be handed out without a write. gen counts the ALTER
// SEQUENCEs that changed a parameter: sessions' caches of an older gen are
// dropped (PostgreSQL's new relfilenode).
type seqState struct {
	mu       sync.Mutex
	last     int64
	called   bool
	logged   int64
	loggedOK bool
	gen      uint64
}

// SeqLocal is one session's state of one sequence (PostgreSQL's
// SeqTableData): Last is currval when LastValid, and the values after Last
// up to Cached, Inc apart, are the session's preallocated ones (none when
// Last == Cached). The zero value is a session that has not used the
// sequence. Owned by its session, which serializes the calls using it.
type SeqLocal struct {
	Last      int64
	LastValid bool
	Cached    int64
	Inc       int64
	Gen       uint64
}

type seqFile struct {
	Last   int64 `json:"last"`
	Called bool  `json:"called"`
}

func (c *Catalog) seqPath(oid uint32) string {
	return filepath.Join(c.dir, seqDir, strconv.FormatUint(uint64(oid), 10)+".json")
}

// state returns the value of sequence oid, loading its file on first use.
func (c *Catalog) seqState(r *Relation) (*seqState, error) {
	c.seqs.mu.Lock()
	defer c.seqs.mu.Unlock()
	if st := c.seqs.m[r.OID]; st != nil {
		return st, nil
	}
	st := &seqState{last: r.Seq.Start}
	data, err := os.ReadFile(c.seqPath(r.OID))
	switch {
	case err == nil:
		var f seqFile
		if err := json.Unmarshal(data, &f); err != nil {
			return nil, fmt.Errorf("catalog: sequence %s: %s is corrupt: %w", r.Name, c.seqPath(r.OID), err)
		}
		st.last, st.called = f.Last, f.Called
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("catalog: sequence %s: %w", r.Name, err)
	}
	if c.seqs.m == nil {
		c.seqs.m = map[uint32]*seqState{}
	}
	c.seqs.m[r.OID] = st
	return st, nil
}

// writeSeq records (last, called) durably.
func (c *Catalog) writeSeq(oid uint32, last int64, called bool) error {
	if err := os.MkdirAll(filepath.Join(c.dir, seqDir), 0o755); err != nil {
		return fileError(err, filepath.Join(c.dir, seqDir))
	}
	data, _ := json.Marshal(seqFile{Last: last, Called: called})
	return writeFileAtomic(c.seqPath(oid), data)
}

// dropSeqState forgets a dropped sequence's value and removes its file.
func (c *Catalog) dropSeqState(oid uint32) {
	c.seqs.mu.Lock()
	delete(c.seqs.m, oid)
	c.seqs.mu.Unlock()
	_ = os.Remove(c.seqPath(oid))
}

// sequence returns the sequence of OID oid or 42809 `"t" is not a sequence`.
func (c *Catalog) sequence(oid uint32) (*Relation, error) {
	r := c.snap().byOID[oid]
	if r == nil {
		return nil, pgerr.New(pgerr.UndefinedTable, "could not open relation with OID %d", oid)
	}
	if r.Kind != KindSequence || r.Seq == nil {
		return nil, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a sequence", r.Name)
	}
	return r, nil
}

// lockedSeq returns sequence oid's state locked, with its parameters read
// under the lock (an ALTER SEQUENCE publishes new ones holding it), and
// l's cache dropped when an ALTER made it stale. The caller unlocks.
func (c *Catalog) lockedSeq(oid uint32, l *SeqLocal) (*Relation, *seqState, error) {
	r, err := c.sequence(oid)
	if err != nil {
		return nil, nil, err
	}
	st, err := c.seqState(r)
	if err != nil {
		return nil, nil, err
	}
	st.mu.Lock()
	if r, err = c.sequence(oid); err != nil {
		st.mu.Unlock()
		return nil, nil, err
	}
	if l.Gen != st.gen {
		l.Cached, l.Gen = l.Last, st.gen
	}
	return r, st, nil
}

// NextVal advances sequence oid for the session whose state of it is l
// (nextval): from l's preallocated values while it has some, else by
// taking the next CACHE values from the sequence (fewer where a bound or a
// cycle comes first), of which it returns the first and keeps the rest in
// l. Values are logged durably before they are handed out.
func (c *Catalog) NextVal(oid uint32, l *SeqLocal) (int64, error) {
	r, st, err := c.lockedSeq(oid, l)
	if err != nil {
		return 0, err
	}
	defer st.mu.Unlock()
	if l.LastValid && l.Last != l.Cached {
		l.Last += l.Inc
		return l.Last, nil
	}
	o := r.Seq
	cache := o.Cache
	if cache < 1 {
		cache = 1
	}
	var first, last int64
	n := int64(0)
	next := st.last
	if !st.called {
		if next < o.Min || next > o.Max { // ALTER narrowed the range
			return 0, seqLimitErr(r)
		}
		first, last, n = next, next, 1
	}
	for n < cache {
		v, ok := addInRange(next, o.Increment, o.Min, o.Max)
		if !ok {
			if n > 0 { // a block never wraps: the next fetch does
				break
			}
			if !o.Cycle {
				return 0, seqLimitErr(r)
			}
			v = o.Max
			if o.Increment > 0 {
				v = o.Min
			}
			st.loggedOK = false // the logged value is behind us now
		}
		next, last = v, v
		if n == 0 {
			first = v
		}
		n++
	}
	if !st.loggedOK || (o.Increment > 0 && last > st.logged) || (o.Increment < 0 && last < st.logged) {
		ahead := last
		for i := 0; i < seqLogAhead; i++ {
			v, ok := addInRange(ahead, o.Increment, o.Min, o.Max)
			if !ok {
				break
			}
			ahead = v
		}
		if err := c.writeSeq(oid, ahead, true); err != nil {
			return 0, err
		}
		st.logged, st.loggedOK = ahead, true
	}
	st.last, st.called = last, true
	*l = SeqLocal{Last: first, LastValid: true, Cached: last, Inc: o.Increment, Gen: st.gen}
	return first, nil
}

// seqLimitErr is 2200H for a sequence at its bound without CYCLE.
func seqLimitErr(r *Relation) error {
	if r.Seq.Increment > 0 {
		return pgerr.New(pgerr.SequenceGeneratorLimitExceeded, "nextval: reached maximum value of sequence \"%s\" (%d)", r.Name, r.Seq.Max)
	}
	return pgerr.New(pgerr.SequenceGeneratorLimitExceeded, "nextval: reached minimum value of sequence \"%s\" (%d)", r.Name, r.Seq.Min)
}

// addInRange returns v+inc when it does not overflow and lies in [lo, hi].
func addInRange(v, inc, lo, hi int64) (int64, bool) {
	if inc > 0 && v > hi-inc || inc < 0 && v < lo-inc {
		return 0, false
	}
	n := v + inc
	return n, n >= lo && n <= hi
}

// SetVal sets sequence oid's value (setval) for the session whose state
// of it is l: the next nextval returns v+increment when called, else v.
// The session's preallocated values are dropped (other sessions keep
// theirs) and, when called, v becomes its currval. 22003 when v is outside
// [min, max].
func (c *Catalog) SetVal(oid uint32, v int64, called bool, l *SeqLocal) error {
	r, st, err := c.lockedSeq(oid, l)
	if err != nil {
		return err
	}
	defer st.mu.Unlock()
	if v < r.Seq.Min || v > r.Seq.Max {
		return pgerr.New(pgerr.NumericValueOutOfRange, "setval: value %d is out of bounds for sequence \"%s\" (%d..%d)", v, r.Name, r.Seq.Min, r.Seq.Max)
	}
	if err := c.writeSeq(oid, v, called); err != nil {
		return err
	}
	st.last, st.called, st.loggedOK = v, called, false
	if called {
		l.Last, l.LastValid = v, true
	}
	l.Cached = l.Last
	return nil
}

// SeqDurable is what a restart would continue sequence oid from: its
// last logged value (ahead of every value handed out) and whether it was
// called, else its start, not called. A cluster's checkpoint keeps it
// (engine/cluster_tables.go).
func (c *Catalog) SeqDurable(oid uint32) (last int64, called bool, err error) {
	r, st, err := c.lockedSeq(oid, &SeqLocal{})
	if err != nil {
		return 0, false, err
	}
	defer st.mu.Unlock()
	data, err := os.ReadFile(c.seqPath(oid))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return r.Seq.Start, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("catalog: sequence %s: %w", r.Name, err)
	}
	var f seqFile
	if err := json.Unmarshal(data, &f); err != nil {
		return 0, false, fmt.Errorf("catalog: sequence %s: %s is corrupt: %w", r.Name, c.seqPath(oid), err)
	}
	return f.Last, f.Called, nil
}

// RestoreSeq sets sequence oid to (last, called), durably, as a cluster's
// new coordinator does from the committed checkpoint; every session's
// preallocated values of it are dropped.
func (c *Catalog) RestoreSeq(oid uint32, last int64, called bool) error {
	_, st, err := c.lockedSeq(oid, &SeqLocal{})
	if err != nil {
		return err
	}
	defer st.mu.Unlock()
	if err := c.writeSeq(oid, last, called); err != nil {
		return err
	}
	st.last, st.called, st.loggedOK = last, called, false
	st.gen++
	return nil
}

// SeqRow is what SELECT * FROM a sequence shows: last_value, log_cnt (how
// many values may still be handed out before the next log write) and
// is_called.
func (c *Catalog) SeqRow(oid uint32) (last, logCnt int64, called bool, err error) {
	r, err := c.sequence(oid)
	if err != nil {
		return 0, 0, false, err
	}
	st, err := c.seqState(r)
	if err != nil {
		return 0, 0, false, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.called && st.loggedOK && r.Seq.Increment != 0 {
		logCnt = (st.logged - st.last) / r.Seq.Increment
	}
	return st.last, logCnt, st.called, nil
}

// SeqLastValue is pg_sequences.last_value: the last value handed out, ok
// false when none was since creation or RESTART.
func (c *Catalog) SeqLastValue(r *Relation) (int64, bool) {
	st, err := c.seqState(r)
	if err != nil {
		return 0, false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.last, st.called
}

// CreateSequence creates sequence rel (Kind KindSequence, Seq set). 42P07
// when the name is taken.
func (c *Catalog) CreateSequence(rel *Relation) (*Relation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.snap().clone()
	r := *rel
	r.Kind = KindSequence
	if r.Schema == "" {
		r.Schema = "public"
	}
	if err := s.checkCreate(r.Schema, r.Name); err != nil {
		return nil, err
	}
	r.OID = s.allocOID()
	r.RowTypeOID = s.allocOID()
	s.add(&r)
	c.dropSeqState(r.OID) // a stale file of a crashed CREATE
	if err := c.commit(s); err != nil {
		return nil, err
	}
	return &r, nil
}

// AlterSequence replaces sequence oid's parameters with opts and, when
// restart is set, restarts it at *restart (nextval returns it next).
// Unless only OWNED BY changed (params false), the sessions' preallocated
// values are dropped, as PostgreSQL's new relfilenode does.
func (c *Catalog) AlterSequence(oid uint32, opts *SeqOptions, restart *int64, params bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.snap().clone()
	old := s.byOID[oid]
	if old == nil || old.Kind != KindSequence {
		return pgerr.New(pgerr.UndefinedTable, "could not open relation with OID %d", oid)
	}
	r := *old
	r.Seq = opts
	s.remove(old)
	s.add(&r)
	for k, v := range c.snap().comments {
		if k.OID == oid {
			s.comments[k] = v
		}
	}
	st, err := c.seqState(old)
	if err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if restart != nil {
		if err := c.writeSeq(oid, *restart, false); err != nil {
			return err
		}
		st.last, st.called, st.loggedOK = *restart, false, false
	} else if st.last < opts.Min { // PostgreSQL checks the current value as a RESTART
		return seqParamErr("RESTART value (%d) cannot be less than MINVALUE (%d)", st.last, opts.Min)
	} else if st.last > opts.Max {
		return seqParamErr("RESTART value (%d) cannot be greater than MAXVALUE (%d)", st.last, opts.Max)
	}
	if err := c.commit(s); err != nil {
		return err
	}
	if params {
		st.gen++
	}
	return nil
}

// addSerials creates the owned sequence of each serial column of table r
// (being created in s): "t_col_seq" (with a number appended when taken),
// of the column's type, and makes the column NOT NULL DEFAULT
// nextval('t_col_seq'::regclass), as PostgreSQL does.
func (c *Catalog) addSerials(s *snapshot, r *Relation) error {
	for i := range r.Columns {
		col := &r.Columns[i]
		if col.Serial == "" {
			continue
		}
		if r.Kind != KindTable {
			return pgerr.Unsupported("serial columns are supported in tables only")
		}
		base := r.Name + "_" + col.Name + "_seq"
		name := base
		for n := 1; s.rels[r.Schema][name] != nil || s.indexByName(r.Schema, name) != 0; n++ {
			name = base + strconv.Itoa(n)
		}
		spec := SeqSpec{}
		if col.SerialSpec != nil {
			spec = *col.SerialSpec
		}
		spec.Type = col.Serial
		opts, err := ApplySeqSpec(nil, spec)
		if err != nil {
			return err
		}
		opts.OwnedBy, opts.OwnedByCol = r.OID, int16(i+1)
		seq := &Relation{Schema: r.Schema, Name: name, Kind: KindSequence, Seq: opts, Owner: r.Owner,
			OID: s.allocOID(), RowTypeOID: s.allocOID()}
		s.add(seq)
		c.dropSeqState(seq.OID)
		def := seqDefault(seq)
		if col.Identity != 0 {
			col.IdentityDefault = def
		} else {
			col.Default = def
		}
		col.NotNull, col.Serial, col.SerialSpec = true, "", nil
	}
	return nil
}

// ownedSequences lists the sequences owned by columns of the relations in
// rels that rels does not already hold.
func (s *snapshot) ownedSequences(rels []*Relation) []*Relation {
	in := map[uint32]bool{}
	for _, r := range rels {
		in[r.OID] = true
	}
	var out []*Relation
	for _, r := range s.sortedRelations() {
		if r.Kind == KindSequence && r.Seq != nil && r.Seq.OwnedBy != 0 && in[r.Seq.OwnedBy] && !in[r.OID] {
			out = append(out, r)
		}
	}
	return out
}

// checkOwnedSequenceDrop refuses DROP SEQUENCE of the sequence a
// column's default or identity uses while its table exists: 2BP01 as
// PostgreSQL says it without CASCADE; with CASCADE (which PostgreSQL
// answers by dropping the column's default) 0A000. A sequence that is
// only OWNED BY a column may be dropped.
func (s *snapshot) checkOwnedSequenceDrop(r *Relation, cascade bool) error {
	if r.Kind != KindSequence || r.Seq == nil || r.Seq.OwnedBy == 0 {
		return nil
	}
	t := s.byOID[r.Seq.OwnedBy]
	if t == nil || int(r.Seq.OwnedByCol) < 1 || int(r.Seq.OwnedByCol) > len(t.Columns) {
		return nil
	}
	col := t.Columns[r.Seq.OwnedByCol-1]
	if col.Identity != 0 {
		return pgerr.New(pgerr.DependentObjectsStillExist, "cannot drop sequence %s because column %s of table %s requires it", r.Name, col.Name, t.Name).
			WithHint("You can drop column %s of table %s instead.", col.Name, t.Name)
	}
	if !strings.Contains(col.Default, seqDefault(r)) {
		return nil
	}
	if cascade {
		return pgerr.Unsupported("DROP SEQUENCE ... CASCADE of the sequence of serial column %s.%s is not supported", t.Name, col.Name)
	}
	return pgerr.New(pgerr.DependentObjectsStillExist, "cannot drop sequence %s because other objects depend on it", r.Name).
		WithDetail("default value for column %s of table %s depends on sequence %s", col.Name, t.Name, r.Name).
		WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
}

// seqDefault is the default expression of a serial column using sequence
// r: nextval('name'::regclass), the name schema-qualified outside public.
func seqDefault(r *Relation) string {
	ref := QuoteIdent(r.Name)
	if r.Schema != "public" {
		ref = QuoteIdent(r.Schema) + "." + ref
	}
	return "nextval('" + strings.ReplaceAll(ref, "'", "''") + "'::regclass)"
}

// SerialSequence is pg_get_serial_sequence: the schema-qualified name of
// the sequence owned by column col of table oid, ok false when none.
func (c *Catalog) SerialSequence(oid uint32, col int16) (string, bool) {
	for _, r := range c.snap().sortedRelations() {
		if r.Kind == KindSequence && r.Seq != nil && r.Seq.OwnedBy == oid && r.Seq.OwnedByCol == col {
			return QuoteIdent(r.Schema) + "." + QuoteIdent(r.Name), true
		}
	}
	return "", false
}

// remapOwnedSequences follows an ALTER TABLE of old into r (being published
// in s): a sequence owned by a column that r keeps points at its new
// position; one owned by a dropped column is removed from s (its OID is
// returned, for its value file to go once s is committed), as PostgreSQL
// drops a serial column's sequence with the column. from is
// AlterSpec.From (nil: columns match by name).
func (s *snapshot) remapOwnedSequences(old, r *Relation, from []int) []uint32 {
	newPos := func(oldIdx int) int {
		for j := range r.Columns {
			if from != nil {
				if j < len(from) && from[j] == oldIdx {
					return j
				}
			} else if oldIdx < len(old.Columns) && r.Columns[j].Name == old.Columns[oldIdx].Name {
				return j
			}
		}
		return -1
	}
	var dropped []uint32
	for _, q := range s.sortedRelations() {
		if q.Kind != KindSequence || q.Seq == nil || q.Seq.OwnedBy != old.OID {
			continue
		}
		j := newPos(int(q.Seq.OwnedByCol) - 1)
		if j < 0 {
			s.remove(q)
			dropped = append(dropped, q.OID)
			continue
		}
		if j+1 == int(q.Seq.OwnedByCol) {
			continue
		}
		nq, opts := *q, *q.Seq
		opts.OwnedByCol = int16(j + 1)
		nq.Seq = &opts
		s.rels[nq.Schema][nq.Name], s.byOID[nq.OID] = &nq, &nq
	}
	return dropped
}

// SeqDefaultTarget is the sequence a nextval('...'::regclass) default (as
// seqDefault writes it) names, schema "" when unqualified; ok is false
// for any other text.
func SeqDefaultTarget(def string) (schema, name string, ok bool) {
	const pre, suf = "nextval('", "'::regclass)"
	if !strings.HasPrefix(def, pre) || !strings.HasSuffix(def, suf) {
		return "", "", false
	}
	parts, err := parseQualifiedName(strings.ReplaceAll(def[len(pre):len(def)-len(suf)], "''", "'"))
	switch {
	case err != nil:
		return "", "", false
	case len(parts) == 1:
		return "", parts[0], true
	case len(parts) == 2:
		return parts[0], parts[1], true
	}
	return "", "", false
}

// SpecOf is the SeqSpec that creates a sequence with o's parameters (its
// type, start, increment, bounds, cache and cycle), not its owner.
func SpecOf(o *SeqOptions) SeqSpec {
	start, inc, lo, hi, cache, cycle := o.Start, o.Increment, o.Min, o.Max, o.Cache, o.Cycle
	return SeqSpec{Type: o.Type, Start: &start, Increment: &inc, Min: &lo, Max: &hi, Cache: &cache, Cycle: &cycle}
}
