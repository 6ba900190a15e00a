package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

func boolAt(a arrow.Array, i int) bool {
	b, ok := a.(*array.Boolean)
	return ok && b.Value(i)
}

// compute returns the call's values for every position, in sorted order.
func (wc *windowCall) compute(ret types.T) (arrow.Array, error) {
	mem := alloc(wc.ctx)
	b := types.NewBuilder(mem, ret)
	defer b.Release()
	b.Reserve(wc.n)
	fn := wc.call.Fn
	for pi := 0; pi+1 < len(wc.parts); pi++ {
		if err := canceled(wc.ctx); err != nil {
			return nil, err
		}
		ps, pe := wc.parts[pi], wc.parts[pi+1]
		var err error
		if fn.Agg != nil {
			err = wc.aggregate(b, ps, pe)
		} else {
			err = wc.builtin(b, fn.Name, ps, pe)
		}
		if err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}

// builtin computes a ranking or value function over one partition.
func (wc *windowCall) builtin(b array.Builder, name string, ps, pe int) error {
	cnt := pe - ps
	switch name {
	case "row_number":
		for p := ps; p < pe; p++ {
			appendInt64Like(b, int64(p-ps+1))
		}
	case "rank":
		for p := ps; p < pe; p++ {
			appendInt64Like(b, int64(int(wc.peerLo[p])-ps+1))
		}
	case "dense_rank":
		r := int64(0)
		for p := ps; p < pe; p++ {
			if int(wc.peerLo[p]) == p {
				r++
			}
			appendInt64Like(b, r)
		}
	case "percent_rank":
		for p := ps; p < pe; p++ {
			if cnt == 1 {
				appendFloat(b, 0)
			} else {
				appendFloat(b, float64(int(wc.peerLo[p])-ps)/float64(cnt-1))
			}
		}
	case "cume_dist":
		for p := ps; p < pe; p++ {
			appendFloat(b, float64(int(wc.peerHi[p])-ps)/float64(cnt))
		}
	case "ntile":
		return wc.ntile(b, ps, pe)
	case "lag", "lead":
		return wc.lagLead(b, name == "lag", ps, pe)
	case "first_value", "last_value", "nth_value":
		return wc.frameValue(b, name, ps, pe)
	default:
		return pgerr.New(pgerr.UndefinedFunction, "function %s does not exist", name)
	}
	return nil
}

// ntile distributes the partition's rows into n buckets whose sizes differ
// by at most one, the larger buckets first; n is read at the first row.
func (wc *windowCall) ntile(b array.Builder, ps, pe int) error {
	a := wc.args[0]
	if a.IsNull(ps) {
		for p := ps; p < pe; p++ {
			b.AppendNull()
		}
		return nil
	}
	v, _ := int64Values(a)
	nb := v[ps]
	if nb <= 0 {
		return pgerr.New("22014", "argument of ntile must be greater than zero")
	}
	cnt := int64(pe - ps)
	per, extra := cnt/nb, cnt%nb
	bucket, left := int64(1), per
	if extra > 0 {
		left++
	}
	for p := ps; p < pe; p++ {
		if left == 0 {
			bucket++
			left = per
			if bucket <= extra {
				left++
			}
		}
		appendInt64Like(b, bucket)
		left--
	}
	return nil
}

// lagLead reads the value offset rows before (lag) or after (lead), within
// the partition, or the default.
func (wc *windowCall) lagLead(b array.Builder, lag bool, ps, pe int) error {
	val := wc.args[0]
	var offs []int64
	if len(wc.args) > 1 {
		offs, _ = int64Values(wc.args[1])
	}
	for p := ps; p < pe; p++ {
		off := int64(1)
		if offs != nil {
			if wc.args[1].IsNull(p) {
				b.AppendNull()
				continue
			}
			off = offs[p]
		}
		if lag {
			off = -off
		}
		q := int64(p) + off
		switch {
		case q >= int64(ps) && q < int64(pe):
			copyValue(b, val, int(q))
		case len(wc.args) > 2:
			copyValue(b, wc.args[2], p)
		default:
			b.AppendNull()
		}
	}
	return nil
}

// frameValue is first_value, last_value and nth_value over each row's frame.
func (wc *windowCall) frameValue(b array.Builder, name string, ps, pe int) error {
	fr, err := wc.newFramer(ps, pe)
	if err != nil {
		return err
	}
	val := wc.args[0]
	var nth []int64
	if name == "nth_value" {
		nth, _ = int64Values(wc.args[1])
	}
	for p := ps; p < pe; p++ {
		fs, fe := fr.frame(p)
		q := -1
		switch name {
		case "first_value":
			for q = fs; q < fe && fr.excluded(p, q); q++ {
			}
		case "last_value":
			for q = fe - 1; q >= fs && fr.excluded(p, q); q-- {
			}
		default:
			if wc.args[1].IsNull(p) {
				b.AppendNull()
				continue
			}
			if nth[p] <= 0 {
				return pgerr.New("22016", "argument of nth_value must be greater than zero")
			}
			q = fs + int(nth[p]) - 1
			if fr.f.Exclude != ExcludeNoOthers {
				k := int(nth[p])
				for q = fs; q < fe; q++ {
					if !fr.excluded(p, q) {
						if k--; k == 0 {
							break
						}
					}
				}
			}
		}
		if fs >= fe || q < fs || q >= fe {
			b.AppendNull()
			continue
		}
		copyValue(b, val, q)
	}
	return nil
}

// aggregate computes an aggregate over each row's frame. Frames that start
// at the partition's first row grow monotonically and are computed
// incrementally; others fold each row's frame into a group of its own.
func (wc *windowCall) aggregate(b array.Builder, ps, pe int) error {
	fr, err := wc.newFramer(ps, pe)
	if err != nil {
		return err
	}
	mem := alloc(wc.ctx)
	newState := func() (aggState, error) {
		return newAggState(wc.ctx, &AggCall{Fn: wc.call.Fn.Agg})
	}
	sliceArgs := func(s, e int) []arrow.Array {
		out := make([]arrow.Array, len(wc.args))
		for i, a := range wc.args {
			out[i] = array.NewSlice(a, int64(s), int64(e))
		}
		return out
	}
	if wc.call.Frame.Start.Kind == UnboundedPreceding && wc.call.Frame.Mode != FrameSession && wc.call.Frame.Exclude == ExcludeNoOthers {
		st, err := newState()
		if err != nil {
			return err
		}
		st.grow(1)
		done := ps
		var gids []int32
		for p := ps; p < pe; p++ {
			_, fe := fr.frame(p)
			if fe > done {
				gids = gids[:0]
				for q := done; q < fe; q++ {
					g := int32(0)
					if wc.mask != nil && !wc.mask[q] {
						g = -1
					}
					gids = append(gids, g)
				}
				if err := st.update(sliceArgs(done, fe), gids); err != nil {
					return err
				}
				done = fe
			}
			if err := st.appendResult(b, 0); err != nil {
				return err
			}
		}
		return nil
	}
	if wc.prefixable() {
		return wc.prefixAggregate(b, fr, ps, pe)
	}
	if wc.dequeable() {
		return wc.dequeMinMax(b, fr, ps, pe)
	}
	st, err := newState()
	if err != nil {
		return err
	}
	st.grow(pe - ps)
	var rows, gids []int32
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		args := make([]arrow.Array, len(wc.args))
		for i, a := range wc.args {
			args[i] = takeArray(mem, a, rows)
		}
		err := st.update(args, gids)
		rows, gids = rows[:0], gids[:0]
		return err
	}
	for p := ps; p < pe; p++ {
		fs, fe := fr.frame(p)
		for q := fs; q < fe; q++ {
			if (wc.mask == nil || wc.mask[q]) && !fr.excluded(p, q) {
				rows = append(rows, int32(q))
				gids = append(gids, int32(p-ps))
			}
		}
		if len(rows) >= 1<<16 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	for g := 0; g < pe-ps; g++ {
		if err := st.appendResult(b, g); err != nil {
			return err
		}
	}
	return nil
}
