-- The datacenter example, Kafka in and Kafka out: host metrics from the
-- Kafka topic `metrics` (JSON, as in metrics.jsonl), per-host load and
-- anomalies computed as in setup.sql, and two sinks that send the
-- anomalies and the silent hosts to Kafka topics, exactly once.
-- Run with psql, giving the brokers:
--   psql -h 127.0.0.1 -p 5433 -U streamsql streamsql -v broker=127.0.0.1:9092 -f kafka.sql

CREATE SOURCE metrics (
  host text, cpu float8, mem float8, errors int, ts timestamptz,
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND WITH (idle_timeout = '5s')
) WITH (connector = 'kafka', topic = 'metrics',
        properties.bootstrap.server = :'broker') FORMAT JSON;

-- Per-host load over 30-second windows sliding every 10 seconds.
CREATE MATERIALIZED VIEW host_load AS
  SELECT host, window_start, window_end,
         round(avg(cpu)::numeric, 1) AS avg_cpu, max(cpu) AS max_cpu,
         round(avg(mem)::numeric, 1) AS avg_mem, count(*) AS samples
  FROM HOP(metrics, ts, INTERVAL '10' SECOND, INTERVAL '30' SECOND)
  GROUP BY host, window_start, window_end
  EMIT ON WINDOW CLOSE;

-- Each host's baseline over 2-minute windows ending at the same instants.
CREATE MATERIALIZED VIEW host_baseline AS
  SELECT host, window_end, avg(cpu) AS base_cpu, count(*) AS samples
  FROM HOP(metrics, ts, INTERVAL '10' SECOND, INTERVAL '2' MINUTE)
  GROUP BY host, window_end
  EMIT ON WINDOW CLOSE;

-- Anomalies: a 30-second window at 1.5 times the 2-minute baseline.
CREATE MATERIALIZED VIEW cpu_anomalies AS
  SELECT l.host, l.window_start, l.window_end, l.avg_cpu,
         round(b.base_cpu::numeric, 1) AS base_cpu
  FROM host_load l JOIN host_baseline b
    ON l.host = b.host AND l.window_end = b.window_end
  WHERE l.avg_cpu > 50 AND l.avg_cpu > 1.5 * b.base_cpu;

-- Heartbeats per host per 10 seconds, and the hosts that fell silent.
CREATE MATERIALIZED VIEW heartbeats AS
  SELECT host, window_start, window_end, count(*) AS reports
  FROM TUMBLE(metrics, ts, INTERVAL '10' SECOND)
  GROUP BY host, window_start, window_end
  EMIT ON WINDOW CLOSE;

CREATE MATERIALIZED VIEW silent_hosts AS
  SELECT h.host, h.last_seen, f.latest
  FROM (SELECT host, max(window_end) AS last_seen FROM heartbeats GROUP BY host) h
  JOIN (SELECT max(window_end) AS latest FROM heartbeats) f ON true
  WHERE h.last_seen <= f.latest - INTERVAL '20' SECOND;

-- The sinks. An anomaly, once found, stays: each is one JSON record.
-- silent_hosts changes (a host's last_seen, latest move on; a host that
-- reports again leaves it), so it is an upsert topic keyed by host, where
-- a host that is no longer silent gets a tombstone. Both are exactly-once
-- (the default): read them with isolation.level=read_committed; records
-- appear at each checkpoint (every second by default).
CREATE SINK anomalies_out FROM cpu_anomalies
  WITH (connector = 'kafka', topic = 'anomalies', properties.bootstrap.server = :'broker',
        primary_key = 'host, window_end')
  FORMAT UPSERT ENCODE JSON;

CREATE SINK silent_hosts_out FROM silent_hosts
  WITH (connector = 'kafka', topic = 'silent_hosts', properties.bootstrap.server = :'broker',
        primary_key = 'host')
  FORMAT UPSERT ENCODE JSON;
