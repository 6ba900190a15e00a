package dataflow

import (
	"context"

	"github.com/streamsql/streamsql/exec/stream"
)

// A Relay carries the outputs of a job's hash exchanges somewhere other
// than an in-process channel: in a cluster, to the node that runs the
// instance (exec/dataflow/netx over TCP). Without one (Config.Relay nil)
// every output is the exchange's own bounded channel.
//
// Carry is called while the job starts (the runtime's lock held: it must
// not block on the network), once per output of every hash exchange, with
// the exchange's output for one instance; it returns the channel that
// instance reads. The relay owns in from then on: it must read it to its
// end (or until ex.Ctx ends) so that the exchange is never left blocked,
// and it reports a failure of the carried stream with ex.Fail, which
// fails the job. The returned channel must close when the carried stream
// ends or fails.
type Relay interface {
	Carry(ex ExchangeOutput, in <-chan stream.Message) <-chan stream.Message
}

// ExchangeOutput names one output of a hash exchange for a Relay. Job,
// Exchange and Instance are the same in every process that starts the
// same plan (exchanges are numbered in the order the job starts them,
// which follows the plan), so two processes agree on a stream's name.
type ExchangeOutput struct {
	Ctx      context.Context // ends when the job does
	Job      uint32          // JobSpec.ID
	Exchange int             // the job's exchanges numbered from 0 in start order
	Instance int             // the instance the output feeds, 0..N-1
	N        int             // the operator's instances
	Fail     func(error)     // fails the job
}

// relay passes a hash exchange's outputs through the runtime's Relay, if
// any; rt.mu is held.
func (j *Job) relay(outs []<-chan stream.Message) []<-chan stream.Message {
	x := j.exchanges
	j.exchanges++
	r := j.rt.cfg.Relay
	if r == nil {
		return outs
	}
	for k, in := range outs {
		outs[k] = r.Carry(ExchangeOutput{Ctx: j.env.Ctx, Job: j.spec.ID, Exchange: x, Instance: k, N: len(outs), Fail: j.fail}, in)
	}
	return outs
}
