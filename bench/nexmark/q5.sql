-- Nexmark q5: hot items, the auctions with the most bids in each hopping
-- window of 10 s sliding by 2 s. Two windowed counts (computed by panes of
-- one slide), the max per window, and a join on the window start. The
-- sources' watermark is date_time - 4 s; EMIT ON WINDOW CLOSE emits each
-- window's counts once, when the watermark passes its end; the max per
-- window start is an ordinary aggregation closed by the watermark of
-- window_start (it goes out once and is freed), so the join of the two
-- append-only sides frees each window start's rows once both watermarks
-- passed it: the state stays flat. Adapted from risingwave/q5.sql (the
-- same SQL plus the EMIT clause).
SELECT AuctionBids.auction, AuctionBids.num
FROM (SELECT bid.auction, count(*) AS num, window_start AS starttime
      FROM HOP(bid, date_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND)
      GROUP BY bid.auction, window_start) AS AuctionBids
JOIN (SELECT max(CountBids.num) AS maxn, CountBids.starttime_c
      FROM (SELECT count(*) AS num, window_start AS starttime_c
            FROM HOP(bid, date_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND)
            GROUP BY bid.auction, window_start) AS CountBids
      GROUP BY CountBids.starttime_c) AS MaxBids
ON AuctionBids.starttime = MaxBids.starttime_c AND AuctionBids.num >= MaxBids.maxn
EMIT ON WINDOW CLOSE
