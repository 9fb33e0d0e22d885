-- GET /v1/insights/activity (docs/api.md §4.9) on the DuckDB replica (SQLite and
-- PostgreSQL run it as is: the benchmark's baselines). Parameters:
-- $org, $start (inclusive), $end (exclusive) in epoch ms; series buckets are
-- ts - ((ts + $offset) mod $width): UTC days, or weeks from Sunday 00:00 UTC.
-- Rejected calls count as calls, never as errors.

-- /*sessions*/ marks where the dimension filters (docs/api.md §4.22) narrow a
-- read to their sessions (src/analytics/insights.ts splices it; unfiltered: nothing).

-- name: summary
SELECT
  count(*) AS total_calls,
  count(*) FILTER (WHERE outcome = 'error') AS error_count,
  count(DISTINCT session_id) AS session_count
FROM tool_calls
WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/;

-- name: series
SELECT
  ts - (((ts + $offset) % $width) + $width) % $width AS bucket,
  count(*) AS calls,
  count(*) FILTER (WHERE outcome = 'error') AS errors
FROM tool_calls
WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/
GROUP BY bucket
ORDER BY bucket;

-- group_by (docs/api.md §4.23): the summary per group, biggest first, ties by value
-- with the null group last; /*group_value*/ and /*group_join*/ become the group's
-- column or the join that finds it (src/analytics/insights.ts).
-- name: groups
SELECT
  /*group_value*/ AS group_value,
  count(*) AS total_calls,
  count(*) FILTER (WHERE outcome = 'error') AS error_count,
  count(DISTINCT session_id) AS session_count
FROM tool_calls /*group_join*/
WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/
GROUP BY group_value
ORDER BY total_calls DESC, group_value NULLS LAST
LIMIT $group_limit;
