package expr

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Integer and float arithmetic: tight loops over the value buffers, with
// PostgreSQL's overflow and division-by-zero errors reported only for rows
// whose inputs are non-NULL.

type integer interface{ ~int16 | ~int32 | ~int64 }

type float interface{ ~float32 | ~float64 }

type kernel = func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error)

var errDivZero = pgerr.New(pgerr.DivisionByZero, "division by zero")

func intLimits[T integer]() (lo, hi int64) {
	var z T
	switch any(z).(type) {
	case int16:
		return math.MinInt16, math.MaxInt16
	case int32:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// intBinary returns the kernel of an integer operator op on type t.
func intBinary[T integer](op byte, t types.T) kernel {
	return func(_ *Context, args []arrow.Array, n int) (arrow.Array, error) {
		x, y := vals[T](args[0]), vals[T](args[1])
		bm := andValidity(n, args[0], args[1])
		out := make([]T, n)
		lo, hi := intLimits[T]()
		bad := -1
		switch op {
		case '+':
			for i := range out {
				r := x[i] + y[i]
				if (r^x[i])&(r^y[i]) < 0 {
					bad = i
				}
				out[i] = r
			}
		case '-':
			for i := range out {
				r := x[i] - y[i]
				if (x[i]^y[i])&(r^x[i]) < 0 {
					bad = i
				}
				out[i] = r
			}
		case '*':
			if hi < math.MaxInt64 {
				for i := range out {
					r := int64(x[i]) * int64(y[i])
					if r < lo || r > hi {
						bad = i
					}
					out[i] = T(r)
				}
			} else {
				for i := range out {
					a, b := int64(x[i]), int64(y[i])
					r := a * b
					if a != 0 && (r/a != b || (a == -1 && b == math.MinInt64)) {
						bad = i
					}
					out[i] = T(r)
				}
			}
		case '/', '%':
			for i := range out {
				if y[i] == 0 {
					if isValid(bm, i) {
						return nil, errDivZero
					}
					continue
				}
				if y[i] == -1 {
					// avoid the hardware trap on MinInt / -1
					if op == '%' {
						out[i] = 0
					} else {
						if int64(x[i]) == lo && isValid(bm, i) {
							return nil, outOfRange(t)
						}
						out[i] = -x[i]
					}
					continue
				}
				if op == '/' {
					out[i] = x[i] / y[i]
				} else {
					out[i] = x[i] % y[i]
				}
			}
		}
		if bad >= 0 {
			// Recheck: only rows with non-NULL inputs may overflow.
			for i := range out {
				if isValid(bm, i) && intOverflows(op, int64(x[i]), int64(y[i]), lo, hi) {
					return nil, outOfRange(t)
				}
			}
		}
		return makePrim(t.ArrowType(), out, bm), nil
	}
}

func intOverflows(op byte, a, b, lo, hi int64) bool {
	switch op {
	case '+':
		r := a + b
		return (r^a)&(r^b) < 0 || r < lo || r > hi
	case '-':
		r := a - b
		return (a^b)&(r^a) < 0 || r < lo || r > hi
	case '*':
		r := a * b
		return (a != 0 && (r/a != b || (a == -1 && b == math.MinInt64))) || r < lo || r > hi
	}
	return false
}

// intUnary is prefix minus, plus, and @ (absolute value).
func intUnary[T integer](op byte, t types.T) kernel {
	return func(_ *Context, args []arrow.Array, n int) (arrow.Array, error) {
		x := vals[T](args[0])
		bm := validity(args[0])
		out := make([]T, n)
		lo, _ := intLimits[T]()
		for i, v := range x {
			switch op {
			case '-':
				if int64(v) == lo && isValid(bm, i) {
					return nil, outOfRange(t)
				}
				out[i] = -v
			case '@':
				if v < 0 {
					if int64(v) == lo && isValid(bm, i) {
						return nil, outOfRange(t)
					}
					v = -v
				}
				out[i] = v
			default:
				out[i] = v
			}
		}
		return makePrim(t.ArrowType(), out, bm), nil
	}
}

// floatBinary returns the kernel of a float operator. Results that overflow
// to infinity (from finite inputs) fail as PostgreSQL's float8 does.
func floatBinary[T float](op byte, t types.T) kernel {
	return func(_ *Context, args []arrow.Array, n int) (arrow.Array, error) {
		x, y := vals[T](args[0]), vals[T](args[1])
		bm := andValidity(n, args[0], args[1])
		out := make([]T, n)
		switch op {
		case '+':
			for i := range out {
				out[i] = x[i] + y[i]
			}
		case '-':
			for i := range out {
				out[i] = x[i] - y[i]
			}
		case '*':
			for i := range out {
				out[i] = x[i] * y[i]
			}
		case '/':
			for i := range out {
				if y[i] == 0 && x[i] == x[i] && isValid(bm, i) { // NaN / 0 is NaN
					return nil, errDivZero
				}
				out[i] = x[i] / y[i]
			}
		}
		for i, r := range out {
			if math.IsInf(float64(r), 0) && !math.IsInf(float64(x[i]), 0) && !math.IsInf(float64(y[i]), 0) && isValid(bm, i) {
				return nil, pgerr.New(pgerr.NumericValueOutOfRange, "value out of range: overflow")
			}
			if op == '*' || op == '/' {
				// PostgreSQL: a zero product of non-zero factors, a zero quotient
				// of a non-zero dividend by a finite divisor
				if r == 0 && x[i] != 0 && (op == '*' && y[i] != 0 || op == '/' && !math.IsInf(float64(y[i]), 0)) && isValid(bm, i) {
					return nil, pgerr.New(pgerr.NumericValueOutOfRange, "value out of range: underflow")
				}
			}
		}
		return makePrim(t.ArrowType(), out, bm), nil
	}
}

func floatUnary[T float](op byte, t types.T) kernel {
	return func(_ *Context, args []arrow.Array, n int) (arrow.Array, error) {
		x := vals[T](args[0])
		out := make([]T, n)
		for i, v := range x {
			switch op {
			case '-':
				out[i] = -v
			case '@':
				out[i] = T(math.Abs(float64(v)))
			default:
				out[i] = v
			}
		}
		return makePrim(t.ArrowType(), out, validity(args[0])), nil
	}
}

// float8Func applies a float64 function row by row (math functions), with
// an optional domain check run on valid rows.
func float8Func(f func(float64) (float64, error)) kernel {
	return func(_ *Context, args []arrow.Array, n int) (arrow.Array, error) {
		x := vals[float64](args[0])
		bm := validity(args[0])
		out := make([]float64, n)
		for i, v := range x {
			if !isValid(bm, i) {
				continue
			}
			r, err := f(v)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return makePrim(arrow.PrimitiveTypes.Float64, out, bm), nil
	}
}

func init() {
	for _, op := range []byte{'+', '-', '*', '/', '%'} {
		s := string(op)
		register(
			&Func{Name: s, Args: []types.T{types.TInt2, types.TInt2}, Return: types.TInt2, Strict: true, Kernel: intBinary[int16](op, types.TInt2)},
			&Func{Name: s, Args: []types.T{types.TInt4, types.TInt4}, Return: types.TInt4, Strict: true, Kernel: intBinary[int32](op, types.TInt4)},
			&Func{Name: s, Args: []types.T{types.TInt8, types.TInt8}, Return: types.TInt8, Strict: true, Kernel: intBinary[int64](op, types.TInt8)},
		)
		if op != '%' {
			register(
				&Func{Name: s, Args: []types.T{types.TFloat4, types.TFloat4}, Return: types.TFloat4, Strict: true, Kernel: floatBinary[float32](op, types.TFloat4)},
				&Func{Name: s, Args: []types.T{types.TFloat8, types.TFloat8}, Return: types.TFloat8, Strict: true, Kernel: floatBinary[float64](op, types.TFloat8)},
			)
		}
	}
	for _, op := range []byte{'-', '+', '@'} {
		s := string(op)
		register(
			&Func{Name: s, Args: []types.T{types.TInt2}, Return: types.TInt2, Strict: true, Kernel: intUnary[int16](op, types.TInt2)},
			&Func{Name: s, Args: []types.T{types.TInt4}, Return: types.TInt4, Strict: true, Kernel: intUnary[int32](op, types.TInt4)},
			&Func{Name: s, Args: []types.T{types.TInt8}, Return: types.TInt8, Strict: true, Kernel: intUnary[int64](op, types.TInt8)},
			&Func{Name: s, Args: []types.T{types.TFloat4}, Return: types.TFloat4, Strict: true, Kernel: floatUnary[float32](op, types.TFloat4)},
			&Func{Name: s, Args: []types.T{types.TFloat8}, Return: types.TFloat8, Strict: true, Kernel: floatUnary[float64](op, types.TFloat8)},
		)
	}
}

// intBitwise is & | # << >> on integers (shifts take an int4 count).
func intBitwise[T integer](op string, t types.T) kernel {
	return func(_ *Context, args []arrow.Array, n int) (arrow.Array, error) {
		x := vals[T](args[0])
		out := make([]T, n)
		if op == "<<" || op == ">>" {
			y := vals[int32](args[1])
			for i := range out {
				s := uint(y[i]) & (uint(8*unsafeSize[T]()) - 1)
				if op == "<<" {
					out[i] = x[i] << s
				} else {
					out[i] = x[i] >> s
				}
			}
		} else {
			y := vals[T](args[1])
			for i := range out {
				switch op {
				case "&":
					out[i] = x[i] & y[i]
				case "|":
					out[i] = x[i] | y[i]
				default:
					out[i] = x[i] ^ y[i]
				}
			}
		}
		return makePrim(t.ArrowType(), out, andValidity(n, args[0], args[1])), nil
	}
}

func unsafeSize[T integer]() int {
	var z T
	switch any(z).(type) {
	case int16:
		return 2
	case int32:
		return 4
	}
	return 8
}

func intNot[T integer](t types.T) kernel {
	return func(_ *Context, args []arrow.Array, n int) (arrow.Array, error) {
		x := vals[T](args[0])
		out := make([]T, n)
		for i, v := range x {
			out[i] = ^v
		}
		return makePrim(t.ArrowType(), out, validity(args[0])), nil
	}
}

func init() {
	reg := func(t types.T, not kernel, mk func(string) kernel) {
		for _, op := range []string{"&", "|", "#"} {
			register(&Func{Name: op, Args: []types.T{t, t}, Return: t, Strict: true, Kernel: mk(op)})
		}
		for _, op := range []string{"<<", ">>"} {
			register(&Func{Name: op, Args: []types.T{t, types.TInt4}, Return: t, Strict: true, Kernel: mk(op)})
		}
		register(&Func{Name: "~", Args: []types.T{t}, Return: t, Strict: true, Kernel: not})
	}
	reg(types.TInt2, intNot[int16](types.TInt2), func(op string) kernel { return intBitwise[int16](op, types.TInt2) })
	reg(types.TInt4, intNot[int32](types.TInt4), func(op string) kernel { return intBitwise[int32](op, types.TInt4) })
	reg(types.TInt8, intNot[int64](types.TInt8), func(op string) kernel { return intBitwise[int64](op, types.TInt8) })
}

// widenFloat8 runs a float8 kernel on arguments of which some are float4
// (PostgreSQL's cross-type float48 / float84 operators).
func widenFloat8(k kernel) kernel {
	return func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		wide := make([]arrow.Array, len(args))
		for i, a := range args {
			if a.DataType().ID() == arrow.FLOAT64 {
				a.Retain()
				wide[i] = a
				continue
			}
			v := make([]float64, a.Len())
			readFloat(a, v)
			wide[i] = makePrim(arrow.PrimitiveTypes.Float64, v, validity(a))
		}
		defer releaseAll(wide)
		return k(ctx, wide, n)
	}
}

func init() {
	F4, F8 := types.TFloat4, types.TFloat8
	for _, sig := range [][]types.T{{F4, F8}, {F8, F4}} {
		for _, op := range []byte{'+', '-', '*', '/'} {
			register(&Func{Name: string(op), Args: sig, Return: F8, Strict: true, Kernel: widenFloat8(floatBinary[float64](op, F8))})
		}
		for _, op := range cmpOps {
			register(&Func{Name: op, Args: sig, Return: types.TBool, Strict: true, Kernel: widenFloat8(floatCompare[float64](op))})
		}
	}
}
