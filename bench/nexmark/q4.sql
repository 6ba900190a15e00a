-- Nexmark q4: average winning bid price per category, an aggregate of an
-- aggregate over a join with a range condition (retractions flow from the
-- inner aggregate to the outer one). Adapted from risingwave/q4.sql.
SELECT Q.category,
       AVG(Q.final) AS avg
FROM (SELECT MAX(B.price) AS final,
             A.category
      FROM auction A,
           bid B
      WHERE A.id = B.auction
        AND B.date_time BETWEEN A.date_time AND A.expires
      GROUP BY A.id, A.category) Q
GROUP BY Q.category
