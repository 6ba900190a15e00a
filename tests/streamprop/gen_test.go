package streamprop

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

type stepKind int

const (
	stepSQL      stepKind = iota // one statement (sqls[0])
	stepTx                       // BEGIN; sqls...; the last one is COMMIT or ROLLBACK
	stepCopy                     // COPY ... FROM STDIN
	stepCreate                   // CREATE MATERIALIZED VIEW (view)
	stepCheck                    // FLUSH, then compare every view
	stepRestart                  // close the engine and open it again
	stepDrop                     // DROP MATERIALIZED VIEW (view); created again later
	stepSnapshot                 // without FLUSH: views derived from each other agree
)

// step is one action of a sequence. Sequences are generated from the seed
// alone (never from results), so a seed always yields the same statements.
type step struct {
	kind stepKind
	sqls []string
	copy *copyStep
	view string
}

// gen draws random statements over the schema.
type gen struct {
	r      *rand.Rand
	nextID map[*table]int // the next fresh primary key of a and c
	extra  []string       // columns ALTER TABLE added to b, last added last
	added  int            // columns added so far (for fresh names)
	grow   bool           // no mass deletes: tables grow to hundreds of rows
	bulk   bool           // COPY into b sends hundreds of rows at once
	wide   bool           // half the v values of b and d are from 1..1000
}

// newGen's sequences grow their tables for even seeds, COPY hundreds of
// rows into b (kept from growing by mass deletes) for seeds 3 mod 4, and
// draw v from a wide range for seeds not 0 mod 3, so that a group's min/max
// and a top-N hold many distinct values.
func newGen(seed uint64) *gen {
	return &gen{
		r:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		nextID: map[*table]int{tableA: 1, tableC: 1},
		grow:   seed%2 == 0,
		bulk:   seed%4 == 3,
		wide:   seed%3 != 0,
	}
}

func (g *gen) pct(p int) bool { return g.r.IntN(100) < p }

// val is a random value of k, NULL with probability nullPct%.
func (g *gen) val(k kind, nullPct int) value {
	if g.pct(nullPct) {
		return value{null: true, kind: k}
	}
	return value{text: k.domain[g.r.IntN(len(k.domain))], kind: k}
}

// freshID is a new primary key, or (5%) one that may exist already, so
// unique violations happen too.
func (g *gen) freshID(t *table) value {
	if g.pct(5) {
		return g.oldID(t)
	}
	id := g.nextID[t]
	g.nextID[t]++
	return value{text: fmt.Sprint(id), kind: kInt}
}

// oldID is a key that was handed out (the row may be gone since).
func (g *gen) oldID(t *table) value {
	n := g.nextID[t] - 1
	if n < 1 {
		n = 1
	}
	return value{text: fmt.Sprint(1 + g.r.IntN(n)), kind: kInt}
}

func hasPK(t *table) bool { return t.cols[0].pk }

// row is a random row of t over the columns idx.
func (g *gen) row(t *table, idx []int) []value {
	out := make([]value, len(idx))
	for i, j := range idx {
		if t.cols[j].pk {
			out[i] = g.freshID(t)
		} else if g.wide && t.cols[j].name == "v" && g.pct(50) {
			out[i] = value{text: fmt.Sprint(1 + g.r.IntN(1000)), kind: kBigint}
		} else {
			out[i] = g.val(t.cols[j].kind, 15)
		}
	}
	return out
}

// insertCols is all of t's columns, or (25%) a random subset that keeps
// the primary key and one more column; the rest default to NULL.
func (g *gen) insertCols(t *table) []int {
	var idx []int
	sub := g.pct(25)
	must := 1 + g.r.IntN(len(t.cols)-1)
	for j, c := range t.cols {
		if c.pk || !sub || j == must || g.pct(60) {
			idx = append(idx, j)
		}
	}
	return idx
}

// table is a table to update, delete from or truncate; insertTable one to
// insert into.
func (g *gen) table() *table       { return mutable[g.r.IntN(len(mutable))] }
func (g *gen) insertTable() *table { return tables[g.r.IntN(len(tables))] }

func literals(vs []value) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.literal()
	}
	return strings.Join(s, ", ")
}

// eq is "col = v" or "col IS NULL".
func eq(col string, v value) string {
	if v.null {
		return col + " IS NULL"
	}
	return col + " = " + v.literal()
}

func (g *gen) insert(t *table, rows int) string {
	idx := g.insertCols(t)
	names := make([]string, len(idx))
	for i, j := range idx {
		names[i] = t.cols[j].name
	}
	vals := make([]string, rows)
	for i := range vals {
		vals[i] = "(" + literals(g.row(t, idx)) + ")"
	}
	return fmt.Sprintf("INSERT INTO %s (%s) VALUES %s", t.name, strings.Join(names, ", "), strings.Join(vals, ", "))
}

