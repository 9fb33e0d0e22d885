-- GET /v1/insights/top-tools (docs/api.md §4.10) on the DuckDB replica (SQLite and
-- PostgreSQL run it as is: the benchmark's baselines). avg() skips
-- the null durations of rejected calls, so a tool whose calls were all
-- rejected averages to null.

-- /*sessions*/ marks where the dimension filters (docs/api.md §4.22) narrow a
-- read to their sessions (src/analytics/insights.ts splices it; unfiltered: nothing).

-- name: summary
SELECT
  count(*) AS total_calls,
  count(DISTINCT tool_name) AS unique_tools
FROM tool_calls
WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/;

-- name: breakdown
SELECT
  tool_name,
  tool_type,
  count(*) AS calls,
  count(*) FILTER (WHERE outcome = 'error') AS errors,
  avg(duration_ms) AS avg_duration_ms
FROM tool_calls
WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/
GROUP BY tool_name, tool_type
ORDER BY calls DESC, tool_name, tool_type
LIMIT 50;

-- group_by (docs/api.md §4.23): the summary per group, biggest first, ties by value
-- with the null group last; /*group_value*/ and /*group_join*/ become the group's
-- column or the join that finds it (src/analytics/insights.ts).
-- name: groups
SELECT
  /*group_value*/ AS group_value,
  count(*) AS total_calls,
  count(DISTINCT tool_name) AS unique_tools
FROM tool_calls /*group_join*/
WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/
GROUP BY group_value
ORDER BY total_calls DESC, group_value NULLS LAST
LIMIT $group_limit;
