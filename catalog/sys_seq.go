package catalog

import "strconv"

// The catalog rows of sequences: pg_sequence, pg_sequences and
// information_schema.sequences (pg_class rows come from sys_class.go).

func init() {
	registerRows("pg_catalog.pg_sequence", pgSequenceRows)
	registerRows("pg_catalog.pg_sequences", pgSequencesRows)
	registerRows("information_schema.sequences", isSequencesRows)
	registerRows("pg_catalog.pg_depend", pgDependRows)
}

// pgDependRows lists the dependencies this catalog keeps as PostgreSQL
// records them: a sequence owned by a column (serial, OWNED BY: 'a';
// identity: 'i') depends on that column, which is what psql's \d reads
// for "Owned by". Other dependencies are not listed.
func pgDependRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range sequences(s) {
		t := s.byOID[r.Seq.OwnedBy]
		if r.Seq.OwnedBy == 0 || t == nil {
			continue
		}
		dep := "a"
		if i := int(r.Seq.OwnedByCol) - 1; i >= 0 && i < len(t.Columns) && t.Columns[i].Identity != 0 {
			dep = "i"
		}
		if err := b.add(row{"classid": pgClassOID, "objid": r.OID, "objsubid": int32(0), "refclassid": pgClassOID,
			"refobjid": t.OID, "refobjsubid": int32(r.Seq.OwnedByCol), "deptype": dep}); err != nil {
			return err
		}
	}
	return nil
}

// seqTypeOID is the pg_type OID of a sequence's data type.
func seqTypeOID(t string) int64 {
	switch t {
	case "smallint":
		return 21
	case "integer":
		return 23
	}
	return 20
}

func sequences(s *snapshot) []*Relation {
	var out []*Relation
	for _, r := range s.sortedRelations() {
		if r.Kind == KindSequence && r.Seq != nil {
			out = append(out, r)
		}
	}
	return out
}

func pgSequenceRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range sequences(s) {
		o := r.Seq
		if err := b.add(row{"seqrelid": r.OID, "seqtypid": seqTypeOID(o.Type), "seqstart": o.Start, "seqincrement": o.Increment,
			"seqmax": o.Max, "seqmin": o.Min, "seqcache": o.Cache, "seqcycle": o.Cycle}); err != nil {
			return err
		}
	}
	return nil
}

// seqVisible reports whether the session of ctx holds one of the
// privileges of need on sequence r (a trust-mode user that is no stored
// role acts as the superuser).
func seqVisible(c *Catalog, r *Relation, ctx RowsContext, need Privilege) bool {
	me, ok := c.LookupRole(userName(ctx), userName(ctx))
	return !ok || c.HasAnyPrivilege(me.OID, r, need)
}

// pgSequencesRows: last_value is NULL before the first nextval, and for a
// role holding neither SELECT nor USAGE, as in PostgreSQL's view.
func pgSequencesRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range sequences(s) {
		o := r.Seq
		var last any
		if v, ok := c.SeqLastValue(r); ok && seqVisible(c, r, ctx, PrivSelect|PrivUsage) {
			last = v
		}
		if err := b.add(row{"schemaname": r.Schema, "sequencename": r.Name, "sequenceowner": ownerName(c, r, ctx),
			"data_type": seqTypeOID(o.Type), "start_value": o.Start, "min_value": o.Min, "max_value": o.Max,
			"increment_by": o.Increment, "cycle": o.Cycle, "cache_size": o.Cache, "last_value": last}); err != nil {
			return err
		}
	}
	return nil
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// isSequencesRows lists the sequences the session's role owns (or is a
// member of the owner of) or holds a privilege on, as PostgreSQL's view.
func isSequencesRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range sequences(s) {
		if me, ok := c.LookupRole(userName(ctx), userName(ctx)); ok && !c.roleIn(me.OID, r.OwnerOID()) && !seqVisible(c, r, ctx, PrivAllSequence) {
			continue
		}
		o := r.Seq
		prec := map[string]int64{"smallint": 16, "integer": 32, "bigint": 64}[o.Type]
		cycle := "NO"
		if o.Cycle {
			cycle = "YES"
		}
		if err := b.add(row{"sequence_catalog": ctx.Database, "sequence_schema": r.Schema, "sequence_name": r.Name,
			"data_type": o.Type, "numeric_precision": prec, "numeric_precision_radix": int64(2), "numeric_scale": int64(0),
			"start_value": itoa(o.Start), "minimum_value": itoa(o.Min), "maximum_value": itoa(o.Max),
			"increment": itoa(o.Increment), "cycle_option": cycle}); err != nil {
			return err
		}
	}
	return nil
}
