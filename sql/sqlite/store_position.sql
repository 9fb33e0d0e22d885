-- The store's position for insights routed to telemetry.db
-- (src/analytics/sqlite_insights.ts): the seq every write and every
-- retention delete advances, read in the answer's own snapshot. An answer
-- cached under it holds until the next write.

-- name: store_position
SELECT value AS seq FROM counters WHERE name = 'seq';
