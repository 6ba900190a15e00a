package engine

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// ServerVersion is the PostgreSQL version streamsql reports. Drivers and
// psql choose their catalog queries by it, so it names the release whose
// catalogs we emulate.
const ServerVersion = "15.0"

// ServerVersionNum is server_version_num.
const ServerVersionNum = "150000"

// setting describes one run-time parameter.
type setting struct {
	name       string // canonical spelling, as SHOW and ParameterStatus print it
	def        string
	reportable bool // sent as ParameterStatus when it changes
	readOnly   bool
	// check normalizes a new value or rejects it.
	check func(v string) (string, error)
}

var settingList = []setting{
	{name: "application_name", def: "", reportable: true},
	{name: "client_encoding", def: "UTF8", reportable: true, check: checkEncoding},
	{name: "DateStyle", def: "ISO, MDY", reportable: true},
	{name: "IntervalStyle", def: "postgres", reportable: true, check: checkIntervalStyle},
	{name: "TimeZone", def: "UTC", reportable: true, check: checkTimeZone},
	{name: "extra_float_digits", def: "1", check: checkIntRange("extra_float_digits", -15, 3)},
	{name: "search_path", def: `"$user", public`},
	{name: "statement_timeout", def: "0", check: checkDuration("statement_timeout")},
	{name: "lock_timeout", def: "0", check: checkDuration("lock_timeout")},
	{name: "idle_in_transaction_session_timeout", def: "0", check: checkDuration("idle_in_transaction_session_timeout")},
	// standard_conforming_strings = off: the wire layer parses with
	// sql.ParseNonStandard (Session.StringLiterals).
	{name: "standard_conforming_strings", def: "on", reportable: true, check: checkBool},
	{name: "integer_datetimes", def: "on", reportable: true, readOnly: true},
	{name: "server_version", def: ServerVersion, reportable: true, readOnly: true},
	{name: "server_version_num", def: ServerVersionNum, readOnly: true},
	{name: "server_encoding", def: "UTF8", reportable: true, readOnly: true},
	{name: "is_superuser", def: "on", reportable: true, readOnly: true},
	{name: "session_authorization", def: "", reportable: true, readOnly: true},
	{name: "default_transaction_read_only", def: "off", reportable: true, check: checkBool},
	{name: "in_hot_standby", def: "off", reportable: true, readOnly: true},
	{name: "transaction_isolation", def: "read committed"},
	{name: "default_transaction_isolation", def: "read committed"},
	{name: "transaction_read_only", def: "off", check: checkBool},
	{name: "bytea_output", def: "hex", check: checkByteaOutput},
	{name: "max_identifier_length", def: "63", readOnly: true},
	{name: "lc_collate", def: "C.UTF-8", readOnly: true},
	{name: "lc_ctype", def: "C.UTF-8", readOnly: true},
	{name: "lc_messages", def: "C.UTF-8"},
	{name: "lc_monetary", def: "C.UTF-8"},
	{name: "lc_numeric", def: "C.UTF-8"},
	{name: "lc_time", def: "C.UTF-8"},
	{name: "client_min_messages", def: "notice"},
	{name: "timezone_abbreviations", def: "Default"},
	{name: "row_security", def: "on"},
	{name: "synchronous_commit", def: "on"},
	{name: "work_mem", def: "4MB", check: checkMemory("work_mem", 64, math.MaxInt32)},
	// statement_mem_limit bounds one statement's memory (0: the server's
	// --query-memory-limit); it can only lower the server's limit.
	{name: "statement_mem_limit", def: "0", check: checkMemory("statement_mem_limit", 0, math.MaxInt32)},
	{name: "max_connections", def: "100", readOnly: true},
	{name: "superuser_reserved_connections", def: "3", readOnly: true},
	{name: "authentication_timeout", def: "1min", readOnly: true},
	{name: "block_size", def: "8192", readOnly: true},
	{name: "enable_seqscan", def: "on"},
	// Planner settings PostgreSQL users and tools send: accepted and shown,
	// they change no plan (docs/sql.md).
	{name: "constraint_exclusion", def: "partition"},
	{name: "cpu_index_tuple_cost", def: "0.005", check: checkReal("cpu_index_tuple_cost")},
	{name: "cpu_operator_cost", def: "0.0025", check: checkReal("cpu_operator_cost")},
	{name: "cpu_tuple_cost", def: "0.01", check: checkReal("cpu_tuple_cost")},
	{name: "cursor_tuple_fraction", def: "0.1", check: checkReal("cursor_tuple_fraction")},
	{name: "default_statistics_target", def: "100", check: checkIntRange("default_statistics_target", -1, math.MaxInt32)},
	{name: "effective_cache_size", def: "4GB"},
	{name: "enable_async_append", def: "on", check: checkBool},
	{name: "enable_bitmapscan", def: "on", check: checkBool},
	{name: "enable_gathermerge", def: "on", check: checkBool},
	{name: "enable_hashagg", def: "on", check: checkBool},
	{name: "enable_hashjoin", def: "on", check: checkBool},
	{name: "enable_incremental_sort", def: "on", check: checkBool},
	{name: "enable_indexonlyscan", def: "on", check: checkBool},
	{name: "enable_indexscan", def: "on", check: checkBool},
	{name: "enable_material", def: "on", check: checkBool},
	{name: "enable_memoize", def: "on", check: checkBool},
	{name: "enable_mergejoin", def: "on", check: checkBool},
	{name: "enable_nestloop", def: "on", check: checkBool},
	{name: "enable_parallel_append", def: "on", check: checkBool},
	{name: "enable_parallel_hash", def: "on", check: checkBool},
	{name: "enable_partition_pruning", def: "on", check: checkBool},
	{name: "enable_partitionwise_aggregate", def: "off", check: checkBool},
	{name: "enable_partitionwise_join", def: "off", check: checkBool},
	{name: "enable_sort", def: "on", check: checkBool},
	{name: "enable_tidscan", def: "on", check: checkBool},
	{name: "force_parallel_mode", def: "off", check: checkForceParallelMode},
	{name: "from_collapse_limit", def: "8", check: checkIntRange("from_collapse_limit", -1, math.MaxInt32)},
	{name: "geqo_threshold", def: "12", check: checkIntRange("geqo_threshold", -1, math.MaxInt32)},
	{name: "jit_above_cost", def: "100000", check: checkReal("jit_above_cost")},
	{name: "jit_inline_above_cost", def: "500000", check: checkReal("jit_inline_above_cost")},
	{name: "jit_optimize_above_cost", def: "500000", check: checkReal("jit_optimize_above_cost")},
	{name: "join_collapse_limit", def: "8", check: checkIntRange("join_collapse_limit", -1, math.MaxInt32)},
	{name: "max_parallel_workers", def: "8", check: checkIntRange("max_parallel_workers", -1, math.MaxInt32)},
	{name: "max_parallel_workers_per_gather", def: "2", check: checkIntRange("max_parallel_workers_per_gather", -1, math.MaxInt32)},
	{name: "min_parallel_index_scan_size", def: "512kB"},
	{name: "min_parallel_table_scan_size", def: "8MB"},
	{name: "parallel_leader_participation", def: "on", check: checkBool},
	{name: "parallel_setup_cost", def: "1000", check: checkReal("parallel_setup_cost")},
	{name: "parallel_tuple_cost", def: "0.1", check: checkReal("parallel_tuple_cost")},
	{name: "plan_cache_mode", def: "auto"},
	{name: "random_page_cost", def: "4", check: checkReal("random_page_cost")},
	{name: "seq_page_cost", def: "1", check: checkReal("seq_page_cost")},
	{name: "jit", def: "off"},
	{name: "geqo", def: "on"},
	{name: "escape_string_warning", def: "on", check: checkBool},
	// streaming_parallelism is the instances of each keyed operator of
	// the materialized views, sinks and subscriptions created next
	// (parallel.go); the default is the server's --streaming-parallelism.
	{name: "streaming_parallelism", def: "1", check: checkParallelism},
	// streaming_split_distinct: whether an aggregation with
	// count(DISTINCT ...) is planned as a split-distinct aggregation
	// (on; off; auto, the default: at parallelism 4 or more, when it
	// would otherwise run as one instance; planner/stream_splitdistinct.go).
	{name: "streaming_split_distinct", def: planner.SplitDistinctAuto, check: planner.CheckSplitDistinct},
	// streaming_progress_notices: CREATE MATERIALIZED VIEW and CREATE
	// SINK send a NOTICE with the backfill's progress every second
	// while they wait for it (jobs.go).
	{name: "streaming_progress_notices", def: "off", check: checkBool},
	{name: "password_encryption", def: "scram-sha-256", check: checkPasswordEncryption},
}

