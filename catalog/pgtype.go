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
	collation uint32
	// procs are the OIDs of typinput, typoutput, typreceive, typsend,
	// typmodin and typmodout (0 = none), as in PostgreSQL 15.
	procs [6]uint32
}

// pgProc is a built-in function listed in pg_proc (the types' I/O functions
// and the handlers pg_type and pg_am name).
type pgProc struct {
	oid      uint32
	name     string
	ret      uint32
	args     []uint32
	strict   bool
	volatile byte // provolatile
}

// Functions pg_type and pg_am refer to, with PostgreSQL 15's OIDs.
const (
	procArrayIn         uint32 = 750
	procArrayOut        uint32 = 751
	procArrayRecv       uint32 = 2400
	procArraySend       uint32 = 2401
	procRecordIn        uint32 = 2290
	procRecordOut       uint32 = 2291
	procRecordRecv      uint32 = 2402
	procRecordSend      uint32 = 2403
	procArraySubscript  uint32 = 6179
	procArrayTypanalyze uint32 = 3816
	procDomainIn        uint32 = 2597
	procDomainRecv      uint32 = 2598
	procHeapHandler     uint32 = 3
	procBtreeHandler    uint32 = 330
)

// pgProcs lists the functions of pg_proc, from PostgreSQL 15.
var pgProcs = []pgProc{
	{3, "heap_tableam_handler", 269, []uint32{2281}, true, 'v'},
	{31, "byteaout", 2275, []uint32{17}, true, 'i'},
	{33, "charout", 2275, []uint32{18}, true, 'i'},
	{34, "namein", 19, []uint32{2275}, true, 'i'},
	{35, "nameout", 2275, []uint32{19}, true, 'i'},
	{38, "int2in", 21, []uint32{2275}, true, 'i'},
	{39, "int2out", 2275, []uint32{21}, true, 'i'},
	{42, "int4in", 23, []uint32{2275}, true, 'i'},
	{43, "int4out", 2275, []uint32{23}, true, 'i'},
	{44, "regprocin", 24, []uint32{2275}, true, 's'},
	{45, "regprocout", 2275, []uint32{24}, true, 's'},
	{46, "textin", 25, []uint32{2275}, true, 'i'},
	{47, "textout", 2275, []uint32{25}, true, 'i'},
	{109, "unknownin", 705, []uint32{2275}, true, 'i'},
	{110, "unknownout", 2275, []uint32{705}, true, 'i'},
	{200, "float4in", 700, []uint32{2275}, true, 'i'},
	{201, "float4out", 2275, []uint32{700}, true, 'i'},
	{214, "float8in", 701, []uint32{2275}, true, 'i'},
	{215, "float8out", 2275, []uint32{701}, true, 'i'},
	{321, "json_in", 114, []uint32{2275}, true, 'i'},
	{322, "json_out", 2275, []uint32{114}, true, 'i'},
	{323, "json_recv", 114, []uint32{2281}, true, 'i'},
	{324, "json_send", 17, []uint32{114}, true, 'i'},
	{330, "bthandler", 325, []uint32{2281}, true, 'v'},
	{460, "int8in", 20, []uint32{2275}, true, 'i'},
	{461, "int8out", 2275, []uint32{20}, true, 'i'},
	{750, "array_in", 2277, []uint32{2275, 26, 23}, true, 's'},
	{751, "array_out", 2275, []uint32{2277}, true, 's'},
	{1044, "bpcharin", 1042, []uint32{2275, 26, 23}, true, 'i'},
	{1045, "bpcharout", 2275, []uint32{1042}, true, 'i'},
	{1046, "varcharin", 1043, []uint32{2275, 26, 23}, true, 'i'},
	{1047, "varcharout", 2275, []uint32{1043}, true, 'i'},
	{1084, "date_in", 1082, []uint32{2275}, true, 's'},
	{1085, "date_out", 2275, []uint32{1082}, true, 's'},
	{1143, "time_in", 1083, []uint32{2275, 26, 23}, true, 's'},
	{1144, "time_out", 2275, []uint32{1083}, true, 'i'},
	{1150, "timestamptz_in", 1184, []uint32{2275, 26, 23}, true, 's'},
	{1151, "timestamptz_out", 2275, []uint32{1184}, true, 's'},
	{1160, "interval_in", 1186, []uint32{2275, 26, 23}, true, 's'},
	{1161, "interval_out", 2275, []uint32{1186}, true, 's'},
	{1242, "boolin", 16, []uint32{2275}, true, 'i'},
	{1243, "boolout", 2275, []uint32{16}, true, 'i'},
	{1244, "byteain", 17, []uint32{2275}, true, 'i'},
	{1245, "charin", 18, []uint32{2275}, true, 'i'},
	{1312, "timestamp_in", 1114, []uint32{2275, 26, 23}, true, 's'},
	{1313, "timestamp_out", 2275, []uint32{1114}, true, 's'},
	{1701, "numeric_in", 1700, []uint32{2275, 26, 23}, true, 'i'},
	{1702, "numeric_out", 2275, []uint32{1700}, true, 'i'},
	{1798, "oidin", 26, []uint32{2275}, true, 'i'},
	{1799, "oidout", 2275, []uint32{26}, true, 'i'},
	{2218, "regclassin", 2205, []uint32{2275}, true, 's'},
	{2219, "regclassout", 2275, []uint32{2205}, true, 's'},
	{2220, "regtypein", 2206, []uint32{2275}, true, 's'},
	{2221, "regtypeout", 2275, []uint32{2206}, true, 's'},
	{2290, "record_in", 2249, []uint32{2275, 26, 23}, true, 's'},
	{2291, "record_out", 2275, []uint32{2249}, true, 's'},
	{2298, "void_in", 2278, []uint32{2275}, true, 'i'},
	{2299, "void_out", 2275, []uint32{2278}, true, 'i'},
	{2400, "array_recv", 2277, []uint32{2281, 26, 23}, true, 's'},
	{2401, "array_send", 17, []uint32{2277}, true, 's'},
	{2402, "record_recv", 2249, []uint32{2281, 26, 23}, true, 's'},
	{2403, "record_send", 17, []uint32{2249}, true, 's'},
	{2404, "int2recv", 21, []uint32{2281}, true, 'i'},
	{2405, "int2send", 17, []uint32{21}, true, 'i'},
	{2406, "int4recv", 23, []uint32{2281}, true, 'i'},
	{2407, "int4send", 17, []uint32{23}, true, 'i'},
	{2408, "int8recv", 20, []uint32{2281}, true, 'i'},
	{2409, "int8send", 17, []uint32{20}, true, 'i'},
	{2412, "bytearecv", 17, []uint32{2281}, true, 'i'},
	{2413, "byteasend", 17, []uint32{17}, true, 'i'},
	{2414, "textrecv", 25, []uint32{2281}, true, 's'},
	{2415, "textsend", 17, []uint32{25}, true, 's'},
	{2416, "unknownrecv", 705, []uint32{2281}, true, 'i'},
	{2417, "unknownsend", 17, []uint32{705}, true, 'i'},
	{2418, "oidrecv", 26, []uint32{2281}, true, 'i'},
	{2419, "oidsend", 17, []uint32{26}, true, 'i'},
	{2422, "namerecv", 19, []uint32{2281}, true, 's'},
	{2423, "namesend", 17, []uint32{19}, true, 's'},
	{2424, "float4recv", 700, []uint32{2281}, true, 'i'},
	{2425, "float4send", 17, []uint32{700}, true, 'i'},
	{2426, "float8recv", 701, []uint32{2281}, true, 'i'},
	{2427, "float8send", 17, []uint32{701}, true, 'i'},
	{2430, "bpcharrecv", 1042, []uint32{2281, 26, 23}, true, 's'},
	{2431, "bpcharsend", 17, []uint32{1042}, true, 's'},
	{2432, "varcharrecv", 1043, []uint32{2281, 26, 23}, true, 's'},
	{2433, "varcharsend", 17, []uint32{1043}, true, 's'},
	{2434, "charrecv", 18, []uint32{2281}, true, 'i'},
	{2435, "charsend", 17, []uint32{18}, true, 'i'},
	{2436, "boolrecv", 16, []uint32{2281}, true, 'i'},
	{2437, "boolsend", 17, []uint32{16}, true, 'i'},
	{2444, "regprocrecv", 24, []uint32{2281}, true, 'i'},
	{2445, "regprocsend", 17, []uint32{24}, true, 'i'},
	{2452, "regclassrecv", 2205, []uint32{2281}, true, 'i'},
	{2453, "regclasssend", 17, []uint32{2205}, true, 'i'},
	{2454, "regtyperecv", 2206, []uint32{2281}, true, 'i'},
	{2455, "regtypesend", 17, []uint32{2206}, true, 'i'},
	{2460, "numeric_recv", 1700, []uint32{2281, 26, 23}, true, 'i'},
	{2461, "numeric_send", 17, []uint32{1700}, true, 'i'},
	{2468, "date_recv", 1082, []uint32{2281}, true, 'i'},
	{2469, "date_send", 17, []uint32{1082}, true, 'i'},
	{2470, "time_recv", 1083, []uint32{2281, 26, 23}, true, 'i'},
	{2471, "time_send", 17, []uint32{1083}, true, 'i'},
	{2474, "timestamp_recv", 1114, []uint32{2281, 26, 23}, true, 'i'},
	{2475, "timestamp_send", 17, []uint32{1114}, true, 'i'},
	{2476, "timestamptz_recv", 1184, []uint32{2281, 26, 23}, true, 'i'},
	{2477, "timestamptz_send", 17, []uint32{1184}, true, 'i'},
	{2478, "interval_recv", 1186, []uint32{2281, 26, 23}, true, 'i'},
	{2479, "interval_send", 17, []uint32{1186}, true, 'i'},
	{2597, "domain_in", 2276, []uint32{2275, 26, 23}, false, 's'},
	{2598, "domain_recv", 2276, []uint32{2281, 26, 23}, false, 's'},
	{2903, "intervaltypmodin", 23, []uint32{1263}, true, 'i'},
	{2904, "intervaltypmodout", 2275, []uint32{23}, true, 'i'},
	{2905, "timestamptypmodin", 23, []uint32{1263}, true, 'i'},
	{2906, "timestamptypmodout", 2275, []uint32{23}, true, 'i'},
	{2907, "timestamptztypmodin", 23, []uint32{1263}, true, 'i'},
	{2908, "timestamptztypmodout", 2275, []uint32{23}, true, 'i'},
	{2909, "timetypmodin", 23, []uint32{1263}, true, 'i'},
	{2910, "timetypmodout", 2275, []uint32{23}, true, 'i'},
	{2913, "bpchartypmodin", 23, []uint32{1263}, true, 'i'},
	{2914, "bpchartypmodout", 2275, []uint32{23}, true, 'i'},
	{2915, "varchartypmodin", 23, []uint32{1263}, true, 'i'},
	{2916, "varchartypmodout", 2275, []uint32{23}, true, 'i'},
	{2917, "numerictypmodin", 23, []uint32{1263}, true, 'i'},
	{2918, "numerictypmodout", 2275, []uint32{23}, true, 'i'},
	{2952, "uuid_in", 2950, []uint32{2275}, true, 'i'},
	{2953, "uuid_out", 2275, []uint32{2950}, true, 'i'},
	{2961, "uuid_recv", 2950, []uint32{2281}, true, 'i'},
	{2962, "uuid_send", 17, []uint32{2950}, true, 'i'},
	{3120, "void_recv", 2278, []uint32{2281}, true, 'i'},
	{3121, "void_send", 17, []uint32{2278}, true, 'i'},
	{3803, "jsonb_send", 17, []uint32{3802}, true, 'i'},
	{3804, "jsonb_out", 2275, []uint32{3802}, true, 'i'},
	{3805, "jsonb_recv", 3802, []uint32{2281}, true, 'i'},
	{3806, "jsonb_in", 3802, []uint32{2275}, true, 'i'},
	{3816, "array_typanalyze", 16, []uint32{2281}, true, 's'},
	{6179, "array_subscript_handler", 2281, []uint32{2281}, true, 'i'},
	// the polymorphic pseudo-types' (types.AnyElement ...)
	{2296, "anyarray_in", 2277, []uint32{2275}, true, 'i'},
	{2297, "anyarray_out", 2275, []uint32{2277}, true, 's'},
	{2312, "anyelement_in", 2283, []uint32{2275}, true, 'i'},
	{2313, "anyelement_out", 2275, []uint32{2283}, true, 'i'},
	{2502, "anyarray_recv", 2277, []uint32{2281}, true, 's'},
	{2503, "anyarray_send", 17, []uint32{2277}, true, 's'},
	{2777, "anynonarray_in", 2776, []uint32{2275}, true, 'i'},
	{2778, "anynonarray_out", 2275, []uint32{2776}, true, 'i'},
	{5086, "anycompatible_in", 5077, []uint32{2275}, true, 'i'},
	{5087, "anycompatible_out", 2275, []uint32{5077}, true, 'i'},
	{5088, "anycompatiblearray_in", 5078, []uint32{2275}, true, 'i'},
	{5089, "anycompatiblearray_out", 2275, []uint32{5078}, true, 's'},
	{5090, "anycompatiblearray_recv", 5078, []uint32{2281}, true, 's'},
	{5091, "anycompatiblearray_send", 17, []uint32{5078}, true, 's'},
}

