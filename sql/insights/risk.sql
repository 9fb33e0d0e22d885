-- GET /v1/insights/risk (docs/api.md §4.13) on the DuckDB replica (SQLite and
-- PostgreSQL run it as is: the benchmark's baselines). A flag's time is
-- its tool call's time.

-- /*sessions*/ marks where the dimension filters (docs/api.md §4.22) narrow a
-- read to their sessions (src/analytics/insights.ts splices it; unfiltered: nothing).

-- name: summary
SELECT
  count(*) AS total_flags,
  count(DISTINCT session_id) AS sessions_flagged,
  count(DISTINCT flag) AS distinct_flag_kinds
FROM risk_flags
WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/;

-- name: series
SELECT
  ts - (((ts + $offset) % $width) + $width) % $width AS bucket,
  flag,
  count(*) AS flags
FROM risk_flags
WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/
GROUP BY bucket, flag
ORDER BY bucket, flag;

-- name: breakdown
SELECT
  flag,
  count(*) AS flags,
  count(DISTINCT session_id) AS sessions,
  count(DISTINCT tool_name) AS tools
FROM risk_flags
WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/
GROUP BY flag
ORDER BY flags DESC, flag
LIMIT 50;

-- group_by (docs/api.md §4.23): the summary per group, biggest first, ties by value
-- with the null group last; /*group_value*/ and /*group_join*/ become the group's
-- column or the join that finds it (src/analytics/insights.ts).
-- name: groups
SELECT
  /*group_value*/ AS group_value,
  count(*) AS total_flags,
  count(DISTINCT session_id) AS sessions_flagged,
  count(DISTINCT flag) AS distinct_flag_kinds
FROM risk_flags /*group_join*/
WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/
GROUP BY group_value
ORDER BY total_flags DESC, group_value NULLS LAST
LIMIT $group_limit;