func (g *gen) copyRows(t *table, binary bool) *copyStep {
	idx := g.insertCols(t)
	n := 1 + g.r.IntN(8)
	switch {
	case g.bulk && t == tableB && g.pct(50):
		n = 200 + g.r.IntN(800)
	case g.pct(20):
		n = 10 + g.r.IntN(40)
	}
	c := &copyStep{table: t.name, binary: binary}
	for _, j := range idx {
		c.cols = append(c.cols, t.cols[j])
	}
	for range n {
		c.rows = append(c.rows, g.row(t, idx))
	}
	if t == tableB { // COPY cannot leave out a column with a default (0A000)
		for _, x := range g.extra {
			c.cols = append(c.cols, column{name: x, kind: kInt})
			for i := range c.rows {
				c.rows[i] = append(c.rows[i], g.val(kInt, 20))
			}
		}
	}
	return c
}

// setList assigns random values to 1-3 non-key columns of t.
func (g *gen) setList(t *table) string {
	var sets []string
	for _, j := range g.r.Perm(len(t.cols)) {
		c := t.cols[j]
		if c.pk || len(sets) == 3 || (len(sets) > 0 && g.pct(50)) {
			continue
		}
		sets = append(sets, c.name+" = "+g.val(c.kind, 15).literal())
	}
	return strings.Join(sets, ", ")
}

// dml is one random INSERT, UPDATE or DELETE.
func (g *gen) dml() string {
	switch x := g.r.IntN(1000); {
	case x < 250:
		return g.insert(g.insertTable(), 1)
	case x < 380:
		return g.insert(g.insertTable(), 2+g.r.IntN(5))
	case x < 410:
		return fmt.Sprintf("INSERT INTO b (k, v, s, f) SELECT k, id, g, f FROM a WHERE %s", eq("k", g.val(kInt, 20)))
	case x < 530: // update a row by its key
		t := []*table{tableA, tableC}[g.r.IntN(2)]
		return fmt.Sprintf("UPDATE %s SET %s WHERE id = %s", t.name, g.setList(t), g.oldID(t).literal())
	case x < 570: // move a row to a new key
		t := []*table{tableA, tableC}[g.r.IntN(2)]
		return fmt.Sprintf("UPDATE %s SET id = %s WHERE id = %s", t.name, g.freshID(t).literal(), g.oldID(t).literal())
	case x < 700: // updates of many rows, moving them between groups and join keys
		k1, k2 := g.val(kInt, 20), g.val(kInt, 15)
		switch g.r.IntN(7) {
		case 0:
			return fmt.Sprintf("UPDATE b SET k = %s WHERE %s", k2.literal(), eq("k", k1))
		case 1:
			return fmt.Sprintf("UPDATE b SET v = v + 1, f = f * 2 WHERE %s", eq("s", g.val(kText, 20)))
		case 2:
			return fmt.Sprintf("UPDATE a SET g = %s, k = %s WHERE %s", g.val(kText, 15).literal(), k2.literal(), eq("k", k1))
		case 3:
			return fmt.Sprintf("UPDATE a SET f = f + 0.1, n = %s WHERE %s", g.val(kNumeric, 15).literal(), eq("g", g.val(kText, 20)))
		case 4:
			return fmt.Sprintf("UPDATE c SET w = %s, g = %s WHERE %s", k2.literal(), g.val(kText, 15).literal(), eq("w", k1))
		case 5:
			return fmt.Sprintf("UPDATE a SET ts = ts + interval '1 hour' WHERE id %% 3 = %d", g.r.IntN(3))
		default:
			return fmt.Sprintf("UPDATE b SET s = %s, k = k + 1 WHERE %s", g.val(kText, 15).literal(), eq("v", g.val(kBigint, 10)))
		}
	case x < 730: // updates that change nothing, or every row
		switch g.r.IntN(3) {
		case 0:
			return fmt.Sprintf("UPDATE a SET k = k, g = g WHERE %s", eq("k", g.val(kInt, 20)))
		case 1:
			return "UPDATE c SET w = (w + 1) % 5"
		default:
			return fmt.Sprintf("UPDATE b SET f = %s WHERE v IS NOT NULL", g.val(kFloat, 20).literal())
		}
	case x < 870: // delete a row by its key
		t := []*table{tableA, tableC}[g.r.IntN(2)]
		return fmt.Sprintf("DELETE FROM %s WHERE id = %s", t.name, g.oldID(t).literal())
	case g.grow:
		return g.insert(g.insertTable(), 2+g.r.IntN(8))
	case x < 995: // delete many rows
		switch g.r.IntN(4) {
		case 0:
			return fmt.Sprintf("DELETE FROM b WHERE %s", eq("k", g.val(kInt, 20)))
		case 1:
			return fmt.Sprintf("DELETE FROM b WHERE v > %s", g.val(kBigint, 0).literal())
		case 2:
			return fmt.Sprintf("DELETE FROM a WHERE %s AND k >= %s", eq("g", g.val(kText, 20)), g.val(kInt, 0).literal())
		default:
			return fmt.Sprintf("DELETE FROM c WHERE %s", eq("w", g.val(kInt, 20)))
		}
	default:
		return "DELETE FROM " + g.table().name
	}
}

