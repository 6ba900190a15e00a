// Package srtest is a small in-process Confluent-compatible schema
// registry for tests: the REST subset streamsql's client uses
// (POST /subjects/{subject}/versions, GET /schemas/ids/{id},
// GET /subjects/{subject}/versions/latest, GET /subjects), with Confluent's
// error bodies. A Registry is safe for concurrent use.
package srtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
)

// Registry is a running fake registry.
type Registry struct {
	srv *httptest.Server

	mu       sync.Mutex
	schemas  []string         // by id - 1
	ids      map[string]int   // schema text -> id
	subjects map[string][]int // subject -> ids by version - 1
	down     bool
	requests int
}

// Start starts a registry on a loopback port; Close stops it.
func Start() *Registry {
	r := &Registry{ids: map[string]int{}, subjects: map[string][]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// URL is the registry's base URL (the schema.registry option).
func (r *Registry) URL() string { return r.srv.URL }

// Close stops the registry: later requests fail to connect.
func (r *Registry) Close() { r.srv.Close() }

// SetDown makes every request answer 503 (true) or be served (false).
func (r *Registry) SetDown(down bool) {
	r.mu.Lock()
	r.down = down
	r.mu.Unlock()
}

// Requests is the number of requests served so far.
func (r *Registry) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Register registers schema under subject as a producer would and returns
// its id (the same id for the same text).
func (r *Registry) Register(subject, schema string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.register(subject, schema)
}

func (r *Registry) register(subject, schema string) int {
	id, ok := r.ids[schema]
	if !ok {
		r.schemas = append(r.schemas, schema)
		id = len(r.schemas)
		r.ids[schema] = id
	}
	for _, v := range r.subjects[subject] {
		if v == id {
			return id
		}
	}
	r.subjects[subject] = append(r.subjects[subject], id)
	return id
}

// SchemaOf returns the schema text registered with id ("" if none).
func (r *Registry) SchemaOf(id int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id < 1 || id > len(r.schemas) {
		return ""
	}
	return r.schemas[id-1]
}

// Latest returns the id of subject's latest version (0 if none).
func (r *Registry) Latest(subject string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	vs := r.subjects[subject]
	if len(vs) == 0 {
		return 0
	}
	return vs[len(vs)-1]
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status, code int, msg string) {
	reply(w, status, map[string]any{"error_code": code, "message": msg})
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	if r.down {
		fail(w, http.StatusServiceUnavailable, 50003, "unavailable")
		return
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case req.Method == http.MethodGet && len(parts) == 1 && parts[0] == "subjects":
		names := []string{}
		for s := range r.subjects {
			names = append(names, s)
		}
		reply(w, http.StatusOK, names)
	case req.Method == http.MethodGet && len(parts) == 3 && parts[0] == "schemas" && parts[1] == "ids":
		id, err := strconv.Atoi(parts[2])
		if err != nil || id < 1 || id > len(r.schemas) {
			fail(w, http.StatusNotFound, 40403, "Schema "+parts[2]+" not found")
			return
		}
		reply(w, http.StatusOK, map[string]any{"schema": r.schemas[id-1]})
	case req.Method == http.MethodPost && len(parts) == 3 && parts[0] == "subjects" && parts[2] == "versions":
		var body struct {
			Schema     string `json:"schema"`
			SchemaType string `json:"schemaType"`
		}
		if err := json.NewDecoder(req.Body).Decode(&body); err != nil || body.Schema == "" {
			fail(w, http.StatusUnprocessableEntity, 42201, "Invalid schema")
			return
		}
		if body.SchemaType != "" && body.SchemaType != "AVRO" {
			fail(w, http.StatusUnprocessableEntity, 42201, "Invalid schema type "+body.SchemaType)
			return
		}
		reply(w, http.StatusOK, map[string]any{"id": r.register(parts[1], body.Schema)})
	case req.Method == http.MethodGet && len(parts) == 4 && parts[0] == "subjects" && parts[2] == "versions" && parts[3] == "latest":
		vs := r.subjects[parts[1]]
		if len(vs) == 0 {
			fail(w, http.StatusNotFound, 40401, "Subject '"+parts[1]+"' not found.")
			return
		}
		id := vs[len(vs)-1]
		reply(w, http.StatusOK, map[string]any{"subject": parts[1], "version": len(vs), "id": id, "schema": r.schemas[id-1]})
	default:
		fail(w, http.StatusNotFound, 404, "not found: "+req.Method+" "+req.URL.Path)
	}
}
