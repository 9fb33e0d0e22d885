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
