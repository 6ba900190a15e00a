-- Nexmark q11: user sessions, the bids of each bidder per session (a gap
-- of 10 s without a bid ends it), each session emitted once the watermark
-- (date_time - 4 s) passes its end. Adapted from flink/q11.sql (its
-- GROUP BY SESSION(...) written as the SESSION table function; the legacy
-- form plans the same).
SELECT B.bidder, count(*) AS bid_count, window_start AS starttime, window_end AS endtime
FROM SESSION(bid, date_time, INTERVAL '10' SECOND) B
GROUP BY B.bidder, window_start, window_end
EMIT ON WINDOW CLOSE
