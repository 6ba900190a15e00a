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
