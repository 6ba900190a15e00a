package pgregress

import (
	"regexp"
	"strings"
)

// The goal of the comparison excludes EXPLAIN (streamsql's plans are its
// own) and partitioning and inheritance, which streamsql does not have.
// Exclusions decides which units of a script fall under that rule:
//
//   - a unit whose statement begins with EXPLAIN;
//   - a unit that makes a relation partitioned, a partition, a parent or a
//     child: CREATE TABLE ... PARTITION BY RANGE|LIST|HASH (...),
//     CREATE TABLE ... PARTITION OF, CREATE TABLE ... INHERITS (...),
//     ALTER TABLE ... ATTACH|DETACH PARTITION, ALTER TABLE ... [NO] INHERIT;
//   - a unit that names such a relation in a relation's position (FROM t,
//     JOIN t, INTO t, UPDATE t, ON t, 't'::regclass, \\d+ t ...; not an alias
//     such as FROM tenk1 t, nor t.x) once it is one and until it is
//     dropped: the statements that fill, query, alter and drop it. What
//     ran on a table before it got a partition or child counts, and so
//     does a same-named plain table created after the DROP. Dropping a
//     parent ends its partitions and children too;
//   - a unit that creates a view or table from an excluded statement
//     (CREATE VIEW v AS SELECT ... FROM parted): v is then such a relation;
//   - a psql \set whose value is such a statement, and a unit that uses
//     the variable (:show_data);
//   - a unit that reads the partitioning catalogs or functions
//     (pg_inherits, pg_partitioned_table, pg_partition_tree/root/ancestors,
//     relispartition).
//
// Nothing else is excluded: a window's PARTITION BY, ONLY on a plain table
// or tableoid on a plain table count like any other statement.
func Exclusions(prelude, units []Unit) []bool {
	all := append(append([]Unit{}, prelude...), units...)
	type rel struct {
		name     string
		marked   bool // partitioned, a partition, a parent or a child
		children []*rel
	}
	current := map[string]*rel{}
	get := func(name string) *rel {
		if r, ok := current[name]; ok {
			return r
		}
		r := &rel{name: name}
		current[name] = r
		return r
	}
	var end func(r *rel)
	end = func(r *rel) {
		if current[r.name] == r {
			delete(current, r.name)
		}
		for _, c := range r.children {
			end(c)
		}
	}
	vars := map[string]bool{} // psql variables holding excluded statements
	excluded := make([]bool, len(all))
	for i, u := range all {
		s := strings.ToLower(stripBlockComments(u.SQL()))
		trimmed := strings.TrimSpace(s)
		setVar := psqlSet.FindStringSubmatch(trimmed)
		if setVar != nil {
			s = strings.ReplaceAll(strings.Trim(setVar[2], "'"), "''", "'")
			trimmed = strings.TrimSpace(s)
		}
		ex := strings.HasPrefix(trimmed, "explain") || partCatalog.MatchString(s)
		names := identifiers(s)
		if describe.MatchString(trimmed) { // \d+ t: every argument is a relation
			names = strings.Fields(trimmed)[1:]
		}
		for _, name := range names {
			if r, ok := current[unquote(name)]; ok && r.marked {
				ex = true
			}
		}
		for _, v := range psqlVar.FindAllStringSubmatch(s, -1) {
			ex = ex || vars[v[1]]
		}
		if setVar != nil {
			vars[setVar[1]] = ex
			excluded[i] = ex
			continue
		}
		if m := createRel.FindStringSubmatch(trimmed); m != nil {
			name := unquote(m[1])
			if old, ok := current[name]; ok && !strings.Contains(m[0], "or replace") {
				end(old)
			}
			r := get(name)
			if partBy.MatchString(s) || partOf.MatchString(s) || inherits.MatchString(s) {
				r.marked, ex = true, true
			}
			for _, p := range parentsOf(s) {
				pr := get(p)
				pr.marked = true
				pr.children = append(pr.children, r)
			}
			if ex {
				r.marked = true // a view or table made from partitioned ones
			}
		}
		if m := alterPart.FindStringSubmatch(trimmed); m != nil {
			parent, child := get(unquote(m[1])), get(unquote(m[3]))
			parent.marked, child.marked, ex = true, true, true
			parent.children = append(parent.children, child)
		}
		if m := dropRel.FindStringSubmatch(trimmed); m != nil {
			for _, n := range strings.Split(m[1], ",") {
				n = unquote(strings.TrimSpace(strings.Fields(n + " ")[0]))
				if r, ok := current[n]; ok {
					end(r)
				}
			}
		}
		excluded[i] = ex
	}
	return excluded[len(prelude):]
}

