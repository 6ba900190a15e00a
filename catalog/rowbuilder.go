package catalog

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// rowBuilder accumulates the rows of a system relation into one Arrow batch.
// Rows are given by column name; a column a row does not name is NULL. Used
// by one goroutine.
type rowBuilder struct {
	cols     []types.Column
	index    map[string]int
	builders []array.Builder
	n        int
}

func newRowBuilder(cols []types.Column) *rowBuilder {
	b := &rowBuilder{cols: cols, index: make(map[string]int, len(cols)), builders: make([]array.Builder, len(cols))}
	for i, c := range cols {
		b.index[c.Name] = i
		b.builders[i] = array.NewBuilder(memory.DefaultAllocator, c.Type.ArrowType())
	}
	return b
}

// row is one row: column name -> value. Values are Go strings (text, name,
// "char", varchar), bool, int/int16/int32/int64 (integers), uint32 (oid,
// regproc, regtype), float32/float64, and []string / []int16 / []uint32 for
// arrays; nil is NULL.
type row map[string]any

// add appends a row; a name that is not a column, or a value of the wrong
// kind, is an error (a bug in this package, caught by its tests).
func (b *rowBuilder) add(r row) error {
	set := 0
	for i, c := range b.cols {
		v, ok := r[c.Name]
		if ok {
			set++
		}
		if err := appendAny(b.builders[i], v); err != nil {
			return fmt.Errorf("catalog: column %s: %w", c.Name, err)
		}
	}
	if set != len(r) {
		for name := range r {
			if _, ok := b.index[name]; !ok {
				return fmt.Errorf("catalog: no column %q", name)
			}
		}
	}
	b.n++
	return nil
}

// finish returns the batch and resets nothing: call once.
func (b *rowBuilder) finish() arrow.RecordBatch {
	arrs := make([]arrow.Array, len(b.builders))
	for i, bl := range b.builders {
		arrs[i] = bl.NewArray()
		bl.Release()
	}
	return array.NewRecordBatch(types.ArrowSchema(b.cols), arrs, int64(b.n))
}

func appendAny(bl array.Builder, v any) error {
	if v == nil {
		bl.AppendNull()
		return nil
	}
	switch bb := bl.(type) {
	case *array.StringBuilder:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("want string, got %T", v)
		}
		bb.Append(s)
	case *array.BooleanBuilder:
		x, ok := v.(bool)
		if !ok {
			return fmt.Errorf("want bool, got %T", v)
		}
		bb.Append(x)
	case *array.Int16Builder:
		x, err := toInt(v)
		if err != nil {
			return err
		}
		bb.Append(int16(x))
	case *array.Int32Builder:
		x, err := toInt(v)
		if err != nil {
			return err
		}
		bb.Append(int32(x))
	case *array.Int64Builder:
		x, err := toInt(v)
		if err != nil {
			return err
		}
		bb.Append(x)
	case *array.Uint32Builder:
		x, err := toInt(v)
		if err != nil {
			return err
		}
		bb.Append(uint32(x))
	case *array.TimestampBuilder:
		x, ok := v.(types.TimestampValue)
		if !ok {
			return fmt.Errorf("want timestamp, got %T", v)
		}
		bb.Append(arrow.Timestamp(x))
	case *array.MonthDayNanoIntervalBuilder:
		x, ok := v.(types.IntervalValue)
		if !ok {
			return fmt.Errorf("want interval, got %T", v)
		}
		bb.Append(types.IntervalToArrow(x))
	case *array.Float32Builder:
		switch x := v.(type) {
		case float32:
			bb.Append(x)
		case float64:
			bb.Append(float32(x))
		default:
			return fmt.Errorf("want float, got %T", v)
		}
	case *array.Float64Builder:
		switch x := v.(type) {
		case float64:
			bb.Append(x)
		case float32:
			bb.Append(float64(x))
		default:
			return fmt.Errorf("want float, got %T", v)
		}
	case *array.ListBuilder:
		vb := bb.ValueBuilder()
		switch x := v.(type) {
		case []string:
			bb.Append(true)
			for _, e := range x {
				if err := appendAny(vb, e); err != nil {
					return err
				}
			}
		case []int16:
			bb.Append(true)
			for _, e := range x {
				if err := appendAny(vb, e); err != nil {
					return err
				}
			}
		case []uint32:
			bb.Append(true)
			for _, e := range x {
				if err := appendAny(vb, e); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("want a slice, got %T", v)
		}
	default:
		return fmt.Errorf("unsupported column storage %T", bl)
	}
	return nil
}

func toInt(v any) (int64, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case uint32:
		return int64(x), nil
	}
	return 0, fmt.Errorf("want an integer, got %T", v)
}
