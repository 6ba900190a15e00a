// Package nexmark generates the Nexmark benchmark's event stream (persons,
// auctions and bids) directly into Arrow record batches.
//
// The algorithm follows Apache Beam's Nexmark generator (as also used by
// Flink's nexmark/nexmark and RisingWave's connector), described in
// /work/shared/spec/nexmark/README.md:
//
//   - Event number n (from 0) has id = FirstEventID + n; id%50 picks the kind
//     (0 person, 1..3 auction, 4..49 bid), so 50 events hold 1 person,
//     3 auctions and 46 bids. The first event (Beam semantics) is person 1000.
//   - Event time is BaseTime + n*1e6/EventsPerSecond microseconds. Events are
//     never reordered (out-of-order group size 1), so event time is monotone
//     and the watermark after a batch is the time of its last event.
//   - Person and auction ids, hot sellers/bidders/auctions, prices, categories,
//     auction expiry and the "extra" padding sizes are computed as in Beam,
//     with the random calls in Flink's order.
//
// Where it deviates:
//
//   - Randomness: every event draws from its own SplitMix64 stream seeded from
//     its id and Config.Seed, so the same Config always yields the same bytes
//     and any batch split (or a single-table generator) yields the same rows.
//     The streams are therefore not byte-identical to Beam's java.util.Random
//     or to Flink (whose generator is unseeded and not reproducible).
//   - Bid bidders add FIRST_PERSON_ID once (Beam), not twice (Flink's bug).
//   - Random strings are sliced from small pools built once per Generator
//     from the seed (64 KiB of letters for "extra", 64 KiB of words for item
//     names, descriptions and e-mail parts, 4 KiB for URL parts), instead of
//     being built char by char per event; Flink's 1 MiB extra pool and
//     10,000-entry channel cache cost a cache miss per bid. Channel i's URL
//     is computed from (Seed, i), so it behaves as Flink's cache (the same
//     URL every time, channel_id=|reverse(i)| in 9 of 10 channels).
//   - Times are microseconds (TIMESTAMP), not milliseconds; auction expiry is
//     drawn in microseconds over the same horizon Beam uses.
//   - Event-time rate is constant (no SQUARE/SINE rate shapes) and there is
//     a single generator (no split into several id ranges).
//
// A Reader streams one table for the runtime; it reports its Position (the
// next event number) for checkpoints and, by Seek, starts at one
// (Generator.SetPosition: per-event seeding makes that exact).
//
// A Generator is not safe for concurrent use; batches it returns belong to
// the caller and are never touched by the Generator again.
package nexmark
