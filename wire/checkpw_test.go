package wire

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"testing"
)

func TestCheckPassword(t *testing.T) {
	sec := secretFromPassword("s3cret")
	b := base64.StdEncoding.EncodeToString
	scram := fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", sec.iterations, b(sec.salt), b(sec.storedKey), b(sec.serverKey))
	sum := md5.Sum([]byte("s3cret" + "alice"))
	md := "md5" + hex.EncodeToString(sum[:])
	for _, c := range []struct {
		stored, user, pw string
		want             bool
	}{
		{scram, "alice", "s3cret", true},
		{scram, "alice", "wrong", false},
		{scram, "alice", "", false},
		{md, "alice", "s3cret", true},
		{md, "bob", "s3cret", false},
		{md, "alice", "S3cret", false},
		{"", "alice", "", false},
		{"garbage", "alice", "s3cret", false},
	} {
		if got := CheckPassword(c.stored, c.user, c.pw); got != c.want {
			t.Errorf("CheckPassword(%.20q, %q, %q) = %v", c.stored, c.user, c.pw, got)
		}
	}
}
