package wire

import (
	"crypto/md5"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
)

// CheckPassword reports whether password is user's, against the stored
// form LoginPassword returns (a SCRAM-SHA-256 verifier or an MD5 hash):
// for logins that carry the password itself, such as HTTP basic
// authentication of the server's HTTP endpoints. An empty stored
// password (none, or expired) matches nothing. Safe for concurrent use;
// a SCRAM check costs one PBKDF2 derivation.
func CheckPassword(stored, user, password string) bool {
	if stored == "" || password == "" {
		return false
	}
	if isMD5Hash(stored) {
		sum := md5.Sum([]byte(password + user))
		return subtle.ConstantTimeCompare([]byte(stored[3:]), []byte(hex.EncodeToString(sum[:]))) == 1
	}
	sec, ok := parseSCRAMSecret(stored)
	if !ok {
		return false
	}
	got := deriveSecret(password, sec.salt, sec.iterations)
	return subtle.ConstantTimeCompare(got.storedKey, sec.storedKey) == 1 && len(sec.storedKey) == sha256.Size
}