// procByOID finds a pg_proc entry.
func procByOID(oid uint32) *pgProc {
	for i := range pgProcs {
		if pgProcs[i].oid == oid {
			return &pgProcs[i]
		}
	}
	return nil
}

// pgTypes lists every type of package types as PostgreSQL 15 describes it.
var pgTypes = []pgType{
	{16, "bool", types.TBool, true, true, 'c', 'p', 0, [6]uint32{1242, 1243, 2436, 2437, 0, 0}},
	{17, "bytea", types.TBytea, false, false, 'i', 'x', 0, [6]uint32{1244, 31, 2412, 2413, 0, 0}},
	{18, "char", types.TChar, true, false, 'c', 'p', 0, [6]uint32{1245, 33, 2434, 2435, 0, 0}},
	{19, "name", types.TName, false, false, 'c', 'p', 950, [6]uint32{34, 35, 2422, 2423, 0, 0}},
	{20, "int8", types.TInt8, true, false, 'd', 'p', 0, [6]uint32{460, 461, 2408, 2409, 0, 0}},
	{21, "int2", types.TInt2, true, false, 's', 'p', 0, [6]uint32{38, 39, 2404, 2405, 0, 0}},
	{23, "int4", types.TInt4, true, false, 'i', 'p', 0, [6]uint32{42, 43, 2406, 2407, 0, 0}},
	{24, "regproc", types.TRegProc, true, false, 'i', 'p', 0, [6]uint32{44, 45, 2444, 2445, 0, 0}},
	{25, "text", types.TText, false, true, 'i', 'x', 100, [6]uint32{46, 47, 2414, 2415, 0, 0}},
	{26, "oid", types.TOid, true, true, 'i', 'p', 0, [6]uint32{1798, 1799, 2418, 2419, 0, 0}},
	{114, "json", types.TJSON, false, false, 'i', 'x', 0, [6]uint32{321, 322, 323, 324, 0, 0}},
	{700, "float4", types.TFloat4, true, false, 'i', 'p', 0, [6]uint32{200, 201, 2424, 2425, 0, 0}},
	{701, "float8", types.TFloat8, true, true, 'd', 'p', 0, [6]uint32{214, 215, 2426, 2427, 0, 0}},
	{705, "unknown", types.TUnknown, false, false, 'c', 'p', 0, [6]uint32{109, 110, 2416, 2417, 0, 0}},
	{1042, "bpchar", types.TBpchar, false, false, 'i', 'x', 100, [6]uint32{1044, 1045, 2430, 2431, 2913, 2914}},
	{1043, "varchar", types.TVarchar, false, false, 'i', 'x', 100, [6]uint32{1046, 1047, 2432, 2433, 2915, 2916}},
	{1082, "date", types.TDate, true, false, 'i', 'p', 0, [6]uint32{1084, 1085, 2468, 2469, 0, 0}},
	{1083, "time", types.TTime, true, false, 'd', 'p', 0, [6]uint32{1143, 1144, 2470, 2471, 2909, 2910}},
	{1114, "timestamp", types.TTimestamp, true, false, 'd', 'p', 0, [6]uint32{1312, 1313, 2474, 2475, 2905, 2906}},
	{1184, "timestamptz", types.TTimestampTZ, true, true, 'd', 'p', 0, [6]uint32{1150, 1151, 2476, 2477, 2907, 2908}},
	{1186, "interval", types.TInterval, false, true, 'd', 'p', 0, [6]uint32{1160, 1161, 2478, 2479, 2903, 2904}},
	{1700, "numeric", types.TNumeric, false, false, 'i', 'm', 0, [6]uint32{1701, 1702, 2460, 2461, 2917, 2918}},
	{2205, "regclass", types.TRegClass, true, false, 'i', 'p', 0, [6]uint32{2218, 2219, 2452, 2453, 0, 0}},
	{2206, "regtype", types.TRegType, true, false, 'i', 'p', 0, [6]uint32{2220, 2221, 2454, 2455, 0, 0}},
	{2278, "void", types.TVoid, true, false, 'i', 'p', 0, [6]uint32{2298, 2299, 3120, 3121, 0, 0}},
	{2950, "uuid", types.TUUID, false, false, 'c', 'p', 0, [6]uint32{2952, 2953, 2961, 2962, 0, 0}},
	{2277, "anyarray", types.T{Kind: types.AnyArray, Typmod: -1}, false, false, 'd', 'x', 0, [6]uint32{2296, 2297, 2502, 2503, 0, 0}},
	{2283, "anyelement", types.T{Kind: types.AnyElement, Typmod: -1}, true, false, 'i', 'p', 0, [6]uint32{2312, 2313, 0, 0, 0, 0}},
	{2776, "anynonarray", types.T{Kind: types.AnyNonArray, Typmod: -1}, true, false, 'i', 'p', 0, [6]uint32{2777, 2778, 0, 0, 0, 0}},
	{5077, "anycompatible", types.T{Kind: types.AnyCompatible, Typmod: -1}, true, false, 'i', 'p', 0, [6]uint32{5086, 5087, 0, 0, 0, 0}},
	{5078, "anycompatiblearray", types.T{Kind: types.AnyCompatibleArray, Typmod: -1}, false, false, 'd', 'x', 0, [6]uint32{5088, 5089, 5090, 5091, 0, 0}},
	{3802, "jsonb", types.TJSONB, false, false, 'i', 'x', 0, [6]uint32{3806, 3804, 3805, 3803, 0, 0}},
}

// arrayOID returns the OID of the array type over t (0 when none).
func arrayOID(t types.T) uint32 {
	if t.Kind == types.Unknown || t.Kind == types.Void || t.Kind == types.Array || t.Polymorphic() {
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
