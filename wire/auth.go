package wire

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/pgerr"
)

// SCRAM-SHA-256 (RFC 5802, RFC 7677) as PostgreSQL does it: the server
// offers the mechanism, the client proves it knows the password without
// sending it, and the server proves it knows the password too. Channel
// binding (SCRAM-SHA-256-PLUS) is not offered.

const (
	scramMechanism  = "SCRAM-SHA-256"
	scramIterations = 4096 // PostgreSQL's scram_iterations default
)

// authenticate runs password authentication for user when the server has a
// password source; without one every user is trusted.
func (c *conn) authenticate(user string) error {
	if c.srv.opts.Passwords == nil {
		return nil
	}
	failed := pgerr.New(pgerr.InvalidPassword, "password authentication failed for user \"%s\"", user)
	password, ok := c.srv.opts.Passwords(user)
	if !ok {
		// Run the exchange anyway with a random password, so that an unknown
		// user looks like a wrong password.
		var b [18]byte
		_, _ = rand.Read(b[:])
		password = base64.StdEncoding.EncodeToString(b[:])
	}
	err := c.scram(password)
	if err == nil && !ok {
		err = errScramFailed
	}
	if errors.Is(err, errScramFailed) {
		return c.fatal(failed)
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

var errScramFailed = errors.New("scram: wrong password")

// scram runs the message exchange; errScramFailed means a wrong proof.
func (c *conn) scram(password string) error {
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
	var salt, snonce [18]byte
	_, _ = rand.Read(salt[:])
	_, _ = rand.Read(snonce[:])
	nonce := clientNonce + base64.StdEncoding.EncodeToString(snonce[:])
	serverFirst := "r=" + nonce + ",s=" + base64.StdEncoding.EncodeToString(salt[:]) + ",i=4096"
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

	salted, err := pbkdf2.Key(sha256.New, password, salt[:], scramIterations, sha256.Size)
	if err != nil {
		return err
	}
	clientKey := hmacSHA256(salted, "Client Key")
	storedKey := sha256.Sum256(clientKey)
	authMessage := bare + "," + serverFirst + "," + withoutProof
	clientSig := hmacSHA256(storedKey[:], authMessage)
	recovered := make([]byte, sha256.Size)
	for j := range recovered {
		recovered[j] = proof[j] ^ clientSig[j]
	}
	check := sha256.Sum256(recovered)
	if subtle.ConstantTimeCompare(check[:], storedKey[:]) != 1 {
		return errScramFailed
	}
	serverSig := hmacSHA256(hmacSHA256(salted, "Server Key"), authMessage)
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
