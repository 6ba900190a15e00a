package planner

import (
	"bufio"
	"os"
	"sort"
	"strings"
	"testing"
)

func TestZZCorpus(t *testing.T) {
	path := os.Getenv("SLT")
	if path == "" {
		t.Skip()
	}
	f, _ := os.Open(path)
	defer f.Close()
	d := newTestDB(t)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var recs [][]string
	var cur []string
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			if len(cur) > 0 {
				recs = append(recs, cur)
			}
			cur = nil
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		cur = append(cur, line)
	}
	if len(cur) > 0 {
		recs = append(recs, cur)
	}
	errs := map[string]int{}
	examples := map[string]string{}
	n, bad := 0, 0
	skip := false
	for _, r := range recs {
		head := r[0]
		if strings.HasPrefix(head, "skipif postgresql") {
			continue
		}
		if strings.HasPrefix(head, "onlyif") && !strings.Contains(head, "postgresql") {
			continue
		}
		for len(r) > 0 && (strings.HasPrefix(r[0], "skipif") || strings.HasPrefix(r[0], "onlyif")) {
			r = r[1:]
		}
		_ = skip
		if len(r) == 0 {
			continue
		}
		var sqlLines []string
		for _, l := range r[1:] {
			if l == "----" {
				break
			}
			sqlLines = append(sqlLines, l)
		}
		q := strings.Join(sqlLines, "\n")
		if strings.HasPrefix(r[0], "statement error") || strings.HasPrefix(r[0], "hash-threshold") || strings.HasPrefix(r[0], "halt") {
			continue
		}
		n++
		_, _, err := d.run(q)
		if err != nil {
			bad++
			msg := err.Error()
			errs[msg]++
			if _, ok := examples[msg]; !ok {
				examples[msg] = q
			}
		}
	}
	type kv struct {
		k string
		v int
	}
	var list []kv
	for k, v := range errs {
		list = append(list, kv{k, v})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].v > list[j].v })
	t.Logf("%d records, %d errors", n, bad)
	for i, e := range list {
		if i > 25 {
			break
		}
		t.Logf("%5d %s\n      e.g. %s", e.v, e.k, strings.ReplaceAll(examples[e.k], "\n", " "))
	}
}
