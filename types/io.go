package types

// Value input/output and Arrow access: the contract with the rest of the engine.
//
//	AppendText / FormatText   format.go (per type: float.go, numeric.go, datetime.go, interval.go, array.go)
//	ParseText                 parse.go  (dtparse.go, interval.go, jsonb.go, array.go)
//	AppendBinary/ParseBinary  binary.go
//	ValueAt / NewBuilder /
//	  AppendValue / MakeArray /
//	  ConstArray              values.go
//	Compare                   compare.go
//	FromName / TypmodIn       names.go

// FormatText returns v's PostgreSQL text output; NULL is the caller's business.
func FormatText(v Value, t T, opts *FormatOptions) string {
	return string(AppendText(nil, v, t, opts))
}
