package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/streamsql/streamsql/connector/internal/avroconv"
	"github.com/streamsql/streamsql/connector/internal/decode"
)

// ENCODE AVRO (source side): each message value (and, for FORMAT UPSERT,
// key) is Confluent-framed Avro. The writer schema is fetched from the
// schema registry by the id in the frame (once per id: the Registry
// caches it) and resolved against the columns by field name (a Plan, once
// per id and reader). A message whose id the registry does not know, or
// that is not framed or truncated, is a bad message (counted, recorded,
// skipped); a registry that does not answer stops the reader in state
// "retrying" until it does, so no message is skipped for an outage.

// avroSource is a source's ENCODE AVRO settings; immutable.
type avroSource struct {
	reg *avroconv.Registry
}

// avroReader is a reader's compiled plans, owned by the Run goroutine.
type avroReader struct {
	plans map[int]*avroconv.Plan
	errs  map[int]error // ids whose schema cannot be read into the columns
	cur   avroconv.Cursor
	envs  map[int]*avroconv.EnvelopePlan // DEBEZIUM ENCODE AVRO
}

// errStopped is returned by avroPlan when ctx ended while the registry
// was retried: the message was not read and must not be skipped.
var errStopped = errors.New("kafka: stopped while waiting for the schema registry")

// registryRetry bounds the backoff while the registry does not answer.
const (
	registryBackoffMin = 200 * time.Millisecond
	registryBackoffMax = 5 * time.Second
)

// avroPlan returns the plan of writer schema id for dec's columns,
// waiting (state "retrying") while the registry does not answer.
func (r *Reader) avroPlan(ctx context.Context, id int, dec *decode.Schema) (*avroconv.Plan, error) {
	ar := &r.avro
	if p, ok := ar.plans[id]; ok && dec == r.src.dec {
		return p, nil
	}
	if err, ok := ar.errs[id]; ok && dec == r.src.dec {
		return nil, err
	}
	ws, err := r.avroSchema(ctx, id)
	if err != nil {
		return nil, err
	}
	p, err := avroconv.Compile(ws, dec)
	if dec == r.src.dec {
		if ar.plans == nil {
			ar.plans = map[int]*avroconv.Plan{}
		}
		if ar.errs == nil {
			ar.errs = map[int]error{}
		}
		if err != nil {
			ar.errs[id] = err
		} else {
			ar.plans[id] = p
		}
	}
	return p, err
}

// avroSchema returns writer schema id from the registry, waiting (state
// "retrying") while the registry does not answer.
func (r *Reader) avroSchema(ctx context.Context, id int) (avro.Schema, error) {
	backoff := registryBackoffMin
	for {
		ws, err := r.src.avro.reg.Schema(ctx, id)
		if err == nil {
			r.registryBack()
			return ws, nil
		}
		if !avroconv.Transient(err) {
			return nil, err // unknown id: a bad message (not cached: it may be registered later)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %w", errStopped, ctx.Err())
		}
		r.setState("retrying", err)
		if sleep(ctx, backoff) != nil {
			return nil, fmt.Errorf("%w: %w", errStopped, ctx.Err())
		}
		backoff = min(2*backoff, registryBackoffMax)
	}
}

// registryBack returns the reader to "running" after a registry outage.
func (r *Reader) registryBack() {
	r.mu.Lock()
	if r.state.State == "retrying" {
		r.state.State = "running"
	}
	r.mu.Unlock()
}

// decodeAvro reads a framed Avro message into r.row.
func (r *Reader) decodeAvro(ctx context.Context, msg []byte) (int, error) {
	id, body, err := avroconv.SplitFrame(msg)
	if err != nil {
		return -1, err
	}
	p, err := r.avroPlan(ctx, id, r.src.dec)
	if err != nil {
		return -1, err
	}
	return p.Decode(body, r.row, &r.avro.cur)
}

// checkRegistry is Check's part for ENCODE AVRO: the registry answers.
func (s *Source) checkRegistry(ctx context.Context) error {
	if s.avro == nil {
		return nil
	}
	return s.avro.reg.Ping(ctx)
}

// openAvro reads the registry options of an ENCODE AVRO source.
func openAvro(opts map[string]string, used map[string]bool) (*avroSource, error) {
	cfg, err := avroconv.ParseRegistry(opts, used)
	if err != nil {
		return nil, err
	}
	reg, err := avroconv.NewRegistry(cfg)
	if err != nil {
		return nil, err
	}
	return &avroSource{reg: reg}, nil
}

// decodeDebeziumAvro reads a framed Debezium Avro envelope into r.row:
// the "after" row, or for a delete the "before" row (tombstone true).
func (r *Reader) decodeDebeziumAvro(ctx context.Context, msg []byte) (tombstone bool, col int, err error) {
	id, body, err := avroconv.SplitFrame(msg)
	if err != nil {
		return false, -1, err
	}
	ar := &r.avro
	p, ok := ar.envs[id]
	if !ok {
		if err, ok := ar.errs[id]; ok {
			return false, -1, err
		}
		ws, err := r.avroSchema(ctx, id)
		if err != nil {
			return false, -1, err
		}
		p, err = avroconv.CompileDebezium(ws, r.src.dec)
		if ar.envs == nil {
			ar.envs = map[int]*avroconv.EnvelopePlan{}
		}
		if ar.errs == nil {
			ar.errs = map[int]error{}
		}
		if err != nil {
			ar.errs[id] = err
			return false, -1, err
		}
		ar.envs[id] = p
	}
	return p.Decode(body, r.row, &ar.cur)
}