// settingsByLower indexes settingList by lower-case name.
var settingsByLower = func() map[string]*setting {
	m := make(map[string]*setting, len(settingList))
	for i := range settingList {
		s := &settingList[i]
		m[strings.ToLower(s.name)] = s
	}
	return m
}()

// settings is one session's parameter values. Not safe for concurrent use.
type settings struct {
	vals map[string]string // by lower-case name
	// defs are the server's defaults that differ from setting.def (by
	// lower-case name): what RESET restores.
	defs map[string]string
	// explicit are the parameters a SET or a startup parameter gave a
	// value (by lower-case name), until RESET.
	explicit map[string]bool
	// tempSchema is the session's temporary schema (pg_temp_N) once it
	// has one (temp.go): searchPath puts it first, or where the path
	// names pg_temp.
	tempSchema string
}

func newSettings(user string, startup map[string]string) (*settings, []*pgerr.Error) {
	st := &settings{vals: make(map[string]string, len(settingList)), defs: map[string]string{}}
	for _, s := range settingsByLower {
		st.vals[strings.ToLower(s.name)] = s.def
	}
	st.vals["session_authorization"] = user
	var warnings []*pgerr.Error
	for k, v := range startup {
		switch strings.ToLower(k) {
		case "user", "database", "replication", "options":
			continue
		}
		if _, err := st.set(k, v); err == nil {
			// RESET restores the session's starting value, as in PostgreSQL
			st.defs[strings.ToLower(k)] = st.vals[strings.ToLower(k)]
		} else {
			// PostgreSQL refuses the connection for bad startup parameters;
			// we keep serving and report what was ignored.
			w := pgerr.New(pgerr.Warning, "ignoring startup parameter %q: %v", k, err)
			w.Severity = pgerr.SevWarning
			warnings = append(warnings, w)
		}
	}
	return st, warnings
}

