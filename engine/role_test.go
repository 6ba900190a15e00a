package engine

import (
	"context"
	"testing"
)

// TestSetRoleParamStatus: SET ROLE and SET SESSION AUTHORIZATION report
// is_superuser and session_authorization (ParameterStatus, as
// PostgreSQL's GUC_REPORT parameters), and a SET LOCAL outside a
// transaction block is a warning that changes nothing.
func TestSetRoleParamStatus(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	ctx := context.Background()
	mustRun(t, s, "CREATE ROLE ps_plain")
	res, err := exec1(ctx, s, "SET ROLE ps_plain")
	if err != nil {
		t.Fatal(err)
	}
	if res.ParamStatus["is_superuser"] != "off" || res.ParamStatus["session_authorization"] != "tester" {
		t.Fatalf("SET ROLE reported %v", res.ParamStatus)
	}
	res, err = exec1(ctx, s, "RESET ROLE")
	if err != nil || res.Tag != "RESET" || res.ParamStatus["is_superuser"] != "on" {
		t.Fatalf("RESET ROLE: %v %+v", err, res)
	}
	res, err = exec1(ctx, s, "SET SESSION AUTHORIZATION ps_plain")
	if err != nil || res.ParamStatus["session_authorization"] != "ps_plain" || res.ParamStatus["is_superuser"] != "off" {
		t.Fatalf("SET SESSION AUTHORIZATION: %v %+v", err, res)
	}
	if got := s.ParamStatus()["session_authorization"]; got != "ps_plain" {
		t.Fatalf("session's reported session_authorization %q", got)
	}
	if _, err := exec1(ctx, s, "RESET SESSION AUTHORIZATION"); err != nil {
		t.Fatal(err)
	}
	res, err = exec1(ctx, s, "SET LOCAL ROLE ps_plain")
	if err != nil || len(res.Notices) != 1 || res.Notices[0].Code != "25P01" || s.user != "tester" {
		t.Fatalf("SET LOCAL outside a block: %v %+v, user %q", err, res, s.user)
	}
}
