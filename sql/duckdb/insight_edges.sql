-- The edges of an insight's window in one replica table, for the insight
-- cache (src/analytics/insight_cache.ts): lo is the earliest time at or after
-- $start, hi the earliest at or after $end. An answer computed for
-- [$start, $end) holds for a later window [s, e) of the same length over the
-- same replica while s <= lo and e <= hi: no row left it, none entered.
--
-- Only $horizon ms past each edge are read, two short ranges the zone maps
-- find, where reading on to the window's end scanned all of it (a 90-day
-- window at 1M calls: 30 ms of the insight's 72). With no row in the horizon
-- the edge is the horizon's end, never later than the true one: an answer is
-- never held past a row that left or entered, only recomputed sooner.
-- {table} is the table the insight reads.

-- name: window_edges
SELECT
  coalesce(min(ts) FILTER (WHERE ts < $start + $horizon), $start + $horizon) AS lo,
  coalesce(min(ts) FILTER (WHERE ts >= $end), $end + $horizon) AS hi
FROM (
  SELECT ts FROM {table} WHERE org_id = $org AND ts >= $start AND ts < $start + $horizon
  UNION ALL
  SELECT ts FROM {table} WHERE org_id = $org AND ts >= $end AND ts < $end + $horizon
);
