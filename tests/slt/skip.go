package slt

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// SkipList names records that are not run: lines "path:line  reason", where
// path is relative to the corpus directory (it matches any script whose path
// ends with it) and line is the record's statement/query line; "#" starts a
// comment. It is immutable after loading and safe for concurrent use. A nil
// *SkipList is empty.
type SkipList struct {
	entries map[int][]string // line -> slash paths listed for it
	n       int
}

// LoadSkipList reads a skip list.
func LoadSkipList(file string) (*SkipList, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("open skip list: %w", err)
	}
	defer f.Close()
	l := &SkipList{entries: map[int][]string{}}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		loc, _, _ := strings.Cut(line, " ")
		k := strings.LastIndexByte(loc, ':')
		if k < 0 {
			return nil, fmt.Errorf("%s:%d: want path:line reason", file, n)
		}
		ln, err := strconv.Atoi(loc[k+1:])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: bad line number %q", file, n, loc[k+1:])
		}
		l.entries[ln] = append(l.entries[ln], "/"+strings.TrimPrefix(filepath.ToSlash(loc[:k]), "/"))
		l.n++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read skip list: %w", err)
	}
	return l, nil
}

// Has reports whether the record at path:line is listed.
func (l *SkipList) Has(path string, line int) bool {
	if l == nil {
		return false
	}
	p := filepath.ToSlash(path)
	if abs, err := filepath.Abs(path); err == nil {
		p = filepath.ToSlash(abs)
	}
	for _, suffix := range l.entries[line] {
		if strings.HasSuffix(p, suffix) {
			return true
		}
	}
	return false
}

// Len is the number of listed records.
func (l *SkipList) Len() int {
	if l == nil {
		return 0
	}
	return l.n
}
