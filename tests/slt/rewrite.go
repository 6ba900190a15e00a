package slt

import "strings"

// rewrite returns the script's text with the results of the records in
// results (by record index) replaced; everything else is kept as written.
func rewrite(s *Script, results map[int][]string) string {
	var b strings.Builder
	next := 0 // next line of s.Lines to copy
	for i, rec := range s.Records {
		res, ok := results[i]
		if !ok {
			continue
		}
		for ; next < rec.sqlEnd; next++ {
			b.WriteString(s.Lines[next] + "\n")
		}
		b.WriteString("----\n")
		for _, l := range res {
			b.WriteString(l + "\n")
		}
		next = rec.end
	}
	for ; next < len(s.Lines); next++ {
		b.WriteString(s.Lines[next] + "\n")
	}
	return b.String()
}