// get returns a parameter's value.
func (st *settings) get(name string) (string, bool) {
	v, ok := st.vals[strings.ToLower(name)]
	return v, ok
}

// set changes a parameter, returning its canonical name when it is reportable
// (so the caller sends ParameterStatus).
func (st *settings) set(name, value string) (reported string, err error) {
	s, ok := settingsByLower[strings.ToLower(name)]
	if !ok {
		if strings.Contains(name, ".") { // custom placeholder variables (a.b) are allowed
			st.vals[strings.ToLower(name)] = value
			return "", nil
		}
		return "", pgerr.New(pgerr.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	if s.readOnly {
		return "", pgerr.New(pgerr.CantChangeRuntimeParam, "parameter %q cannot be changed", s.name)
	}
	if s.name == "DateStyle" { // a style or an order alone keeps the other part
		if value, err = mergeDateStyle(st.vals["datestyle"], value); err != nil {
			return "", err
		}
	} else if s.check != nil {
		if value, err = s.check(value); err != nil {
			return "", err
		}
	}
	st.vals[strings.ToLower(s.name)] = value
	if st.explicit == nil {
		st.explicit = map[string]bool{}
	}
	st.explicit[strings.ToLower(s.name)] = true
	if s.reportable {
		return s.name, nil
	}
	return "", nil
}

// reset restores a parameter's default.
func (st *settings) reset(name string) (string, error) {
	s, ok := settingsByLower[strings.ToLower(name)]
	if !ok {
		return "", pgerr.New(pgerr.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	if s.readOnly {
		return "", pgerr.New(pgerr.CantChangeRuntimeParam, "parameter %q cannot be changed", s.name)
	}
	st.vals[strings.ToLower(s.name)] = s.def
	delete(st.explicit, strings.ToLower(s.name))
	if d, ok := st.defs[strings.ToLower(s.name)]; ok {
		st.vals[strings.ToLower(s.name)] = d
	}
	if s.reportable {
		return s.name, nil
	}
	return "", nil
}

// all returns (name, value) pairs sorted by name, for SHOW ALL and pg_settings.
func (st *settings) all() [][2]string {
	out := make([][2]string, 0, len(settingsByLower))
	for _, s := range settingsByLower {
		out = append(out, [2]string{s.name, st.vals[strings.ToLower(s.name)]})
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i][0]) < strings.ToLower(out[j][0]) })
	return out
}

// reportable returns every reportable parameter's value.
func (st *settings) reportable() map[string]string {
	m := make(map[string]string)
	for _, s := range settingsByLower {
		if s.reportable {
			m[s.name] = st.vals[strings.ToLower(s.name)]
		}
	}
	return m
}

// format derives the text formatting options.
func (st *settings) format() types.FormatOptions {
	f := types.DefaultFormat
	f.Location = st.location()
	f.ExtraFloatDigits, _ = strconv.Atoi(st.vals["extra_float_digits"])
	f.DateStyle = st.vals["datestyle"]
	f.IntervalStyle = st.vals["intervalstyle"]
	f.ByteaOutput = st.vals["bytea_output"]
	return f
}

func (st *settings) location() *time.Location {
	loc, err := loadLocation(st.vals["timezone"])
	if err != nil {
		return time.UTC
	}
	return loc
}

// searchPath returns the schemas of search_path, unquoted; "$user" is dropped
// (no per-user schemas exist).
func (st *settings) searchPath() []string {
	var out []string
	for _, p := range strings.Split(st.vals["search_path"], ",") {
		p = strings.TrimSpace(p)
		if strings.HasPrefix(p, `"`) && strings.HasSuffix(p, `"`) && len(p) >= 2 {
			p = strings.ReplaceAll(p[1:len(p)-1], `""`, `"`)
		} else {
			p = strings.ToLower(p)
		}
		if p == "" || p == "$user" {
			continue
		}
		if p == "pg_temp" && st.tempSchema != "" {
			p = st.tempSchema
		}
		out = append(out, p)
	}
	if st.tempSchema != "" && !slices.Contains(out, st.tempSchema) {
		out = append([]string{st.tempSchema}, out...)
	}
	return out
}

// parallelWorkers is how many goroutines one batch operator (a GROUP BY
// HashAgg, a HashJoin's probe) may use: itself plus
// max_parallel_workers_per_gather helpers, no more than
// max_parallel_workers allows (as PostgreSQL's Gather plans its workers);
// exec caps it at GOMAXPROCS. 0 for either setting runs serially.
func (st *settings) parallelWorkers() int {
	per, err1 := strconv.Atoi(strings.TrimSpace(st.vals["max_parallel_workers_per_gather"]))
	all, err2 := strconv.Atoi(strings.TrimSpace(st.vals["max_parallel_workers"]))
	if err1 != nil || err2 != nil || per <= 0 || all == 0 {
		return 1
	}
	if all > 0 {
		per = min(per, all)
	}
	return 1 + per
}

// statementTimeout returns statement_timeout (0 = none).
func (st *settings) statementTimeout() time.Duration {
	d, _ := parseDuration(st.vals["statement_timeout"])
	return d
}

func checkEncoding(v string) (string, error) {
	switch strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(v), "-", "")) {
	case "UTF8", "UNICODE":
		return "UTF8", nil
	case "SQL_ASCII":
		return "SQL_ASCII", nil
	}
	return "", pgerr.New(pgerr.FeatureNotSupported, "client encoding %q is not supported; streamsql speaks UTF8", v).
		WithHint("Use client_encoding UTF8.")
}

