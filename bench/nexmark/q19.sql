-- Nexmark q19: from risingwave/q19.sql (the SELECT of its CREATE SINK), with
-- an alias for the subquery in FROM, which PostgreSQL 15 requires.
SELECT *
FROM (SELECT *,
             ROW_NUMBER() OVER (
                 PARTITION BY auction
                 ORDER BY price DESC
             ) AS rank_number
      FROM bid) AS B
WHERE rank_number <= 10
