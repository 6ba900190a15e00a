-- Nexmark q13: bounded side input join, stream enrichment. Each bid is
-- joined with the row of side_input keyed by its auction (mod 10,000) as
-- the table is when the bid arrives: a temporal (lookup) join, the table
-- side kept as the join's state, bids never held. Adapted from
-- risingwave/q13.sql (FOR SYSTEM_TIME AS OF PROCTIME(); its table
-- side_input(key BIGINT PRIMARY KEY, value VARCHAR) holds key and key as
-- text for 0..count-1) and flink/q13.sql (a side input of 10,000 rows).
-- The benchmark creates side_input with 10,000 rows before the run
-- (bench.SideInputRows).
SELECT B.auction, B.bidder, B.price, B.date_time, S.value
FROM bid B JOIN side_input FOR SYSTEM_TIME AS OF PROCTIME() S ON mod(B.auction, 10000) = S.key
