-- Nexmark q8: new users, the persons who opened an auction in the
-- tumbling window of 10 s in which they registered: two windowed
-- groupings (persons, sellers) joined on the id and the window, each window
-- emitted once the watermark (date_time - 4 s) passes its end. Adapted
-- from risingwave/q8.sql (the same SQL plus the EMIT clause).
SELECT P.id, P.name, P.starttime
FROM (SELECT id, name, window_start AS starttime, window_end AS endtime
      FROM TUMBLE(person, date_time, INTERVAL '10' SECOND)
      GROUP BY id, name, window_start, window_end) P
JOIN (SELECT seller, window_start AS starttime, window_end AS endtime
      FROM TUMBLE(auction, date_time, INTERVAL '10' SECOND)
      GROUP BY seller, window_start, window_end) A
  ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime
EMIT ON WINDOW CLOSE
