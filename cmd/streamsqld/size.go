package main

import (
	"fmt"
	"strconv"
	"strings"
)

// byteSize is a flag holding a number of bytes, written as PostgreSQL
// writes memory settings: a whole number with an optional unit, B, kB, MB,
// GB or TB (multiples of 1024; KiB, MiB, GiB, TiB are accepted too).
type byteSize int64

var sizeUnits = []struct {
	names []string
	mult  int64
}{
	{[]string{"TB", "TiB"}, 1 << 40},
	{[]string{"GB", "GiB"}, 1 << 30},
	{[]string{"MB", "MiB"}, 1 << 20},
	{[]string{"kB", "KB", "KiB"}, 1 << 10},
	{[]string{"B"}, 1},
}

func (b *byteSize) Set(s string) error {
	t := strings.TrimSpace(s)
	mult := int64(1)
unit:
	for _, u := range sizeUnits {
		for _, name := range u.names {
			if strings.HasSuffix(t, name) {
				t, mult = strings.TrimSpace(strings.TrimSuffix(t, name)), u.mult
				break unit
			}
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return fmt.Errorf("invalid size %q: a whole number of bytes, with an optional unit B, kB, MB, GB or TB", s)
	}
	*b = byteSize(n * mult)
	return nil
}

func (b byteSize) String() string {
	n := int64(b)
	for _, u := range sizeUnits {
		if n >= u.mult && n%u.mult == 0 {
			return fmt.Sprintf("%d%s", n/u.mult, u.names[0])
		}
	}
	return strconv.FormatInt(n, 10)
}

// parseSize reads a memory limit flag: a size as byteSize reads it, of at
// least 1MB, or "auto" (0: the engine's default) or "unlimited" (-1).
func parseSize(flagName, v string) (int64, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "auto":
		return 0, nil
	case "unlimited":
		return -1, nil
	}
	var b byteSize
	if err := b.Set(v); err != nil || b < 1<<20 {
		return 0, fmt.Errorf("%s must be a size of at least 1MB such as 512MB or 4GB, auto or unlimited, not %q", flagName, v)
	}
	return int64(b), nil
}
