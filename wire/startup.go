package wire

import (
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/pgerr"
)

// ServerVersion is the server_version announced at startup unless the
// session reports its own. Clients (psql above all) pick their catalog
// queries by it, so it names the PostgreSQL release we answer like.
const ServerVersion = "15.0"

// Startup packet codes (the first int32 after the length).
const (
	protocolMajor3    = 3
	sslRequestCode    = 80877103
	gssEncRequestCode = 80877104
	cancelRequestCode = 80877102
	maxStartupPacket  = 10_000 // MAX_STARTUP_PACKET_LENGTH in PostgreSQL
)

// startup is what the client asked for in its StartupMessage.
type startup struct {
	user, database string
	params         map[string]string
}

// readStartup handles the connection's first packets: SSL and GSS
// encryption requests (declined with 'N'), a cancel request (served, then
// ok=false) and finally the protocol 3 StartupMessage. It reads straight
// from the socket, so nothing is buffered past the startup packet. The
// caller sets the deadline (authentication_timeout).
func (c *conn) readStartup() (st startup, ok bool, err error) {
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(c.nc, hdr[:]); err != nil {
			return st, false, err
		}
		n := int(int32(binary.BigEndian.Uint32(hdr[:]))) - 4
		if n < 4 || n > maxStartupPacket {
			return st, false, c.fatal(pgerr.New(pgerr.ProtocolViolation, "invalid length of startup packet"))
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(c.nc, body); err != nil {
			return st, false, err
		}
		code := binary.BigEndian.Uint32(body)
		switch {
		case code == sslRequestCode && c.srv.opts.TLSConfig != nil && c.nc == c.raw:
			if err := c.startTLS(); err != nil {
				return st, false, err
			}
		case code == sslRequestCode || code == gssEncRequestCode:
			if _, err := c.nc.Write([]byte{'N'}); err != nil {
				return st, false, err
			}
		case code == cancelRequestCode:
			if len(body) >= 12 {
				c.srv.cancelRequest(binary.BigEndian.Uint32(body[4:]), body[8:])
			}
			return st, false, nil
		case code>>16 == protocolMajor3:
			return c.startupMessage(code&0xffff, body[4:])
		default:
			return st, false, c.fatal(pgerr.Unsupported("unsupported frontend protocol %d.%d: server supports 3.0 to 3.0", code>>16, code&0xffff))
		}
	}
}

// startTLS accepts an SSLRequest ('S') and performs the TLS handshake; the
// rest of the connection runs over TLS.
func (c *conn) startTLS() error {
	if _, err := c.nc.Write([]byte{'S'}); err != nil {
		return err
	}
	tc := tls.Server(c.raw, c.srv.opts.TLSConfig)
	if err := tc.Handshake(); err != nil {
		return fmt.Errorf("tls handshake: %w", err)
	}
	c.nc = tc
	c.newBackend(tc)
	return nil
}

// startupMessage parses the name/value pairs of a protocol 3.minor startup
// packet. A minor version above 0 or "_pq_." options are answered with
// NegotiateProtocolVersion, and the connection continues with 3.0.
func (c *conn) startupMessage(minor uint32, b []byte) (st startup, ok bool, err error) {
	st.params = map[string]string{}
	var unknownOpts []string
	for len(b) > 0 && b[0] != 0 {
		k, rest, ok1 := cutNul(b)
		v, rest, ok2 := cutNul(rest)
		if !ok1 || !ok2 {
			return st, false, c.fatal(pgerr.New(pgerr.ProtocolViolation, "invalid startup packet layout: expected terminator as last byte"))
		}
		b = rest
		if strings.HasPrefix(k, "_pq_.") {
			unknownOpts = append(unknownOpts, k)
			continue
		}
		st.params[k] = v
	}
	for k, v := range splitOptions(st.params["options"]) {
		if _, set := st.params[k]; !set { // explicit parameters win, as in PostgreSQL
			st.params[k] = v
		}
	}
	if minor > 0 || len(unknownOpts) > 0 {
		c.be.Send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: unknownOpts})
	}
	st.user = st.params["user"]
	if st.user == "" {
		return st, false, c.fatal(pgerr.New(pgerr.InvalidAuthorizationSpec, "no PostgreSQL user name specified in startup packet"))
	}
	st.database = st.params["database"]
	if st.database == "" {
		st.database = st.user
	}
	return st, true, nil
}

