-- Nexmark q6: average selling price per seller, the average of the final
-- prices of each seller's last 10 closed auctions (and the current one):
-- the winning bid of each auction (a join with a range condition and a
-- per-auction top-1, which changes while bids arrive), then AVG OVER a
-- ROWS frame per seller over that changelog. Adapted from flink/q6.sql,
-- whose subquery filters on rownum at the level that defines it: here the
-- top-1 is its own level. For a deterministic result the top-1 breaks
-- price ties by the earlier bid and the lower bidder, and the frame's
-- order breaks date_time ties by the auction id.
SELECT Q.seller,
       AVG(Q.price) OVER (PARTITION BY Q.seller ORDER BY Q.date_time, Q.id
                          ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) AS avg_price
FROM (SELECT id, seller, price, date_time
      FROM (SELECT A.id, A.seller, B.price, B.date_time,
                   ROW_NUMBER() OVER (PARTITION BY A.id, A.seller
                                      ORDER BY B.price DESC, B.date_time, B.bidder) AS rownum
            FROM auction AS A, bid AS B
            WHERE A.id = B.auction
              AND B.date_time BETWEEN A.date_time AND A.expires) W
      WHERE rownum <= 1) AS Q
