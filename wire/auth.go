package wire

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/pgerr"
)

// Password authentication as PostgreSQL's "md5" pg_hba method does it:
// the server picks the exchange by the stored password. A SCRAM-SHA-256
// verifier (or a plain-text password, which Options.Passwords may return)
// gets SCRAM-SHA-256 (RFC 5802, RFC 7677): the client proves it knows the
// password without sending it, and the server proves it knows the verifier.
// An MD5 hash ("md5" + 32 hex digits) gets the MD5 challenge. Channel
// binding (SCRAM-SHA-256-PLUS) is not offered. An unknown user, a role
// without a password and a wrong password all end the same way: FATAL
// 28P01 after a full exchange, with nothing in the messages (salt,
// iteration count) that tells them apart.

const scramMechanism = "SCRAM-SHA-256"

// scramSecret is a parsed SCRAM-SHA-256 verifier.
type scramSecret struct {
	iterations           int
	salt                 []byte
	storedKey, serverKey []byte
}

// mockKey salts the fake verifiers of unknown users, so that one user name
// always gets the same salt within a server process (as PostgreSQL's
// scram_mock_salt).
var mockKey = func() (k [32]byte) {
	_, _ = rand.Read(k[:])
	return k
}()

// authenticate runs password authentication for user when the server has a
// password source; without one every user is trusted. Messages are
// limited to maxAuthMessage bytes meanwhile (conn.maxBody); a failure is
// delayed by the server's throttle (throttle.go).
//
// method is the hba rule's ("" without rules): trust skips the exchange,
// scram-sha-256 treats a role with an MD5 password like a wrong password.
func (c *conn) authenticate(user, method string) error {
	if method == "trust" || (method == "" && c.srv.opts.Passwords == nil) {
		return nil
	}
	stored, ok := "", false // a rule asks for a password the server cannot check: fail
	if c.srv.opts.Passwords != nil {
		stored, ok = c.srv.opts.Passwords(user)
	}
	if ok && method == "scram-sha-256" && isMD5Hash(stored) {
		ok, stored = false, "" // PostgreSQL: an MD5 password cannot do SCRAM
	}
	var err error
	if ok && isMD5Hash(stored) {
		err = c.md5(user, stored)
	} else {
		sec, valid := scramSecret{}, false
		if ok && stored != "" {
			sec, valid = parseSCRAMSecret(stored)
			if !valid { // a plain-text password
				sec, valid = secretFromPassword(stored), true
			}
		}
		if !valid {
			sec = mockSecret(user)
		}
		err = c.scram(sec)
		if err == nil && !valid {
			err = errAuthFailed
		}
	}
	if errors.Is(err, errAuthFailed) {
		if d := c.srv.throttle.failed(user, hostOf(c.raw.RemoteAddr())); d > 0 {
			c.srv.sleep(c.srv.ctx, d)
		}
		return c.fatal(pgerr.New(pgerr.InvalidPassword, "password authentication failed for user \"%s\"", user))
	}
	var tooBig *pgproto3.ExceededMaxBodyLenErr
	if errors.As(err, &tooBig) {
		return c.fatal(pgerr.New(pgerr.ProtocolViolation, "invalid message length"))
	}
	if err == nil {
		c.srv.throttle.succeeded(user)
	}
	if err != nil {
		var pe *pgerr.Error
		if errors.As(err, &pe) {
			return c.fatal(pe)
		}
		return err
	}
	return nil
}

var errAuthFailed = errors.New("auth: wrong password")

// isMD5Hash reports whether s is PostgreSQL's md5 stored password form.
func isMD5Hash(s string) bool {
	if len(s) != 35 || !strings.HasPrefix(s, "md5") {
		return false
	}
	_, err := hex.DecodeString(s[3:])
	return err == nil
}

// md5 runs the MD5 challenge: the client answers
// "md5" + md5(md5(password + user) + salt), computable from the stored hash.
func (c *conn) md5(user, stored string) error {
	var salt [4]byte
	_, _ = rand.Read(salt[:])
	c.be.Send(&pgproto3.AuthenticationMD5Password{Salt: salt})
	if err := c.flush(); err != nil {
		return err
	}
	_ = c.be.SetAuthType(pgproto3.AuthTypeMD5Password)
	msg, err := c.be.Receive()
	if err != nil {
		return err
	}
	pw, ok := msg.(*pgproto3.PasswordMessage)
	if !ok {
		return protocolError("expected password response, got message type %d", typeByte(msg))
	}
	sum := md5.Sum(append([]byte(stored[3:]), salt[:]...))
	want := "md5" + hex.EncodeToString(sum[:])
	if subtle.ConstantTimeCompare([]byte(pw.Password), []byte(want)) != 1 {
		return errAuthFailed
	}
	_ = c.be.SetAuthType(pgproto3.AuthTypeOk)
	return nil
}

// parseSCRAMSecret reads "SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>".
func parseSCRAMSecret(s string) (scramSecret, bool) {
	rest, ok := strings.CutPrefix(s, "SCRAM-SHA-256$")
	if !ok {
		return scramSecret{}, false
	}
	iterSalt, keys, ok := strings.Cut(rest, "$")
	iter, salt, ok1 := strings.Cut(iterSalt, ":")
	stored, server, ok2 := strings.Cut(keys, ":")
	if !ok || !ok1 || !ok2 {
		return scramSecret{}, false
	}
	var sec scramSecret
	var err error
	if sec.iterations, err = strconv.Atoi(iter); err != nil || sec.iterations <= 0 {
		return scramSecret{}, false
	}
	dec := base64.StdEncoding.DecodeString
	var e1, e2, e3 error
	sec.salt, e1 = dec(salt)
	sec.storedKey, e2 = dec(stored)
	sec.serverKey, e3 = dec(server)
	if e1 != nil || e2 != nil || e3 != nil || len(sec.storedKey) != sha256.Size || len(sec.serverKey) != sha256.Size {
		return scramSecret{}, false
	}
	return sec, true
}

