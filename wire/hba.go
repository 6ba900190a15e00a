package wire

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/streamsql/streamsql/pgerr"
)

// HBARule is one line of an hba file (ParseHBA), read like a line of
// PostgreSQL's pg_hba.conf:
//
//	host|hostssl|hostnossl  database  user  address  method
//
// database and user are comma-separated names or "all"; address is a CIDR
// block, a single IP address, or "all"; method is trust, reject, md5 or
// scram-sha-256 (the last two both run the password exchange picked by the
// stored password, as --auth password does; scram-sha-256 refuses roles
// whose password is stored as MD5). The first rule that matches a
// connection decides; with rules and none matching, the connection is
// refused. Immutable once parsed.
type HBARule struct {
	Line      int
	Type      string   // host, hostssl or hostnossl
	Databases []string // nil: all
	Users     []string // nil: all
	Net       *net.IPNet
	Method    string
}

// ParseHBA reads hba rules; "#" starts a comment, blank lines are skipped.
// Errors name the line.
func ParseHBA(r io.Reader) ([]HBARule, error) {
	var rules []HBARule
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 5 {
			return nil, fmt.Errorf("line %d: want \"type database user address method\", got %d fields", n, len(f))
		}
		rule := HBARule{Line: n, Type: f[0], Method: f[4]}
		switch rule.Type {
		case "host", "hostssl", "hostnossl":
		case "local", "hostgssenc", "hostnogssenc":
			return nil, fmt.Errorf("line %d: connection type %q is not supported (host, hostssl or hostnossl)", n, rule.Type)
		default:
			return nil, fmt.Errorf("line %d: invalid connection type %q", n, rule.Type)
		}
		if f[1] != "all" {
			rule.Databases = strings.Split(f[1], ",")
		}
		if f[2] != "all" {
			rule.Users = strings.Split(f[2], ",")
		}
		if f[3] != "all" {
			addr := f[3]
			if !strings.Contains(addr, "/") {
				if ip := net.ParseIP(addr); ip != nil && ip.To4() != nil {
					addr += "/32"
				} else {
					addr += "/128"
				}
			}
			_, ipnet, err := net.ParseCIDR(addr)
			if err != nil {
				return nil, fmt.Errorf("line %d: invalid address %q (an IP address, a CIDR block, or all; host names are not supported)", n, f[3])
			}
			rule.Net = ipnet
		}
		switch rule.Method {
		case "trust", "reject", "md5", "scram-sha-256":
		case "password":
			return nil, fmt.Errorf("line %d: method password (clear text) is not supported: use scram-sha-256 or md5", n)
		default:
			return nil, fmt.Errorf("line %d: authentication method %q is not supported (trust, reject, md5, scram-sha-256)", n, rule.Method)
		}
		rules = append(rules, rule)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("no rules: every connection would be refused")
	}
	return rules, nil
}

// NeedsPasswords reports whether some rule asks for a password.
func NeedsPasswords(rules []HBARule) bool {
	for _, r := range rules {
		if r.Method == "md5" || r.Method == "scram-sha-256" {
			return true
		}
	}
	return false
}

func listMatches(list []string, name string) bool {
	if list == nil {
		return true
	}
	for _, v := range list {
		if v == name {
			return true
		}
	}
	return false
}

// matchHBA returns the first rule for a connection; nil when none.
func matchHBA(rules []HBARule, tls bool, database, user string, ip net.IP) *HBARule {
	for i := range rules {
		r := &rules[i]
		if (r.Type == "hostssl" && !tls) || (r.Type == "hostnossl" && tls) {
			continue
		}
		if !listMatches(r.Databases, database) || !listMatches(r.Users, user) {
			continue
		}
		if r.Net != nil && (ip == nil || !r.Net.Contains(ip)) {
			continue
		}
		return r
	}
	return nil
}

// checkHBA applies Options.HBA (and RequireTLS) to a connection after its
// startup packet: the method to use ("" when the server's default
// applies), or a FATAL error with PostgreSQL's text.
func (c *conn) checkHBA(st startup) (method string, err *pgerr.Error) {
	tls := c.nc != c.raw
	enc := "no encryption"
	if tls {
		enc = "SSL encryption"
	}
	host := hostOf(c.raw.RemoteAddr())
	noEntry := pgerr.New(pgerr.InvalidAuthorizationSpec, "no pg_hba.conf entry for host \"%s\", user \"%s\", database \"%s\", %s", host, st.user, st.database, enc)
	if c.srv.opts.RequireTLS && !tls {
		return "", noEntry
	}
	if len(c.srv.opts.HBA) == 0 {
		return "", nil
	}
	var ip net.IP
	if ta, ok := c.raw.RemoteAddr().(*net.TCPAddr); ok {
		ip = ta.IP
	}
	r := matchHBA(c.srv.opts.HBA, tls, st.database, st.user, ip)
	switch {
	case r == nil:
		return "", noEntry
	case r.Method == "reject":
		return "", pgerr.New(pgerr.InvalidAuthorizationSpec, "pg_hba.conf rejects connection for host \"%s\", user \"%s\", database \"%s\", %s", host, st.user, st.database, enc)
	}
	return r.Method, nil
}
