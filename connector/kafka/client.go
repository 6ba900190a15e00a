package kafka

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Client is the connection part of a source's or sink's options: the
// brokers and how to authenticate. It is immutable once parsed.
type Client struct {
	Brokers []string
	opts    []kgo.Opt
}

// ClientKeys are the option keys ParseClient reads (lower case).
var ClientKeys = []string{
	"properties.bootstrap.server", "properties.bootstrap.servers",
	"properties.security.protocol", "properties.sasl.mechanism",
	"properties.sasl.username", "properties.sasl.password",
	"properties.ssl.ca.location", "properties.client.id",
}

// ParseClient reads the connection options from opts (keys lower case) and
// marks each key it read in used, so that the caller can refuse the keys
// nobody read. Errors are 22023 errors naming the option.
func ParseClient(opts map[string]string, used map[string]bool) (Client, error) {
	get := func(k string) (string, bool) {
		v, ok := opts[k]
		if ok {
			used[k] = true
		}
		return v, ok
	}
	var c Client
	bs, ok1 := get("properties.bootstrap.server")
	bs2, ok2 := get("properties.bootstrap.servers")
	switch {
	case ok1 && ok2:
		return c, pgerr.New(pgerr.InvalidParameterValue, "give properties.bootstrap.server or properties.bootstrap.servers, not both")
	case ok2:
		bs = bs2
	case !ok1:
		return c, pgerr.New(pgerr.InvalidParameterValue, "the kafka connector needs properties.bootstrap.server").
			WithHint("For example: properties.bootstrap.server = '127.0.0.1:9092'.")
	}
	for _, b := range strings.Split(bs, ",") {
		if b = strings.TrimSpace(b); b != "" {
			c.Brokers = append(c.Brokers, b)
		}
	}
	if len(c.Brokers) == 0 {
		return c, pgerr.New(pgerr.InvalidParameterValue, "properties.bootstrap.server is empty")
	}
	c.opts = append(c.opts, kgo.SeedBrokers(c.Brokers...))
	if id, ok := get("properties.client.id"); ok {
		c.opts = append(c.opts, kgo.ClientID(id))
	} else {
		c.opts = append(c.opts, kgo.ClientID("streamsql"))
	}

	proto, _ := get("properties.security.protocol")
	proto = strings.ToUpper(strings.TrimSpace(proto))
	var useTLS, useSASL bool
	switch proto {
	case "", "PLAINTEXT":
	case "SSL":
		useTLS = true
	case "SASL_PLAINTEXT":
		useSASL = true
	case "SASL_SSL":
		useTLS, useSASL = true, true
	default:
		return c, pgerr.New(pgerr.InvalidParameterValue, "unknown properties.security.protocol %q", proto).
			WithHint("Use PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.")
	}
	ca, hasCA := get("properties.ssl.ca.location")
	if hasCA && !useTLS {
		return c, pgerr.New(pgerr.InvalidParameterValue, "properties.ssl.ca.location needs properties.security.protocol SSL or SASL_SSL")
	}
	if useTLS {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if hasCA {
			pem, err := os.ReadFile(ca)
			if err != nil {
				return c, pgerr.New(pgerr.InvalidParameterValue, "properties.ssl.ca.location: %v", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return c, pgerr.New(pgerr.InvalidParameterValue, "properties.ssl.ca.location: no PEM certificate in %s", ca)
			}
			cfg.RootCAs = pool
		}
		c.opts = append(c.opts, kgo.DialTLSConfig(cfg))
	}
	mech, hasMech := get("properties.sasl.mechanism")
	user, hasUser := get("properties.sasl.username")
	pass, hasPass := get("properties.sasl.password")
	if !useSASL {
		if hasMech || hasUser || hasPass {
			return c, pgerr.New(pgerr.InvalidParameterValue, "properties.sasl.* options need properties.security.protocol SASL_PLAINTEXT or SASL_SSL")
		}
		return c, nil
	}
	if !hasUser || !hasPass {
		return c, pgerr.New(pgerr.InvalidParameterValue, "SASL needs properties.sasl.username and properties.sasl.password")
	}
	switch strings.ToUpper(strings.TrimSpace(mech)) {
	case "", "PLAIN":
		c.opts = append(c.opts, kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism()))
	case "SCRAM-SHA-256":
		c.opts = append(c.opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()))
	case "SCRAM-SHA-512":
		c.opts = append(c.opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()))
	default:
		return c, pgerr.New(pgerr.InvalidParameterValue, "unknown properties.sasl.mechanism %q", mech).
			WithHint("Use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.")
	}
	return c, nil
}

// Opts are the franz-go options that connect as c says; callers append
// their own (the caller owns the returned slice).
func (c Client) Opts() []kgo.Opt { return append([]kgo.Opt(nil), c.opts...) }
