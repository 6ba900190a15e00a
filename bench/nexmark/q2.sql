-- Nexmark q2: selection of the bids on a few auctions, a filter.
-- Adapted from risingwave/q2.sql.
SELECT auction, price
FROM bid
WHERE auction = 1007
   OR auction = 1020
   OR auction = 2001
   OR auction = 2019
   OR auction = 2087
