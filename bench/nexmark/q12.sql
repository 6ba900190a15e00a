-- Nexmark q12: processing-time windows, the bids of each bidder per 10 s
-- of processing time (PROCTIME(): the runtime's clock when the row entered
-- the job). Adapted from flink/q12.sql (its view B inlined as a subquery,
-- TABLE(TUMBLE(TABLE B, DESCRIPTOR(p_time), ...)) written as the TUMBLE
-- table function) and risingwave/q12.sql: emitted on update, as both do;
-- the clock closes each window and frees its state.
SELECT B.bidder, count(*) AS bid_count, window_start AS starttime, window_end AS endtime
FROM TUMBLE((SELECT *, PROCTIME() AS p_time FROM bid), p_time, INTERVAL '10' SECOND) B
GROUP BY B.bidder, window_start, window_end
