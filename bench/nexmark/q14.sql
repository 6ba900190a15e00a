-- Nexmark q14: a stateless projection with a CASE over the hour of the
-- bid, arithmetic on the price and a user-defined function, count_char,
-- the number of times a character occurs in a string. As
-- flink/q14.sql (whose count_char is a Java UDF) with
-- extract(hour from ...) for Flink's HOUR() as risingwave/q14.sql writes it;
-- the benchmark creates count_char as a SQL-language function before the
-- run (bench.Functions), which the planner inlines.
SELECT auction,
       bidder,
       0.908 * price AS price,
       CASE
           WHEN extract(hour FROM date_time) >= 8 AND extract(hour FROM date_time) <= 18 THEN 'dayTime'
           WHEN extract(hour FROM date_time) <= 6 OR extract(hour FROM date_time) >= 20 THEN 'nightTime'
           ELSE 'otherTime'
       END AS bidTimeType,
       date_time,
       extra,
       count_char(extra, 'c') AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000
