package decode

import (
	"github.com/streamsql/streamsql/pgerr"
)

// CSV splits a CSV record (without its newline; fields separated by d)
// into the row's decoded columns, in order; an empty unquoted field is
// NULL. On error it returns the column at fault, or -1 for the record's
// shape. The row may alias rec until the next call.
func (r *Row) CSV(rec []byte, d byte) (int, error) {
	convs := r.s.convs[:r.s.decoded]
	r.scratch = r.scratch[:0]
	col, i := 0, 0
	for {
		start, quoted := i, false
		j := i
		for j < len(rec) && rec[j] != d && rec[j] != '"' {
			j++
		}
		var f []byte
		if j == len(rec) || rec[j] == d { // unquoted: the field is the input
			f, i = rec[i:j], j
		} else { // quoted parts: unquote into the row's scratch
			s0 := len(r.scratch)
			r.scratch = append(r.scratch, rec[i:j]...)
			i = j
			for i < len(rec) && rec[i] != d {
				if rec[i] != '"' {
					r.scratch = append(r.scratch, rec[i])
					i++
					continue
				}
				quoted = true
				i++
				for {
					if i >= len(rec) {
						return -1, pgerr.New(pgerr.BadCopyFileFormat, "unterminated CSV quoted field")
					}
					if rec[i] == '"' {
						if i+1 < len(rec) && rec[i+1] == '"' {
							r.scratch = append(r.scratch, '"')
							i += 2
							continue
						}
						i++
						break
					}
					r.scratch = append(r.scratch, rec[i])
					i++
				}
			}
			f = r.scratch[s0:]
		}
		if col == len(convs) {
			return -1, pgerr.New(pgerr.BadCopyFileFormat, "extra data after last expected column")
		}
		if !quoted && i == start {
			r.slots[col].null = true
		} else if err := convs[col].set(&r.slots[col], f); err != nil {
			return col, err
		}
		col++
		if i >= len(rec) {
			break
		}
		i++ // the delimiter
	}
	if col < len(convs) {
		return -1, pgerr.New(pgerr.BadCopyFileFormat, "missing data for column %q", r.s.cols[col].Name)
	}
	return -1, nil
}
