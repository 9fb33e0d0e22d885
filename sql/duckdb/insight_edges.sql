-- The edges of an insight's window in one replica table, for the insight
-- cache (src/analytics/insight_cache.ts): lo is the earliest time at or after
-- $start, hi the earliest at or after $end (null: none). An answer computed
-- for [$start, $end) holds for a later window [s, e) of the same length over
-- the same replica while s <= lo and e <= hi: no row left it, none entered.
-- {table} is the table the insight reads.

-- name: window_edges
SELECT
  min(ts) AS lo,
  min(ts) FILTER (WHERE ts >= $end) AS hi
FROM {table}
WHERE org_id = $org AND ts >= $start;
