package slt

import "strings"

// edit is how Rewrite changes one record: a new first line (the
// statement/query line) and/or new results.
type edit struct {
	header  string   // "" keeps the line
	results []string // nil keeps the results
}

// rewrite returns the script's text with the edits (by record index)
// applied; everything else is kept as written.
func rewrite(s *Script, edits map[int]edit) string {
	var b strings.Builder
	next := 0 // next line of s.Lines to copy
	copyTo := func(end int) {
		for ; next < end; next++ {
			b.WriteString(s.Lines[next] + "\n")
		}
	}
	for i, rec := range s.Records {
		e, ok := edits[i]
		if !ok {
			continue
		}
		if e.header != "" {
			copyTo(rec.Line - 1)
			b.WriteString(e.header + "\n")
			next++
		}
		if e.results != nil {
			copyTo(rec.sqlEnd)
			b.WriteString("----\n")
			for _, l := range e.results {
				b.WriteString(l + "\n")
			}
			next = rec.end
		}
	}
	copyTo(len(s.Lines))
	return b.String()
}
