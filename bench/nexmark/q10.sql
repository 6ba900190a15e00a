-- Nexmark q10: log every bid to files, partitioned by date and minute (as
-- flink/q10.sql, whose filesystem sink is PARTITIONED BY (dt, hm)). With
-- --sink file:DIR (or parquet:DIR) it writes them through the file sink,
-- in dt=.../hm=.../ directories; into discard it measures the projection.
-- partition_by: dt, hm
SELECT auction, bidder, price, date_time, extra,
       to_char(date_time, 'YYYY-MM-DD') AS dt, to_char(date_time, 'HH24:MI') AS hm
FROM bid
