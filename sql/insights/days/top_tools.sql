-- GET /v1/insights/top-tools (docs/api.md §4.10) over the per-day rollups
-- (issue #31; sql/duckdb/replica_days.sql): the whole UTC days in
-- [$day_lo, $day_hi) from tool_days, the rest of the window from raw rows, as
-- sql/insights/days/activity.sql does. The answer is the raw-row statements'
-- (sql/insights/top_tools.sql) byte for byte: unique_tools is DISTINCT over
-- (day, actor, agent, tool) rows, and the average is the durations' sum over
-- their count, which is what avg() computes (null when every call was rejected).
-- tool_days keeps no session: narrowed or grouped by a dimension, top-tools
-- reads raw rows (`days.sessions` in src/analytics/insights.ts).

-- name: rows
WITH calls AS (
  SELECT actor_id, agent_system, tool_name, tool_type, calls AS n, errors AS n_errors,
    duration_sum, duration_count
  FROM tool_days
  WHERE org_id = $org AND day >= $day_lo AND day < $day_hi
  UNION ALL
  SELECT actor_id, agent_system, tool_name, tool_type, 1 AS n,
    CASE WHEN outcome = 'error' THEN 1 ELSE 0 END AS n_errors,
    duration_ms AS duration_sum,
    CASE WHEN duration_ms IS NULL THEN 0 ELSE 1 END AS duration_count
  FROM tool_calls
  WHERE org_id = $org AND ts >= $start AND ts < $day_lo
  UNION ALL
  SELECT actor_id, agent_system, tool_name, tool_type, 1 AS n,
    CASE WHEN outcome = 'error' THEN 1 ELSE 0 END AS n_errors,
    duration_ms AS duration_sum,
    CASE WHEN duration_ms IS NULL THEN 0 ELSE 1 END AS duration_count
  FROM tool_calls
  WHERE org_id = $org AND ts >= $day_hi AND ts < $end
)

-- name: summary
SELECT
  sum(n) AS total_calls,
  count(DISTINCT tool_name) AS unique_tools
FROM calls;

-- name: breakdown
SELECT
  tool_name,
  tool_type,
  sum(n) AS calls,
  sum(n_errors) AS errors,
  CASE WHEN sum(duration_count) > 0 THEN sum(duration_sum) / sum(duration_count) END
    AS avg_duration_ms
FROM calls
GROUP BY tool_name, tool_type
ORDER BY calls DESC, tool_name, tool_type
LIMIT 50;

-- name: groups
SELECT
  /*group_value*/ AS group_value,
  sum(n) AS total_calls,
  count(DISTINCT tool_name) AS unique_tools
FROM calls /*group_join*/
GROUP BY group_value
ORDER BY total_calls DESC, group_value NULLS LAST
LIMIT $group_limit;
