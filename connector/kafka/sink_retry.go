package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/pgerr"
)

// This file holds what both sink writers share: their Status, the hook
// that remembers why the brokers are unreachable, and the retry loop that
// makes a writer wait (backpressure) instead of failing while Kafka is
// down or slow.

// statusBox is a writer's Status, written by the writer's goroutine and
// read by any (streamsql_sinks).
type statusBox struct {
	mu     sync.Mutex
	st     sink.Status
	openAt time.Time // when the oldest open transaction began; zero: none
}

func (b *statusBox) get() sink.Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.st
	if !b.openAt.IsZero() {
		s.OpenTxnAgeMs = time.Since(b.openAt).Milliseconds()
	}
	if s.Status == "" {
		s.Status = "running"
	}
	return s
}

func (b *statusBox) update(fn func(s *sink.Status)) {
	b.mu.Lock()
	fn(&b.st)
	b.mu.Unlock()
}

func (b *statusBox) setOpen(t time.Time) {
	b.mu.Lock()
	b.openAt = t
	b.mu.Unlock()
}

// errored counts err and shows it; retrying says the writer waits.
func (b *statusBox) errored(err error, retrying string) {
	b.update(func(s *sink.Status) {
		s.Errors++
		s.LastError = err.Error()
		if retrying != "" {
			s.Status = "retrying: " + retrying
		} else {
			s.Status = "failed"
		}
	})
}

func (b *statusBox) ok() {
	b.update(func(s *sink.Status) {
		if s.Status != "failed" {
			s.Status = "running"
		}
	})
}

// errHook is a kgo hook keeping the last error met talking to a broker,
// so that a writer waiting for acknowledgments can say why.
type errHook struct{ last atomic.Pointer[string] }

func (h *errHook) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err != nil {
		s := err.Error()
		h.last.Store(&s)
	} else {
		h.last.Store(nil)
	}
}

func (h *errHook) why() string {
	if s := h.last.Load(); s != nil {
		return *s
	}
	return "no answer from the brokers"
}

// waitStep is how long a blocking Kafka call runs before the writer shows
// that it is waiting (the call goes on).
var waitStep = 2 * time.Second

// waitFor runs fn (a blocking kgo call: Flush, ProducerID) in steps of
// waitStep, showing "retrying: waiting for <what>" while it takes longer;
// it returns fn's error or ctx's.
func waitFor(ctx context.Context, st *statusBox, h *errHook, what string, fn func(context.Context) error) error {
	for {
		step, cancel := context.WithTimeout(ctx, waitStep)
		err := fn(step)
		cancel()
		if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			if err == nil {
				st.ok()
			}
			return err
		}
		st.update(func(s *sink.Status) { s.Status = "retrying: waiting for " + what + ": " + h.why() })
	}
}

// retryable says whether err may go away by itself (a broker down,
// restarting, or moving leadership) rather than needing a person.
func retryable(err error) bool {
	if pgerr.As(err) != nil || errors.Is(err, kerr.ProducerFenced) ||
		errors.Is(err, kerr.TransactionalIDAuthorizationFailed) || errors.Is(err, kerr.TopicAuthorizationFailed) {
		return false
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Retriable || ke == kerr.OperationNotAttempted || ke == kerr.InvalidProducerEpoch ||
			ke == kerr.TransactionAbortable || ke == kerr.UnknownProducerID || ke == kerr.InvalidTxnState ||
			ke == kerr.InvalidProducerIDMapping || ke == kerr.UnknownServerError
	}
	return true // transport errors, timeouts, client states
}

// backoff runs attempt until it succeeds, with exponential backoff (100 ms
// to 5 s). A retryable error is retried until ctx ends; another is retried
// twice (it may be a symptom of a restart) and then returned.
func backoff(ctx context.Context, st *statusBox, what string, attempt func() error) error {
	wait := 100 * time.Millisecond
	hard := 0
	for {
		err := attempt()
		if err == nil {
			st.ok()
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("kafka sink: %s: %w", what, ctx.Err())
		}
		if pgerr.As(err) != nil {
			st.errored(err, "")
			return err
		}
		if !retryable(err) {
			if hard++; hard > 2 {
				st.errored(err, "")
				return fmt.Errorf("kafka sink: %s: %w", what, err)
			}
		}
		st.errored(err, what+": "+err.Error())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("kafka sink: %s: %w", what, ctx.Err())
		case <-t.C:
		}
		if wait *= 2; wait > 5*time.Second {
			wait = 5 * time.Second
		}
	}
}

// waitRoom makes a writer whose producer buffer is full wait, visibly,
// until Kafka has acknowledged what it holds: kgo would block in Produce
// without a word.
func waitRoom(ctx context.Context, cl *kgo.Client, st *statusBox, h *errHook, next int) error {
	if cl.BufferedProduceRecords() < maxBufRecords-1 && cl.BufferedProduceBytes()+int64(next) < maxBufBytes {
		return nil
	}
	return waitFor(ctx, st, h, "acknowledgments (the producer's buffer is full)", cl.Flush)
}
