-- Nexmark q7: highest bid, the bids at the highest price of each tumbling
-- window of 10 s: a windowed max (emitted when the watermark, date_time -
-- 4 s, passes the window's end) joined with the bids on the price, within
-- the window. Adapted from risingwave/q7.sql (the same SQL plus the EMIT
-- clause). The join is an interval join (docs/windows.md): a bid is held
-- until the windows' watermark passes its date_time + 10 s, a window's max
-- until the bids' watermark passes its end, so its state stays flat.
SELECT B.auction, B.price, B.bidder, B.date_time
FROM bid B
JOIN (SELECT MAX(price) AS maxprice, window_end AS date_time
      FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND)
      GROUP BY window_end) B1 ON B.price = B1.maxprice
WHERE B.date_time BETWEEN B1.date_time - INTERVAL '10' SECOND AND B1.date_time
EMIT ON WINDOW CLOSE
