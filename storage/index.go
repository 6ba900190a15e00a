package storage

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// pkIndex maps each live row's primary key (or the key of one UNIQUE
// constraint) to its row id. It belongs to the table's writer side: every
// use holds Table.mu. It reflects every write accepted so far, including
// ones whose fsync is still in flight, so that a key can never be inserted
// twice. A unique key index (nullable) leaves out rows whose key has a NULL.
type pkIndex struct {
	name     string // constraint name, for errors
	nullable bool   // rows with a NULL key column are not indexed
	cols     []int
	types    []types.T
	ints     map[int64]int64  // a single integer column (the common case)
	keys     map[string]int64 // anything else, encoded by key.go
	buf      []byte
}

func newPKIndex(def *TableDef) *pkIndex {
	if len(def.PrimaryKey) == 0 {
		return nil
	}
	name := def.PKName
	if name == "" {
		name = def.TableName + "_pkey"
	}
	return newKeyIndex(def, def.PrimaryKey, name, false)
}

// newIndexes returns every key index of def: the primary key's first, then
// the UNIQUE constraints' in order.
func newIndexes(def *TableDef) (pk *pkIndex, all []*pkIndex) {
	if pk = newPKIndex(def); pk != nil {
		all = append(all, pk)
	}
	for _, u := range def.Unique {
		all = append(all, newKeyIndex(def, u.Columns, u.Name, true))
	}
	return pk, all
}

func newKeyIndex(def *TableDef, cols []int, name string, nullable bool) *pkIndex {
	x := &pkIndex{name: name, nullable: nullable, cols: cols}
	for _, c := range cols {
		x.types = append(x.types, def.Columns[c].Type)
	}
	if len(x.cols) == 1 && isIntKind(x.types[0]) {
		x.ints = make(map[int64]int64)
	} else {
		x.keys = make(map[string]int64)
	}
	return x
}

// reset empties the index, sized for n keys (a rebuild from a state of n
// rows does not grow the map step by step).
func (x *pkIndex) reset(n int) {
	if x.ints != nil {
		x.ints = make(map[int64]int64, n)
	} else {
		x.keys = make(map[string]int64, n)
	}
}

func (x *pkIndex) len() int {
	if x.ints != nil {
		return len(x.ints)
	}
	return len(x.keys)
}

// skip reports whether row i is left out of a nullable index.
func (x *pkIndex) skip(rec arrow.RecordBatch, i int) bool {
	if !x.nullable {
		return false
	}
	for _, c := range x.cols {
		if rec.Column(c).IsNull(i) {
			return true
		}
	}
	return false
}

// encode sets x.buf to the key of row i of rec.
func (x *pkIndex) encode(rec arrow.RecordBatch, i int) {
	x.buf = x.buf[:0]
	for j, c := range x.cols {
		x.buf = keyAt(x.buf, rec.Column(c), i, x.types[j])
	}
}

// lookup returns the row id holding row i's key.
func (x *pkIndex) lookup(rec arrow.RecordBatch, i int) (int64, bool) {
	if x.skip(rec, i) {
		return 0, false
	}
	if x.ints != nil {
		id, ok := x.ints[intKeyAt(rec.Column(x.cols[0]), i)]
		return id, ok
	}
	x.encode(rec, i)
	id, ok := x.keys[string(x.buf)]
	return id, ok
}

// add maps row i's key to id, unless the key is present: then it returns
// the row id that has it and false.
func (x *pkIndex) add(rec arrow.RecordBatch, i int, id int64) (int64, bool) {
	if x.skip(rec, i) {
		return id, true
	}
	if x.ints != nil {
		k := intKeyAt(rec.Column(x.cols[0]), i)
		if old, ok := x.ints[k]; ok {
			return old, false
		}
		x.ints[k] = id
		return id, true
	}
	x.encode(rec, i)
	if old, ok := x.keys[string(x.buf)]; ok {
		return old, false
	}
	x.keys[string(x.buf)] = id
	return id, true
}

// remove unmaps row i's key if it maps to id.
func (x *pkIndex) remove(rec arrow.RecordBatch, i int, id int64) {
	if x.skip(rec, i) {
		return
	}
	if x.ints != nil {
		k := intKeyAt(rec.Column(x.cols[0]), i)
		if x.ints[k] == id {
			delete(x.ints, k)
		}
		return
	}
	x.encode(rec, i)
	if cur, ok := x.keys[string(x.buf)]; ok && cur == id {
		delete(x.keys, string(x.buf))
	}
}

// lookupValues finds the row id of a key given as Go values.
func (x *pkIndex) lookupValues(key []types.Value) (int64, bool) {
	if len(key) != len(x.cols) {
		return 0, false
	}
	for _, v := range key {
		if v == nil {
			return 0, false
		}
	}
	if x.ints != nil {
		var k int64
		switch v := key[0].(type) {
		case int64:
			k = v
		case int:
			k = int64(v)
		case int32:
			k = int64(v)
		default:
			return 0, false
		}
		id, ok := x.ints[k]
		return id, ok
	}
	var buf []byte
	for j, v := range key {
		var err error
		if buf, err = keyValue(buf, v, x.types[j]); err != nil {
			return 0, false
		}
	}
	id, ok := x.keys[string(buf)]
	return id, ok
}
