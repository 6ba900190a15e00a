-- Nexmark q0: passthrough. Measures the monitoring and source overhead.
-- Adapted from risingwave/q0.sql (CREATE SINK ... blackhole): the bench
-- runs this query into a counting discard sink.
SELECT auction, bidder, price, date_time
FROM bid
