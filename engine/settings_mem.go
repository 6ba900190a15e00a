package engine

import (
	"math"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/pgerr"
)

// Memory settings (work_mem, statement_mem_limit) take PostgreSQL's memory
// units: a number of kB, or a number with B, kB, MB, GB or TB (case as
// written). SHOW prints them as PostgreSQL does, in the largest unit that
// divides the value.

var memUnits = []struct {
	name string
	kb   float64
}{{"B", 1.0 / 1024}, {"kB", 1}, {"MB", 1024}, {"GB", 1024 * 1024}, {"TB", 1024 * 1024 * 1024}}

// checkMemory parses a memory setting in kB between lo and hi (hi <=
// MaxInt32 as in PostgreSQL) and returns it as SHOW prints it.
func checkMemory(name string, lo, hi int64) func(string) (string, error) {
	return func(v string) (string, error) {
		kb, err := parseMemoryKB(name, v)
		if err != nil {
			return "", err
		}
		if kb < lo || kb > hi {
			return "", pgerr.New(pgerr.InvalidParameterValue, "%d kB is outside the valid range for parameter %q (%d .. %d)", kb, name, lo, hi)
		}
		return formatMemoryKB(kb), nil
	}
}

func parseMemoryKB(name, v string) (int64, error) {
	s := strings.TrimSpace(v)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || (i == 0 && (s[i] == '-' || s[i] == '+'))) {
		i++
	}
	num, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, pgerr.New(pgerr.InvalidParameterValue, "invalid value for parameter %q: %q", name, v)
	}
	unit := strings.TrimSpace(s[i:])
	mult := 1.0
	if unit != "" {
		found := false
		for _, u := range memUnits {
			if u.name == unit {
				mult, found = u.kb, true
			}
		}
		if !found {
			return 0, pgerr.New(pgerr.InvalidParameterValue, "invalid value for parameter %q: %q", name, v).
				WithHint("Valid units for this parameter are \"B\", \"kB\", \"MB\", \"GB\", and \"TB\".")
		}
	}
	kb := math.Round(num * mult)
	if kb > math.MaxInt32 || kb < math.MinInt32 {
		return 0, pgerr.New(pgerr.InvalidParameterValue, "invalid value for parameter %q: %q", name, v).
			WithHint("Value exceeds integer range.")
	}
	return int64(kb), nil
}

func formatMemoryKB(kb int64) string {
	if kb == 0 {
		return "0"
	}
	for i := len(memUnits) - 1; i >= 1; i-- {
		u := int64(memUnits[i].kb)
		if kb%u == 0 {
			return strconv.FormatInt(kb/u, 10) + memUnits[i].name
		}
	}
	return strconv.FormatInt(kb, 10) + "kB"
}

// memoryBytes returns a memory setting in bytes (0 when unset or 0).
func (st *settings) memoryBytes(name string) int64 {
	kb, err := parseMemoryKB(name, st.vals[name])
	if err != nil {
		return 0
	}
	return kb * 1024
}