// mergeDateStyle applies a DateStyle value to the current one as
// PostgreSQL does: a style (ISO, Postgres, SQL, German) or an order (MDY,
// DMY, YMD) given alone keeps the other part; German alone implies DMY;
// two different styles or orders in one value conflict.
func mergeDateStyle(cur, v string) (string, error) {
	style, order := "ISO", "MDY"
	if f := strings.Split(cur, ","); len(f) == 2 {
		style, order = strings.TrimSpace(f[0]), strings.TrimSpace(f[1])
	}
	newStyle, newOrder := "", ""
	conflict := false
	setStyle := func(s string) {
		conflict = conflict || newStyle != "" && newStyle != s
		newStyle = s
	}
	setOrder := func(o string) {
		conflict = conflict || newOrder != "" && newOrder != o
		newOrder = o
	}
	for _, part := range strings.Split(v, ",") {
		switch strings.ToUpper(strings.TrimSpace(part)) {
		case "ISO":
			setStyle("ISO")
		case "SQL":
			setStyle("SQL")
		case "POSTGRES":
			setStyle("Postgres")
		case "GERMAN":
			setStyle("German")
		case "MDY", "US", "NONEURO", "NONEUROPEAN":
			setOrder("MDY")
		case "DMY", "EURO", "EUROPEAN":
			setOrder("DMY")
		case "YMD":
			setOrder("YMD")
		case "DEFAULT":
			setStyle("ISO")
			setOrder("MDY")
		default:
			return "", pgerr.New(pgerr.InvalidParameterValue, "invalid value for parameter \"DateStyle\": \"%s\"", v).
				WithDetail("Unrecognized key word: \"%s\".", strings.TrimSpace(part))
		}
	}
	if conflict {
		return "", pgerr.New(pgerr.InvalidParameterValue, "invalid value for parameter \"DateStyle\": \"%s\"", v).
			WithDetail("Conflicting \"datestyle\" specifications.")
	}
	if newStyle == "German" && newOrder == "" {
		newOrder = "DMY"
	}
	if newStyle != "" {
		style = newStyle
	}
	if newOrder != "" {
		order = newOrder
	}
	return style + ", " + order, nil
}

