-- The datacenter example: host metrics from metrics.jsonl (see gen.awk for
-- the injected anomalies) and the views that watch them. Run from this
-- directory: the file path is relative to the server's working directory.

CREATE SOURCE metrics (
  host text, cpu float8, mem float8, errors int, ts timestamptz,
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND WITH (idle_timeout = '5s')
) WITH (connector = 'file', path = 'metrics.jsonl') FORMAT JSON;

-- Where each host is: a table, updatable while the feed runs.
CREATE TABLE hosts (host text PRIMARY KEY, rack text);
INSERT INTO hosts VALUES ('web-1', 'rack-a'), ('web-2', 'rack-a'),
                         ('web-3', 'rack-b'), ('web-4', 'rack-b'), ('db-1', 'rack-c');

-- Per-rack load: each report is enriched with its host's rack as the hosts
-- table is when the report arrives (a temporal lookup join: moving a host
-- later does not rewrite the windows already counted), then counted per
-- rack in 30-second windows. The lookup join passes the metrics'
-- watermark on, so the windows close.
CREATE MATERIALIZED VIEW rack_load AS
  SELECT h.rack, window_start, window_end,
         round(avg(cpu)::numeric, 1) AS avg_cpu, max(cpu) AS max_cpu, count(*) AS reports
  FROM TUMBLE(metrics, ts, INTERVAL '30' SECOND) m
  JOIN hosts FOR SYSTEM_TIME AS OF PROCTIME() h ON m.host = h.host
  GROUP BY h.rack, window_start, window_end
  EMIT ON WINDOW CLOSE;

-- Per-host load over 30-second windows sliding every 10 seconds; a window's
-- row appears once, when the watermark passes its end.
CREATE MATERIALIZED VIEW host_load AS
  SELECT host, window_start, window_end,
         round(avg(cpu)::numeric, 1) AS avg_cpu, max(cpu) AS max_cpu,
         round(avg(mem)::numeric, 1) AS avg_mem, count(*) AS samples
  FROM HOP(metrics, ts, INTERVAL '10' SECOND, INTERVAL '30' SECOND)
  GROUP BY host, window_start, window_end
  EMIT ON WINDOW CLOSE;

-- The baseline: each host's load over 2-minute windows sliding every 10
-- seconds, ending at the same instants as host_load's windows.
CREATE MATERIALIZED VIEW host_baseline AS
  SELECT host, window_end, avg(cpu) AS base_cpu, count(*) AS samples
  FROM HOP(metrics, ts, INTERVAL '10' SECOND, INTERVAL '2' MINUTE)
  GROUP BY host, window_end
  EMIT ON WINDOW CLOSE;

-- Anomalies: a 30-second window whose cpu is 1.5 times the host's 2-minute
-- baseline (and above 50%). A window join: both sides are windowed
-- aggregations joined on their window column.
CREATE MATERIALIZED VIEW cpu_anomalies AS
  SELECT l.host, l.window_start, l.window_end, l.avg_cpu,
         round(b.base_cpu::numeric, 1) AS base_cpu
  FROM host_load l JOIN host_baseline b
    ON l.host = b.host AND l.window_end = b.window_end
  WHERE l.avg_cpu > 50 AND l.avg_cpu > 1.5 * b.base_cpu;

-- The same anomaly measured against how much the host's cpu usually
-- varies: a 30-second window more than three standard deviations above
-- the mean of the host's reports in the two minutes before it (the
-- 2-minute window ending where the 30-second one starts, so the spike is
-- not in its own baseline). z says by how many.
CREATE MATERIALIZED VIEW host_spread AS
  SELECT host, window_end, avg(cpu) AS mean_cpu, stddev_samp(cpu) AS sd_cpu
  FROM HOP(metrics, ts, INTERVAL '10' SECOND, INTERVAL '2' MINUTE)
  GROUP BY host, window_end
  EMIT ON WINDOW CLOSE;

CREATE MATERIALIZED VIEW cpu_zscores AS
  SELECT l.host, l.window_start, l.window_end, l.avg_cpu,
         round(s.mean_cpu::numeric, 1) AS base_cpu,
         round((l.avg_cpu - s.mean_cpu::numeric) / s.sd_cpu::numeric, 1) AS z
  FROM host_load l JOIN host_spread s
    ON l.host = s.host AND l.window_start = s.window_end
  WHERE s.sd_cpu > 0 AND l.avg_cpu > s.mean_cpu + 3 * s.sd_cpu;

-- Error sessions per host: reports with errors less than 10 seconds apart
-- form one session.
CREATE MATERIALIZED VIEW error_sessions AS
  SELECT host, window_start AS session_start, window_end AS session_end,
         count(*) AS reports, sum(errors) AS errors
  FROM SESSION((SELECT * FROM metrics WHERE errors > 0), ts, INTERVAL '10' SECOND)
  GROUP BY host, window_start, window_end
  EMIT ON WINDOW CLOSE;

-- Heartbeats: reports per host per 10-second window.
CREATE MATERIALIZED VIEW heartbeats AS
  SELECT host, window_start, window_end, count(*) AS reports
  FROM TUMBLE(metrics, ts, INTERVAL '10' SECOND)
  GROUP BY host, window_start, window_end
  EMIT ON WINDOW CLOSE;

-- Silent hosts: a host whose last heartbeat window ended 20 seconds or more
-- before the latest one any host reported in.
CREATE MATERIALIZED VIEW silent_hosts AS
  SELECT h.host, h.last_seen, f.latest
  FROM (SELECT host, max(window_end) AS last_seen FROM heartbeats GROUP BY host) h
  JOIN (SELECT max(window_end) AS latest FROM heartbeats) f ON true
  WHERE h.last_seen <= f.latest - INTERVAL '20' SECOND;

-- Alerts on processing time (temporal filters): a host that has sent
-- nothing for 20 seconds of the clock, and the whole feed silent. Unlike
-- silent_hosts (which compares hosts with each other, so it cannot see the
-- whole feed stop), these move with now(): a row appears when now() passes
-- last_report + 20 s, with no new input, and goes when the host reports again.
CREATE MATERIALIZED VIEW host_silence_alerts AS
  SELECT host, max(ts) AS last_report FROM metrics GROUP BY host
  HAVING max(ts) < now() - INTERVAL '20 seconds';

CREATE MATERIALIZED VIEW feed_silence_alert AS
  SELECT max(ts) AS last_report FROM metrics
  HAVING max(ts) < now() - INTERVAL '20 seconds';
