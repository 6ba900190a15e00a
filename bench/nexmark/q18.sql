-- Nexmark q18: from risingwave/q18.sql (the SELECT of its CREATE SINK), with
-- an alias for the subquery in FROM, which PostgreSQL 15 requires.
SELECT auction, bidder, price, channel, url, date_time
FROM (SELECT *,
             ROW_NUMBER() OVER (
                 PARTITION BY bidder, auction
                 ORDER BY date_time DESC
                 ) AS rank_number
      FROM bid) AS B
WHERE rank_number <= 1