// splitOptions reads the "options" startup parameter (libpq's PGOPTIONS):
// "-c name=value" and "--name=value" settings separated by spaces, with
// backslash escaping a space. Dashes in names become underscores. Other
// server switches are ignored.
func splitOptions(opts string) map[string]string {
	if opts == "" {
		return nil
	}
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(opts); i++ {
		ch := opts[i]
		switch {
		case ch == '\\' && i+1 < len(opts):
			i++
			w.WriteByte(opts[i])
			inWord = true
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	out := map[string]string{}
	for i := 0; i < len(words); i++ {
		var setting string
		switch word := words[i]; {
		case word == "-c" && i+1 < len(words):
			i++
			setting = words[i]
		case strings.HasPrefix(word, "-c") && len(word) > 2:
			setting = word[2:]
		case strings.HasPrefix(word, "--"):
			setting = word[2:]
		default:
			continue
		}
		name, value, ok := strings.Cut(setting, "=")
		if !ok || name == "" {
			continue
		}
		out[strings.ReplaceAll(name, "-", "_")] = value
	}
	return out
}

func cutNul(b []byte) (string, []byte, bool) {
	for i, ch := range b {
		if ch == 0 {
			return string(b[:i]), b[i+1:], true
		}
	}
	return "", nil, false
}

// greet sends what follows a successful startup: AuthenticationOk, every
// reportable parameter, BackendKeyData and the first ReadyForQuery.
func (c *conn) greet(st startup) error {
	c.be.Send(&pgproto3.AuthenticationOk{})
	for _, kv := range c.startupParams(st) {
		c.be.Send(&pgproto3.ParameterStatus{Name: kv[0], Value: kv[1]})
	}
	c.be.Send(&pgproto3.BackendKeyData{ProcessID: c.pid, SecretKey: c.secret[:]})
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: byte(c.sess.TxStatus())})
	return c.be.Flush()
}

// startupParams lists the reportable parameters in PostgreSQL's order
// (case-insensitive by name): the session's values where it has them,
// otherwise the wire's defaults.
func (c *conn) startupParams(st startup) [][2]string {
	tz := "UTC"
	if loc := c.sess.Format().Location; loc != nil {
		tz = loc.String()
	}
	vals := map[string]string{
		"application_name":              st.params["application_name"],
		"client_encoding":               "UTF8",
		"DateStyle":                     "ISO, MDY",
		"default_transaction_read_only": "off",
		"in_hot_standby":                "off",
		"integer_datetimes":             "on",
		"IntervalStyle":                 "postgres",
		"is_superuser":                  "on",
		"server_encoding":               "UTF8",
		"server_version":                ServerVersion,
		"session_authorization":         st.user,
		"standard_conforming_strings":   "on",
		"TimeZone":                      tz,
	}
	if strings.EqualFold(st.params["client_encoding"], "SQL_ASCII") {
		vals["client_encoding"] = "SQL_ASCII"
	}
	// The session's own values win; match names case-insensitively so that
	// "timezone" from the engine replaces "TimeZone" rather than doubling it.
	canon := map[string]string{}
	for k := range vals {
		canon[strings.ToLower(k)] = k
	}
	for k, v := range c.sess.ParamStatus() {
		if name, ok := canon[strings.ToLower(k)]; ok {
			k = name
		}
		vals[k] = v
	}
	out := make([][2]string, 0, len(vals))
	for k, v := range vals {
		out = append(out, [2]string{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i][0]) < strings.ToLower(out[j][0]) })
	return out
}

// fatal sends a FATAL ErrorResponse and returns an error that ends the
// connection.
func (c *conn) fatal(e *pgerr.Error) error {
	msg := errorResponse(e)
	msg.Severity, msg.SeverityUnlocalized = string(pgerr.SevFatal), string(pgerr.SevFatal)
	c.be.Send(msg)
	_ = c.be.Flush()
	return fmt.Errorf("connection closed: %s", e.Message)
}
