-- Nexmark q3: local item suggestion, an incremental join and filters.
-- Adapted from risingwave/q3.sql. Our generator writes US states in upper
-- case, as Beam and Flink do (RisingWave's nexmark-rs writes them in lower
-- case), so the states are the Flink query's.
SELECT P.name,
       P.city,
       P.state,
       A.id
FROM auction AS A
         INNER JOIN person AS P ON A.seller = P.id
WHERE A.category = 10
  AND (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA')
