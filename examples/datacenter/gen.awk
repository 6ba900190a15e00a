# gen.awk writes metrics.jsonl: one row every 2 seconds per host from
# 2024-01-01 00:00:00 to 00:02:58 UTC, with injected anomalies:
#   web-3  cpu above 90 from 00:01:30 to 00:01:59 (a runaway process)
#   db-1   errors from 00:00:40 to 00:00:51 and from 00:02:10 to 00:02:19
#   web-4  silent after 00:00:58 (it stops reporting)
# Regenerate with: awk -f gen.awk > metrics.jsonl
BEGIN {
  split("web-1 web-2 web-3 web-4 db-1", hosts, " ")
  for (s = 0; s < 180; s += 2) {
    for (h = 1; h <= 5; h++) {
      host = hosts[h]
      if (host == "web-4" && s >= 60) continue
      cpu = 20 + (s * 7 + h * 13) % 15
      mem = 50 + (s * 3 + h * 5) % 10
      err = 0
      if (host == "web-3" && s >= 90 && s < 120) cpu = 91 + (s % 7)
      if (host == "db-1" && ((s >= 40 && s < 52) || (s >= 130 && s < 140))) err = 1 + s % 3
      printf "{\"host\":\"%s\",\"cpu\":%d.5,\"mem\":%d,\"errors\":%d,\"ts\":\"2024-01-01 00:%02d:%02d+00\"}\n", host, cpu, mem, err, int(s / 60), s % 60
    }
  }
}
