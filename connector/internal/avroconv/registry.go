package avroconv

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/twmb/franz-go/pkg/sr"
)

// RegistryOptions are the option keys ParseRegistry reads.
var RegistryOptions = []string{"schema.registry", "schema.registry.username", "schema.registry.password"}

// RegistryConfig is a validated schema registry address.
type RegistryConfig struct {
	URLs           string // comma-separated, validated
	User, Password string
}

// ParseRegistry reads the schema.registry options from opts (marking them
// in used). A missing or malformed URL is a 22023 error naming the option.
func ParseRegistry(opts map[string]string, used map[string]bool) (RegistryConfig, error) {
	var c RegistryConfig
	v, ok := opts["schema.registry"]
	if !ok || strings.TrimSpace(v) == "" {
		return c, pgerr.New(pgerr.InvalidParameterValue, `ENCODE AVRO needs the option "schema.registry"`).
			WithHint("For example ENCODE AVRO (schema.registry = 'http://127.0.0.1:8081').")
	}
	used["schema.registry"] = true
	for _, u := range strings.Split(v, ",") {
		u = strings.TrimSpace(u)
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return c, pgerr.New(pgerr.InvalidParameterValue, "invalid value for option \"schema.registry\": %q", u).
				WithDetail("It must be an http:// or https:// URL (several separated by commas).")
		}
		if c.URLs != "" {
			c.URLs += ","
		}
		c.URLs += strings.TrimRight(u, "/")
	}
	user, hasUser := opts["schema.registry.username"]
	pass, hasPass := opts["schema.registry.password"]
	if hasUser != hasPass {
		return c, pgerr.New(pgerr.InvalidParameterValue, "schema.registry.username and schema.registry.password go together")
	}
	used["schema.registry.username"], used["schema.registry.password"] = hasUser, hasPass
	c.User, c.Password = user, pass
	return c, nil
}

// requestTimeout bounds one registry request.
const requestTimeout = 10 * time.Second

// Registry is a schema registry client with caches: schemas by id (ids
// never change meaning) and ids by subject and schema text. Safe for
// concurrent use.
type Registry struct {
	cl *sr.Client

	mu      sync.Mutex
	byID    map[int]avro.Schema
	byText  map[string]int // subject + "\x00" + schema text -> id
	fetches int            // registry round trips made
}

// Requests is the number of requests made to the registry so far (the
// caches answer the others).
func (r *Registry) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fetches
}

// NewRegistry returns a client of c's registry; it does not connect.
func NewRegistry(c RegistryConfig) (*Registry, error) {
	opts := []sr.ClientOpt{sr.URLs(strings.Split(c.URLs, ",")...), sr.HTTPClient(&http.Client{Timeout: requestTimeout}), sr.UserAgent("streamsql")}
	if c.User != "" {
		opts = append(opts, sr.BasicAuth(c.User, c.Password))
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return nil, pgerr.Wrap(err, pgerr.InvalidParameterValue, "schema registry: %v", err)
	}
	return &Registry{cl: cl, byID: map[int]avro.Schema{}, byText: map[string]int{}}, nil
}

// Ping checks that the registry answers (GET /subjects): a 08000 error
// naming the registry when it does not.
func (r *Registry) Ping(ctx context.Context) error {
	if _, err := r.cl.Subjects(ctx); err != nil {
		return unreachable(err)
	}
	return nil
}

func unreachable(err error) error {
	return pgerr.Wrap(err, pgerr.ConnectionException, "schema registry: %v", err).
		WithHint("Check the schema.registry option and that the registry is running.")
}

// ErrUnknownID is wrapped by Schema's error when the registry has no
// schema of the id (a bad message, not an outage).
var ErrUnknownID = errors.New("unknown schema id")

// Transient reports whether err from Schema is the registry not
// answering, or refusing the client (retry later, with the error shown),
// rather than an answer about the schema id.
func Transient(err error) bool {
	var re *sr.ResponseError
	if errors.As(err, &re) {
		// Only "no such schema" is the message's fault; a refusal of the
		// client (401, 403, 429) or a server error is not.
		return re.StatusCode != http.StatusNotFound
	}
	return !errors.Is(err, ErrUnknownID) && pgerr.CodeOf(err) == pgerr.ConnectionException
}

// Schema returns the Avro schema with id, from the cache or the registry.
// An id the registry does not know is a 22P02 error wrapping ErrUnknownID;
// a registry that does not answer an 08000 one (Transient).
func (r *Registry) Schema(ctx context.Context, id int) (avro.Schema, error) {
	r.mu.Lock()
	s, ok := r.byID[id]
	r.mu.Unlock()
	if ok {
		return s, nil
	}
	got, err := r.cl.SchemaByID(ctx, id)
	r.mu.Lock()
	r.fetches++
	r.mu.Unlock()
	if err != nil {
		var re *sr.ResponseError
		if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
			return nil, pgerr.Wrap(fmt.Errorf("%w %d", ErrUnknownID, id), pgerr.InvalidTextRepresentation,
				"the schema registry has no schema with id %d", id)
		}
		return nil, unreachable(err)
	}
	if got.Type != sr.TypeAvro {
		return nil, pgerr.New(pgerr.InvalidTextRepresentation, "schema id %d is a %s schema, not Avro", id, got.Type)
	}
	s, err = avro.ParseWithCache(got.Schema, "", &avro.SchemaCache{})
	if err != nil {
		return nil, pgerr.Wrap(err, pgerr.InvalidTextRepresentation, "schema id %d is not a valid Avro schema: %v", id, err)
	}
	r.mu.Lock()
	r.byID[id] = s
	r.mu.Unlock()
	return s, nil
}

// Register registers schema under subject (or finds it registered) and
// returns its id, cached. A registry that does not answer is an 08000
// error; a refusal (an incompatible schema) a 42P17 one.
func (r *Registry) Register(ctx context.Context, subject string, schema avro.Schema) (int, error) {
	text := schema.String()
	key := subject + "\x00" + text
	r.mu.Lock()
	id, ok := r.byText[key]
	r.mu.Unlock()
	if ok {
		return id, nil
	}
	id, err := r.cl.RegisterSchema(ctx, subject, sr.Schema{Schema: text, Type: sr.TypeAvro}, -1, -1)
	r.mu.Lock()
	r.fetches++
	r.mu.Unlock()
	if err != nil {
		var re *sr.ResponseError
		if errors.As(err, &re) && re.StatusCode < 500 {
			return 0, pgerr.Wrap(err, pgerr.InvalidObjectDefinition, "the schema registry refused the schema of subject %q: %v", subject, err)
		}
		return 0, unreachable(err)
	}
	r.mu.Lock()
	r.byText[key] = id
	r.byID[id] = schema
	r.mu.Unlock()
	return id, nil
}