// sequence is a random run of n actions: some views are created before any
// data, the others later (they backfill); checks every 2-12 steps and at
// the end; with restart, one restart in the middle.
func (g *gen) sequence(n int, restart bool) []step {
	at := map[string]int{} // creation step per view; -1: before the data
	for _, v := range corpus {
		s := -1
		if !g.pct(40) {
			s = g.r.IntN(n*2/3 + 1)
		}
		for _, d := range v.deps() {
			s = max(s, at[d])
		}
		at[v.name] = s
	}
	var out []step
	recreate := map[int][]string{} // views dropped, created again at a step
	create := func(i int) {
		for _, v := range corpus {
			if at[v.name] == i {
				out = append(out, step{kind: stepCreate, view: v.name})
			}
		}
		for _, name := range recreate[i] {
			out = append(out, step{kind: stepCreate, view: name})
		}
	}
	dropped := map[string]bool{}
	leaves := leafViews()
	create(-1)
	untilCheck := 2 + g.r.IntN(11)
	for i := range n {
		create(i)
		for _, name := range recreate[i] {
			dropped[name] = false
		}
		if g.pct(3) { // drop a view nothing reads, create it again later
			v := leaves[g.r.IntN(len(leaves))]
			if at[v] < i && !dropped[v] {
				dropped[v] = true
				out = append(out, step{kind: stepDrop, view: v})
				again := i + 1 + g.r.IntN(20)
				recreate[again] = append(recreate[again], v)
			}
		}
		if restart && i == n/2 {
			out = append(out, step{kind: stepRestart}, step{kind: stepCheck})
		}
		if g.pct(10) {
			out = append(out, step{kind: stepSnapshot})
		}
		untilCheck--
		if untilCheck == 0 {
			out = append(out, step{kind: stepCheck})
			untilCheck = 2 + g.r.IntN(11)
		}
		switch x := g.r.IntN(1000); {
		case x < 790:
			out = append(out, step{kind: stepSQL, sqls: []string{g.dml()}})
		case x < 860:
			tx := step{kind: stepTx}
			for range 1 + g.r.IntN(4) {
				if g.pct(5) {
					tx.sqls = append(tx.sqls, "TRUNCATE "+g.table().name)
				} else {
					tx.sqls = append(tx.sqls, g.dml())
				}
			}
			end := "COMMIT"
			if g.pct(35) {
				end = "ROLLBACK"
			}
			tx.sqls = append(tx.sqls, end)
			out = append(out, tx)
		case x < 900:
			out = append(out, step{kind: stepTx, sqls: g.churn()})
		case x < 940:
			out = append(out, step{kind: stepCopy, copy: g.copyRows(g.insertTable(), false)})
		case x < 985:
			out = append(out, step{kind: stepCopy, copy: g.copyRows(tableB, true)})
		case x < 990:
			out = append(out, step{kind: stepSQL, sqls: []string{"TRUNCATE " + g.table().name}})
		default:
			out = append(out, step{kind: stepSQL, sqls: []string{g.alter()}})
		}
	}
	for i := n; i < n+20; i++ {
		create(i)
	}
	return append(out, step{kind: stepCheck})
}

// churn is a transaction that inserts a row and changes it again before
// committing (or rolling back): the changes of one epoch cancel out.
func (g *gen) churn() []string {
	t := []*table{tableA, tableC}[g.r.IntN(2)]
	id := g.freshID(t).literal()
	sqls := []string{
		g.insert(t, 1), // another row, so the transaction is not only churn
		fmt.Sprintf("INSERT INTO %s (id, %s) VALUES (%s, %s)", t.name, t.cols[2].name, id, g.val(t.cols[2].kind, 10).literal()),
		fmt.Sprintf("UPDATE %s SET %s WHERE id = %s", t.name, g.setList(t), id),
	}
	if g.pct(50) {
		sqls = append(sqls, fmt.Sprintf("UPDATE %s SET id = %s WHERE id = %s", t.name, g.freshID(t).literal(), id))
	} else {
		sqls = append(sqls, fmt.Sprintf("DELETE FROM %s WHERE id = %s", t.name, id))
	}
	if g.pct(25) {
		return append(sqls, "ROLLBACK")
	}
	return append(sqls, "COMMIT")
}

// alter adds a column to b (with a default, so existing rows change
// layout) or drops the last one added. No view reads those columns.
func (g *gen) alter() string {
	if len(g.extra) > 0 && g.pct(40) {
		c := g.extra[len(g.extra)-1]
		g.extra = g.extra[:len(g.extra)-1]
		return "ALTER TABLE b DROP COLUMN " + c
	}
	g.added++
	c := fmt.Sprintf("x%d", g.added)
	g.extra = append(g.extra, c)
	return fmt.Sprintf("ALTER TABLE b ADD COLUMN %s int DEFAULT %d", c, g.added)
}

// leafViews are the corpus views no other corpus view reads.
func leafViews() []string {
	read := map[string]bool{}
	for _, v := range corpus {
		for _, d := range v.deps() {
			read[d] = true
		}
	}
	var out []string
	for _, v := range corpus {
		if !read[v.name] && v.refused == "" {
			out = append(out, v.name)
		}
	}
	return out
}