// secretFromPassword derives a verifier from a plain-text password.
func secretFromPassword(password string) scramSecret {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	return deriveSecret(password, salt, scramDefaultIterations)
}

// scramDefaultIterations is PostgreSQL's scram_iterations default.
const scramDefaultIterations = 4096

func deriveSecret(password string, salt []byte, iterations int) scramSecret {
	salted, _ := pbkdf2.Key(sha256.New, password, salt, iterations, sha256.Size)
	stored := sha256.Sum256(hmacSHA256(salted, "Client Key"))
	return scramSecret{iterations: iterations, salt: salt, storedKey: stored[:], serverKey: hmacSHA256(salted, "Server Key")}
}

// mockSecret is the verifier an unknown user is checked against: a salt
// stable per user name and keys nothing matches.
func mockSecret(user string) scramSecret {
	salt := hmacSHA256(mockKey[:], "salt:"+user)[:16]
	keys := hmacSHA256(mockKey[:], "keys:"+user)
	return scramSecret{iterations: scramDefaultIterations, salt: salt, storedKey: keys, serverKey: keys}
}

// scram runs the message exchange against sec; errAuthFailed means a
// wrong proof.
func (c *conn) scram(sec scramSecret) error {
	c.be.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{scramMechanism}})
	if err := c.flush(); err != nil {
		return err
	}
	_ = c.be.SetAuthType(pgproto3.AuthTypeSASL)
	msg, err := c.be.Receive()
	if err != nil {
		return err
	}
	first, ok := msg.(*pgproto3.SASLInitialResponse)
	if !ok {
		return protocolError("expected SASL response, got message type %d", typeByte(msg))
	}
	if first.AuthMechanism != scramMechanism {
		return protocolError("client selected an invalid SASL authentication mechanism")
	}
	// client-first-message: gs2-header "n,," or "y,," then "n=user,r=nonce".
	clientFirst := string(first.Data)
	gs2, bare, ok := cutGS2(clientFirst)
	if !ok {
		return protocolError("malformed SCRAM message")
	}
	clientNonce := scramAttr(bare, 'r')
	if clientNonce == "" {
		return protocolError("malformed SCRAM message")
	}
	var snonce [18]byte
	_, _ = rand.Read(snonce[:])
	nonce := clientNonce + base64.StdEncoding.EncodeToString(snonce[:])
	serverFirst := "r=" + nonce + ",s=" + base64.StdEncoding.EncodeToString(sec.salt) + ",i=" + strconv.Itoa(sec.iterations)
	c.be.Send(&pgproto3.AuthenticationSASLContinue{Data: []byte(serverFirst)})
	if err := c.flush(); err != nil {
		return err
	}
	_ = c.be.SetAuthType(pgproto3.AuthTypeSASLContinue)
	msg, err = c.be.Receive()
	if err != nil {
		return err
	}
	final, ok := msg.(*pgproto3.SASLResponse)
	if !ok {
		return protocolError("expected SASL response, got message type %d", typeByte(msg))
	}
	// client-final-message: "c=<b64 gs2>,r=<nonce>,p=<b64 proof>".
	clientFinal := string(final.Data)
	i := strings.LastIndex(clientFinal, ",p=")
	if i < 0 {
		return protocolError("malformed SCRAM message")
	}
	withoutProof := clientFinal[:i]
	proof, err := base64.StdEncoding.DecodeString(clientFinal[i+3:])
	if err != nil || len(proof) != sha256.Size {
		return protocolError("malformed SCRAM message")
	}
	if scramAttr(withoutProof, 'c') != base64.StdEncoding.EncodeToString([]byte(gs2)) {
		return protocolError("SCRAM channel binding check failed")
	}
	if scramAttr(withoutProof, 'r') != nonce {
		return protocolError("SCRAM nonce mismatch")
	}
	authMessage := bare + "," + serverFirst + "," + withoutProof
	clientSig := hmacSHA256(sec.storedKey, authMessage)
	clientKey := make([]byte, sha256.Size)
	for j := range clientKey {
		clientKey[j] = proof[j] ^ clientSig[j]
	}
	check := sha256.Sum256(clientKey)
	if subtle.ConstantTimeCompare(check[:], sec.storedKey) != 1 {
		return errAuthFailed
	}
	serverSig := hmacSHA256(sec.serverKey, authMessage)
	c.be.Send(&pgproto3.AuthenticationSASLFinal{Data: []byte("v=" + base64.StdEncoding.EncodeToString(serverSig))})
	_ = c.be.SetAuthType(pgproto3.AuthTypeOk)
	return nil
}

// cutGS2 splits a client-first-message into its GS2 header ("n,," or
// "y,,"; channel binding "p=" is refused since it is not offered) and the
// bare message.
func cutGS2(msg string) (gs2, bare string, ok bool) {
	if len(msg) < 3 || (msg[0] != 'n' && msg[0] != 'y') || msg[1] != ',' {
		return "", "", false
	}
	j := strings.IndexByte(msg[2:], ',')
	if j < 0 {
		return "", "", false
	}
	return msg[:2+j+1], msg[2+j+1:], true
}

// scramAttr returns the value of attribute k ("k=value") in a SCRAM message.
func scramAttr(msg string, k byte) string {
	for _, part := range strings.Split(msg, ",") {
		if len(part) >= 2 && part[0] == k && part[1] == '=' {
			return part[2:]
		}
	}
	return ""
}

func hmacSHA256(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}
