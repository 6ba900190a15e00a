package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/pgerr"
)

// regexp_match over whole arrays: the pattern is compiled (looked up in
// regexCache) once per run of rows with the same pattern and flags rather
// than once a row, the match goes through the pivot matcher when the
// pattern has one (regex_fast.go), and the groups are appended to the
// result's builders directly instead of through a []types.Value per row.
// The Func is strict without being null-safe: callKernel passes only the
// rows whose arguments are all non-NULL.

// compileMatch compiles regexp_match's pattern with its flags.
func compileMatch(pat, flags string) (*Regex, error) {
	opts, global, err := regexOptions(flags)
	if err != nil {
		return nil, err
	}
	if global {
		return nil, pgerr.New(pgerr.InvalidParameterValue, "regexp_match() does not support the \"global\" option").
			WithHint("Use the regexp_matches function instead.")
	}
	return compilePG(pat, opts)
}

// submatchIndex is re.FindSubmatchIndex(s) (appending to dst when the
// pivot matcher answers), with the pivot matcher pv when not nil and the
// required-literal test otherwise (both for RE2 patterns only).
func submatchIndex(re *Regex, pv *pivotRegex, s string, dst []int, sc *pivotScratch) ([]int, error) {
	if re.re2 == nil {
		return re.FindSubmatchIndex(s)
	}
	if pv != nil {
		if m, ok := pv.find(s, dst, sc); ok {
			return m, nil
		}
		return re.re2.FindStringSubmatchIndex(s), nil
	}
	if cannotMatch(re.re2, s) { // regex_literal.go
		return nil, nil
	}
	return re.re2.FindStringSubmatchIndex(s), nil
}

// regexpScan calls found for every row of regexp_match's arguments with
// the row's string and its submatch indexes (nil: NULL, an argument NULL
// or no match), compiling each run of equal patterns and flags once.
func regexpScan(args []arrow.Array, n int, found func(s string, m []int) error) error {
	strs, ok1 := args[0].(*array.String)
	pats, ok2 := args[1].(*array.String)
	var flags *array.String
	ok3 := true
	if len(args) > 2 {
		flags, ok3 = args[2].(*array.String)
	}
	if !ok1 || !ok2 || !ok3 {
		return pgerr.Internal("regexp_match: arguments are not text arrays")
	}
	var (
		re             *Regex
		pv             *pivotRegex
		lastPat, lastF string
		idx            []int
		sc             *pivotScratch // pv's, for the rows of one pattern
	)
	defer func() {
		if sc != nil {
			pv.scratch.Put(sc)
		}
	}()
	for i := 0; i < n; i++ {
		if strs.IsNull(i) || pats.IsNull(i) || flags != nil && flags.IsNull(i) {
			if err := found("", nil); err != nil {
				return err
			}
			continue
		}
		pat, fl := pats.Value(i), ""
		if flags != nil {
			fl = flags.Value(i)
		}
		if re == nil || pat != lastPat || fl != lastF {
			var err error
			if re, err = compileMatch(pat, fl); err != nil {
				return err
			}
			if sc != nil {
				pv.scratch.Put(sc)
				sc = nil
			}
			pv, lastPat, lastF = nil, pat, fl
			if re.re2 != nil {
				pv = pivotFor(re.re2)
			}
			if pv != nil {
				sc = pv.getScratch()
			}
		}
		s := strs.Value(i)
		m, err := submatchIndex(re, pv, s, idx[:0], sc)
		if err != nil {
			return err
		}
		if m != nil {
			idx = m
		}
		if err := found(s, m); err != nil {
			return err
		}
	}
	return nil
}

// regexpMatchKernel implements regexp_match(string, pattern [, flags]).
func regexpMatchKernel(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
	lb := array.NewListBuilder(ctx.Allocator(), arrow.BinaryTypes.String)
	defer lb.Release()
	vb := lb.ValueBuilder().(*array.StringBuilder)
	lb.Reserve(n)
	var built, checked int64
	err := regexpScan(args, n, func(s string, m []int) error {
		if m == nil {
			lb.AppendNull()
			return nil
		}
		lb.Append(true)
		if len(m) == 2 { // no groups: the whole match
			vb.Append(s[m[0]:m[1]])
			built += int64(m[1] - m[0])
		}
		for k := 2; k < len(m); k += 2 {
			if m[k] < 0 {
				vb.AppendNull()
				continue
			}
			vb.Append(s[m[k]:m[k+1]])
			built += int64(m[k+1] - m[k])
		}
		if built-checked > 1<<20 {
			checked = built
			return checkBuild(ctx, built)
		}
		return nil
	})
	if err == nil {
		err = checkBuild(ctx, built)
	}
	if err != nil {
		return nil, err
	}
	return lb.NewArray(), nil
}

// regexpGroupKernel is regexp_match(...)[k]: the k-th group's text (the
// whole match for k = 1 when the pattern has no groups), NULL when there
// is no match, no such group, or the group did not take part.
func regexpGroupKernel(ctx *Context, args []arrow.Array, n int, k int64) (arrow.Array, error) {
	sb := array.NewStringBuilder(ctx.Allocator())
	defer sb.Release()
	sb.Reserve(n)
	var built, checked int64
	err := regexpScan(args, n, func(s string, m []int) error {
		lo, hi := -1, -1
		switch {
		case m == nil:
		case len(m) == 2:
			if k == 1 {
				lo, hi = m[0], m[1]
			}
		case k >= 1 && k < int64(len(m)/2):
			lo, hi = m[2*k], m[2*k+1]
		}
		if lo < 0 {
			sb.AppendNull()
			return nil
		}
		sb.Append(s[lo:hi])
		built += int64(hi - lo)
		if built-checked > 1<<20 {
			checked = built
			return checkBuild(ctx, built)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return sb.NewArray(), nil
}