var (
	psqlSet     = regexp.MustCompile(`^\\set\s+(\w+)\s+(.*)$`)
	describe    = regexp.MustCompile(`^\\d\S*\s`)
	psqlVar     = regexp.MustCompile(`:(\w+)`)
	partCatalog = regexp.MustCompile(`\b(pg_inherits|pg_partitioned_table|pg_partition_tree|pg_partition_root|pg_partition_ancestors|relispartition)\b`)
	createRel   = regexp.MustCompile(`^create\s+(?:or\s+replace\s+)?(?:(?:global\s+|local\s+)?(?:temp|temporary)\s+|unlogged\s+)?(?:recursive\s+)?(?:materialized\s+)?(?:table|view)\s+(?:if\s+not\s+exists\s+)?((?:\w+\.)?(?:\w+|"[^"]+"))`)
	partBy      = regexp.MustCompile(`\bpartition\s+by\s+(range|list|hash)\s*\(`)
	partOf      = regexp.MustCompile(`\bpartition\s+of\s+((?:\w+\.)?(?:\w+|"[^"]+"))`)
	inherits    = regexp.MustCompile(`\binherits\s*\(([^)]*)\)`)
	alterPart   = regexp.MustCompile(`^alter\s+table\s+(?:if\s+exists\s+)?(?:only\s+)?((?:\w+\.)?(?:\w+|"[^"]+"))\s+(attach\s+partition|detach\s+partition|no\s+inherit|inherit)\s+((?:\w+\.)?(?:\w+|"[^"]+"))`)
	dropRel     = regexp.MustCompile(`^drop\s+(?:materialized\s+)?(?:table|view)\s+(?:if\s+exists\s+)?([^;]*)`)
)

// parentsOf names the parents a CREATE TABLE attaches to.
func parentsOf(s string) []string {
	var out []string
	if m := partOf.FindStringSubmatch(s); m != nil {
		out = append(out, unquote(m[1]))
	}
	if m := inherits.FindStringSubmatch(s); m != nil {
		for _, p := range strings.Split(m[1], ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, unquote(p))
			}
		}
	}
	return out
}

// identifiers lists the words of s in a relation's position: after FROM,
// JOIN, INTO, UPDATE, TABLE, ONLY, USING, ON, TRUNCATE, ANALYZE, VACUUM,
// COPY, REFERENCES, LOCK or a comma, and not followed by a dot (t.x names a
// column of alias t); or a string literal that is one word ('t'::regclass).
// An alias (FROM tenk1 t2) is in no such position.
func identifiers(s string) []string {
	var out []string
	toks := tokenRe.FindAllString(s, -1)
	for i, t := range toks {
		switch {
		case strings.HasPrefix(t, "'"):
			if w := strings.Trim(t, "'"); wordRe.MatchString(w) {
				out = append(out, w)
			}
		case wordRe.MatchString(t) || strings.HasPrefix(t, `"`):
			if i == 0 || !relPrefix[toks[i-1]] || i+1 < len(toks) && toks[i+1] == "." {
				continue
			}
			out = append(out, unquote(t))
		}
	}
	return out
}

var (
	tokenRe   = regexp.MustCompile(`"[^"]+"|'[^']*'|[a-z_][a-z0-9_$]*|\S`)
	wordRe    = regexp.MustCompile(`^[a-z_][a-z0-9_$]*$`)
	relPrefix = map[string]bool{"from": true, "join": true, "into": true, "update": true, "table": true,
		"only": true, "using": true, "on": true, "truncate": true, "analyze": true, "vacuum": true,
		"copy": true, "references": true, "lock": true, ",": true, "exists": true}
)

// unquote drops a schema and the quotes of a quoted identifier.
func unquote(n string) string {
	if i := strings.LastIndex(n, "."); i >= 0 && !strings.HasPrefix(n, `"`) {
		n = n[i+1:]
	}
	return strings.Trim(n, `"`)
}

var blockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)

func stripBlockComments(s string) string { return blockComment.ReplaceAllString(s, " ") }
