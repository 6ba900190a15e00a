package engine

import (
	"testing"
	"time"

	"github.com/streamsql/streamsql/pgerr"
)

func TestSettings(t *testing.T) {
	st, warns := newSettings("bob", map[string]string{"application_name": "psql", "DateStyle": "ISO, DMY", "client_encoding": "LATIN9"})
	if len(warns) != 1 {
		t.Fatalf("warnings: %v", warns)
	}
	if v, _ := st.get("APPLICATION_NAME"); v != "psql" {
		t.Fatalf("application_name %q", v)
	}
	if v, _ := st.get("datestyle"); v != "ISO, DMY" {
		t.Fatalf("DateStyle %q", v)
	}
	if name, err := st.set("timezone", "Europe/Paris"); err != nil || name != "TimeZone" {
		t.Fatalf("set TimeZone: %q %v", name, err)
	}
	if st.location().String() != "Europe/Paris" {
		t.Fatalf("location %v", st.location())
	}
	if _, err := st.set("nope", "1"); pgerr.CodeOf(err) != pgerr.UndefinedObject {
		t.Fatalf("unknown parameter: %v", err)
	}
	if _, err := st.set("server_version", "1"); pgerr.CodeOf(err) != pgerr.CantChangeRuntimeParam {
		t.Fatalf("read-only parameter: %v", err)
	}
	if _, err := st.set("extra_float_digits", "4"); pgerr.CodeOf(err) != pgerr.InvalidParameterValue {
		t.Fatalf("out of range: %v", err)
	}
	if _, err := st.set("statement_timeout", "1500"); err != nil || st.statementTimeout() != 1500*time.Millisecond {
		t.Fatalf("statement_timeout %v %v", st.statementTimeout(), err)
	}
	if _, err := st.set("search_path", `"My Schema", public`); err != nil {
		t.Fatal(err)
	}
	if sp := st.searchPath(); len(sp) != 2 || sp[0] != "My Schema" || sp[1] != "public" {
		t.Fatalf("search path %q", sp)
	}
}

func TestServerSettings(t *testing.T) {
	e, err := Open(Config{DataDir: t.TempDir(), ServerSettings: map[string]string{"max_connections": "7", "authentication_timeout": "90s", "TimeZone": "Asia/Tokyo"}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"max_connections": "7", "authentication_timeout": "90s", "superuser_reserved_connections": "3", "TimeZone": "UTC"} {
		if got := mustRun(t, s, "SHOW "+name); len(got) != 1 || got[0] != want {
			t.Errorf("SHOW %s = %v, want %s", name, got, want)
		}
	}
	got := mustRun(t, s, "SELECT setting || ' ' || unit FROM pg_settings WHERE name = 'authentication_timeout'")
	if len(got) != 1 || got[0] != "90 s" {
		t.Errorf("pg_settings authentication_timeout: %v", got)
	}
}

// TestDateStyleMerge: a style or an order alone keeps the other part, as in
// PostgreSQL; German alone implies DMY; conflicting parts are refused.
func TestDateStyleMerge(t *testing.T) {
	st, _ := newSettings("bob", nil)
	for _, c := range []struct{ set, want string }{
		{"Postgres", "Postgres, MDY"},
		{"dmy", "Postgres, DMY"},
		{"sql, ymd", "SQL, YMD"},
		{"iso", "ISO, YMD"},
		{"German", "German, DMY"},
		{"euro, postgres", "Postgres, DMY"},
		{"default", "ISO, MDY"},
	} {
		if _, err := st.set("DateStyle", c.set); err != nil {
			t.Fatalf("%s: %v", c.set, err)
		}
		if v, _ := st.get("datestyle"); v != c.want {
			t.Fatalf("after %q DateStyle is %q, want %q", c.set, v, c.want)
		}
	}
	for _, bad := range []string{"iso, sql", "mdy, dmy", "nonsense"} {
		if _, err := st.set("DateStyle", bad); pgerr.CodeOf(err) != pgerr.InvalidParameterValue {
			t.Fatalf("%q: %v", bad, err)
		}
	}
	if _, err := st.set("IntervalStyle", "SQL_Standard"); err != nil {
		t.Fatal(err)
	}
	if v, _ := st.get("intervalstyle"); v != "sql_standard" {
		t.Fatalf("IntervalStyle %q", v)
	}
}

// TestResetRestoresStartupValue: RESET goes back to the value the client's
// startup packet gave (PGDATESTYLE), not to the built-in default.
func TestResetRestoresStartupValue(t *testing.T) {
	st, _ := newSettings("bob", map[string]string{"DateStyle": "Postgres, MDY"})
	if _, err := st.set("DateStyle", "ymd"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.reset("datestyle"); err != nil {
		t.Fatal(err)
	}
	if v, _ := st.get("DateStyle"); v != "Postgres, MDY" {
		t.Fatalf("after RESET DateStyle is %q", v)
	}
}