func checkByteaOutput(v string) (string, error) {
	switch s := strings.ToLower(strings.TrimSpace(v)); s {
	case "hex", "escape":
		return s, nil
	}
	return "", pgerr.New(pgerr.InvalidParameterValue, "invalid value for parameter \"bytea_output\": \"%s\"", v).
		WithHint("Available values: escape, hex.")
}

func checkForceParallelMode(v string) (string, error) {
	switch s := strings.ToLower(strings.TrimSpace(v)); s {
	case "off", "on", "regress":
		return s, nil
	}
	return "", pgerr.New(pgerr.InvalidParameterValue, "invalid value for parameter \"force_parallel_mode\": \"%s\"", v).
		WithHint("Available values: off, on, regress.")
}

func checkIntervalStyle(v string) (string, error) {
	switch s := strings.ToLower(strings.TrimSpace(v)); s {
	case "postgres", "iso_8601", "sql_standard", "postgres_verbose":
		return s, nil
	}
	return "", pgerr.New(pgerr.InvalidParameterValue, "invalid value for parameter \"IntervalStyle\": \"%s\"", v).
		WithHint("Available values: postgres, postgres_verbose, sql_standard, iso_8601.")
}

func checkTimeZone(v string) (string, error) {
	name := strings.TrimSpace(v)
	if _, err := loadLocation(name); err != nil {
		return "", pgerr.New(pgerr.InvalidParameterValue, "invalid value for parameter \"TimeZone\": %q", v)
	}
	if strings.EqualFold(name, "utc") {
		return "UTC", nil
	}
	return name, nil
}

// loadLocation resolves a TimeZone value: IANA names, UTC/GMT/Z, and
// numeric offsets (hours east of UTC, as SET TIME ZONE 5 means).
func loadLocation(name string) (*time.Location, error) {
	switch strings.ToLower(name) {
	case "utc", "gmt", "z", "zulu", "", "localtime":
		return time.UTC, nil
	}
	if h, err := strconv.ParseFloat(name, 64); err == nil {
		return time.FixedZone(name, int(h*3600)), nil
	}
	return time.LoadLocation(name)
}

func checkIntRange(name string, lo, hi int) func(string) (string, error) {
	return func(v string) (string, error) {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return "", pgerr.New(pgerr.InvalidParameterValue, "invalid value for parameter %q: %q", name, v)
		}
		if n < lo || n > hi {
			return "", pgerr.New(pgerr.InvalidParameterValue, "%d is outside the valid range for parameter %q (%d .. %d)", n, name, lo, hi)
		}
		return strconv.Itoa(n), nil
	}
}

func checkDuration(name string) func(string) (string, error) {
	return func(v string) (string, error) {
		d, err := parseDuration(v)
		if err != nil || d < 0 {
			return "", pgerr.New(pgerr.InvalidParameterValue, "invalid value for parameter %q: %q", name, v)
		}
		if d == 0 {
			return "0", nil
		}
		if d%time.Second == 0 {
			return strconv.FormatInt(int64(d/time.Second), 10) + "s", nil
		}
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms", nil
	}
}

// parseDuration reads PostgreSQL time settings: a bare number is
// milliseconds; units us, ms, s, min, h, d.
func parseDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	i := 0
	for i < len(v) && (v[i] >= '0' && v[i] <= '9' || v[i] == '.') {
		i++
	}
	n, err := strconv.ParseFloat(v[:i], 64)
	if err != nil {
		return 0, err
	}
	unit := time.Millisecond
	switch strings.ToLower(strings.TrimSpace(v[i:])) {
	case "", "ms":
	case "us":
		unit = time.Microsecond
	case "s":
		unit = time.Second
	case "min":
		unit = time.Minute
	case "h":
		unit = time.Hour
	case "d":
		unit = 24 * time.Hour
	default:
		return 0, strconv.ErrSyntax
	}
	return time.Duration(n * float64(unit)), nil
}

// checkReal accepts a floating-point value (a planner cost).
func checkReal(name string) func(string) (string, error) {
	return func(v string) (string, error) {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return "", pgerr.New(pgerr.InvalidParameterValue, "invalid value for parameter \"%s\": \"%s\"", name, v)
		}
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	}
}

func checkBool(v string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on", "true", "yes", "1", "t":
		return "on", nil
	case "off", "false", "no", "0", "f":
		return "off", nil
	}
	return "", pgerr.New(pgerr.InvalidParameterValue, "parameter requires a Boolean value")
}
