package catalog

import "github.com/streamsql/streamsql/types"

// pgType is one built-in row of pg_type (the element types; their array
// types are derived from them).
type pgType struct {
	oid       uint32
	name      string // typname
	t         types.T
	byVal     bool
	preferred bool
	align     byte // typalign
	storage   byte // typstorage
	in, out   string
	recv, snd string
	modIn     string // "-" when none
	modOut    string
	collation uint32
}

// pgTypes lists every type of package types as PostgreSQL 15 describes it.
var pgTypes = []pgType{
	{16, "bool", types.TBool, true, true, 'c', 'p', "boolin", "boolout", "boolrecv", "boolsend", "-", "-", 0},
	{17, "bytea", types.TBytea, false, false, 'i', 'x', "byteain", "byteaout", "bytearecv", "byteasend", "-", "-", 0},
	{18, "char", types.TChar, true, false, 'c', 'p', "charin", "charout", "charrecv", "charsend", "-", "-", 0},
	{19, "name", types.TName, false, false, 'c', 'p', "namein", "nameout", "namerecv", "namesend", "-", "-", 950},
	{20, "int8", types.TInt8, true, false, 'd', 'p', "int8in", "int8out", "int8recv", "int8send", "-", "-", 0},
	{21, "int2", types.TInt2, true, false, 's', 'p', "int2in", "int2out", "int2recv", "int2send", "-", "-", 0},
	{23, "int4", types.TInt4, true, false, 'i', 'p', "int4in", "int4out", "int4recv", "int4send", "-", "-", 0},
	{24, "regproc", types.TRegProc, true, false, 'i', 'p', "regprocin", "regprocout", "regprocrecv", "regprocsend", "-", "-", 0},
	{25, "text", types.TText, false, true, 'i', 'x', "textin", "textout", "textrecv", "textsend", "-", "-", 100},
	{26, "oid", types.TOid, true, true, 'i', 'p', "oidin", "oidout", "oidrecv", "oidsend", "-", "-", 0},
	{114, "json", types.TJSON, false, false, 'i', 'x', "json_in", "json_out", "json_recv", "json_send", "-", "-", 0},
	{700, "float4", types.TFloat4, true, false, 'i', 'p', "float4in", "float4out", "float4recv", "float4send", "-", "-", 0},
	{701, "float8", types.TFloat8, true, true, 'd', 'p', "float8in", "float8out", "float8recv", "float8send", "-", "-", 0},
	{705, "unknown", types.TUnknown, false, false, 'c', 'p', "unknownin", "unknownout", "unknownrecv", "unknownsend", "-", "-", 0},
	{1042, "bpchar", types.TBpchar, false, false, 'i', 'x', "bpcharin", "bpcharout", "bpcharrecv", "bpcharsend", "bpchartypmodin", "bpchartypmodout", 100},
	{1043, "varchar", types.TVarchar, false, false, 'i', 'x', "varcharin", "varcharout", "varcharrecv", "varcharsend", "varchartypmodin", "varchartypmodout", 100},
	{1082, "date", types.TDate, true, false, 'i', 'p', "date_in", "date_out", "date_recv", "date_send", "-", "-", 0},
	{1083, "time", types.TTime, true, false, 'd', 'p', "time_in", "time_out", "time_recv", "time_send", "timetypmodin", "timetypmodout", 0},
	{1114, "timestamp", types.TTimestamp, true, false, 'd', 'p', "timestamp_in", "timestamp_out", "timestamp_recv", "timestamp_send", "timestamptypmodin", "timestamptypmodout", 0},
	{1184, "timestamptz", types.TTimestampTZ, true, true, 'd', 'p', "timestamptz_in", "timestamptz_out", "timestamptz_recv", "timestamptz_send", "timestamptztypmodin", "timestamptztypmodout", 0},
	{1186, "interval", types.TInterval, false, true, 'd', 'p', "interval_in", "interval_out", "interval_recv", "interval_send", "intervaltypmodin", "intervaltypmodout", 0},
	{1700, "numeric", types.TNumeric, false, false, 'i', 'm', "numeric_in", "numeric_out", "numeric_recv", "numeric_send", "numerictypmodin", "numerictypmodout", 0},
	{2205, "regclass", types.TRegClass, true, false, 'i', 'p', "regclassin", "regclassout", "regclassrecv", "regclasssend", "-", "-", 0},
	{2206, "regtype", types.TRegType, true, false, 'i', 'p', "regtypein", "regtypeout", "regtyperecv", "regtypesend", "-", "-", 0},
	{2278, "void", types.TVoid, true, false, 'i', 'p', "void_in", "void_out", "void_recv", "void_send", "-", "-", 0},
	{3802, "jsonb", types.TJSONB, false, false, 'i', 'x', "jsonb_in", "jsonb_out", "jsonb_recv", "jsonb_send", "-", "-", 0},
}

// arrayOID returns the OID of the array type over t (0 when none).
func arrayOID(t types.T) uint32 {
	if t.Kind == types.Unknown || t.Kind == types.Void || t.Kind == types.Array {
		return 0
	}
	return types.ArrayOf(t).OID()
}

// pgTypeByOID finds a built-in element type.
func pgTypeByOID(oid uint32) *pgType {
	for i := range pgTypes {
		if pgTypes[i].oid == oid {
			return &pgTypes[i]
		}
	}
	return nil
}
