package planner

import "fmt"

// maxFuzzyDistance is PostgreSQL's MAX_FUZZY_DISTANCE: the largest edit
// distance (table name and column name together) a suggestion may have.
const maxFuzzyDistance = 3

// columnHint is the hint PostgreSQL's errorMissingColumn gives for a column
// tbl.col (tbl "" when unqualified) that resolved nowhere from l: a column
// of that name in an entry out of reach, else the closest spellings over
// every FROM entry of l and its outer levels ("" when none is close).
func (b *binder) columnHint(l *level, tbl, col string) string {
	var items []*nsItem
	for x := l; x != nil; x = x.parent {
		for _, it := range x.ns {
			if it.alias != "" {
				items = append(items, it)
			}
		}
	}
	for _, it := range items {
		if tbl != "" && it.alias != tbl {
			continue
		}
		for _, c := range it.cols {
			if c.name == col {
				return fmt.Sprintf("There is a column named \"%s\" in table \"%s\", but it cannot be referenced from this part of the query.", col, it.alias)
			}
		}
	}
	best := maxFuzzyDistance + 1
	var first, second string
	for _, it := range items {
		penalty := 0
		if tbl != "" {
			penalty = levenshtein(tbl, it.alias)
			if penalty > maxFuzzyDistance {
				continue
			}
		}
		for _, c := range it.cols {
			d := levenshtein(c.name, col)
			// more than half the characters different is no suggestion
			if d > len(col)/2 {
				continue
			}
			d += penalty
			name := it.alias + "." + c.name
			switch {
			case d < best:
				best, first, second = d, name, ""
			case d == best && first == "":
				first = name
			case d == best && second == "":
				second = name
			case d == best:
				// too many equally close: ask for a closer one
				best, first, second = d-1, "", ""
			}
		}
	}
	switch {
	case first != "" && second != "":
		return fmt.Sprintf("Perhaps you meant to reference the column \"%s\" or the column \"%s\".", first, second)
	case first != "":
		return fmt.Sprintf("Perhaps you meant to reference the column \"%s\".", first)
	}
	return ""
}

// levenshtein is the edit distance between a and b (bytes, unit costs).
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
