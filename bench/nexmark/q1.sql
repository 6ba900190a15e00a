-- Nexmark q1: currency conversion (dollars to euros), a projection.
-- Adapted from risingwave/q1.sql.
SELECT auction,
       bidder,
       0.908 * price AS price,
       date_time
FROM bid
