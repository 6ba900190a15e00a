package slt

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// FindScripts expands paths: files are kept, directories are walked for
// .test, .slt and .slt.part files (in lexical order).
func FindScripts(paths ...string) ([]string, error) {
	var files []string
	for _, a := range paths {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, a)
			continue
		}
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && IsScript(p) {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

// IsScript reports whether a file name is a sqllogictest script.
func IsScript(p string) bool {
	return strings.HasSuffix(p, ".test") || strings.HasSuffix(p, ".slt") || strings.HasSuffix(p, ".slt.part")
}
