-- GET /v1/insights/productivity (docs/api.md §4.16, an extension) on the
-- DuckDB replica. Parameters as the other insights, plus $actor ('' for none)
-- and $team (actor ids joined by commas, '' for none): the filters of
-- docs/api.md §4.2.1. `facts` opens every section (src/analytics/insights.ts prefixes it):
-- one row per metric point, tool call and model call of the window, with what
-- each adds to each figure.
--
-- - Metric points add what sql/metrics/interval_deltas.sql says (a delta its
--   value; a cumulative point the rise since the previous point of its series
--   and start time, or its whole value after a restart), differenced over the
--   series' whole history before the window, per actor.
-- - Lines: from the lines metric for every session that sent one; for any
--   other session, from its file-writing tool calls' arguments (tool_calls.
--   lines_added/lines_removed, derived by src/analytics/file_changes.ts).
-- - Cost: the cost metric for sessions that sent one, else the cost the
--   session's model calls reported (never both: Claude Code sends both).
--   Estimated cost: the price table's estimates of the model calls that
--   reported none (docs/design.md §9), in sessions without a cost metric.
-- - Sessions: distinct session ids with a metric point, tool call or model
--   call in the window.

-- /*sessions*/ marks where the dimension filters (docs/api.md §4.22) narrow a
-- read to their sessions (src/analytics/insights.ts splices it; unfiltered: nothing).

-- name: facts
WITH points AS (
  SELECT
    actor_id, agent_system, session_id, measure, type, decision, tool, language,
    ts - (((ts + $offset) % $width) + $width) % $width AS bucket,
    CASE
      WHEN temporality = 'delta' OR previous IS NULL THEN value
      WHEN monotonic = 1 AND value < previous THEN value
      ELSE value - previous
    END AS amount
  FROM (
    SELECT *,
      LAG(value) OVER (PARTITION BY actor_id, series_id, start_time_ns ORDER BY time_ns) AS previous
    FROM metric_points
    WHERE org_id = $org AND ts < $end /*sessions*/
      AND ($actor = '' OR actor_id = $actor)
      AND ($team = '' OR list_contains(string_split($team, ','), actor_id))
  )
  WHERE ts >= $start
),
metric_line_sessions AS (
  SELECT DISTINCT session_id FROM metric_points
  WHERE org_id = $org AND measure = 'lines' AND session_id <> ''
),
metric_cost_sessions AS (
  SELECT DISTINCT session_id FROM metric_points
  WHERE org_id = $org AND measure = 'cost_usd' AND session_id <> ''
),
-- Calls are summed per session and bucket before they meet the points: far fewer rows.
calls AS (
  SELECT
    actor_id, agent_system, session_id,
    ts - (((ts + $offset) % $width) + $width) % $width AS bucket,
    sum(lines_added) AS lines_added,
    sum(lines_removed) AS lines_removed,
    count(lines_added) > 0 AS has_lines
  FROM tool_calls
  WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/
    AND ($actor = '' OR actor_id = $actor)
    AND ($team = '' OR list_contains(string_split($team, ','), actor_id))
  GROUP BY actor_id, agent_system, session_id, bucket
),
model AS (
  SELECT
    actor_id, agent_system, session_id,
    ts - (((ts + $offset) % $width) + $width) % $width AS bucket,
    sum(cost_usd) AS cost,
    sum(estimated_cost_usd) AS estimate
  FROM model_calls
  WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/
    AND ($actor = '' OR actor_id = $actor)
    AND ($team = '' OR list_contains(string_split($team, ','), actor_id))
  GROUP BY actor_id, agent_system, session_id, bucket
),
facts AS (
  SELECT
    bucket, actor_id, agent_system AS agent, session_id,
    CASE WHEN measure = 'edit_decisions' THEN tool END AS tool,
    CASE WHEN measure = 'edit_decisions' THEN language END AS language,
    CASE WHEN measure = 'active_time_s' AND type = 'user' THEN amount END AS active_user,
    CASE WHEN measure = 'active_time_s' AND type = 'cli' THEN amount END AS active_cli,
    CASE WHEN measure = 'lines' AND type = 'added' THEN amount END AS lines_added,
    CASE WHEN measure = 'lines' AND type = 'removed' THEN amount END AS lines_removed,
    measure = 'lines' AS metric_lines,
    false AS derived_lines,
    CASE WHEN measure = 'commits' THEN amount END AS commits,
    CASE WHEN measure = 'pull_requests' THEN amount END AS pull_requests,
    CASE WHEN measure = 'edit_decisions' AND decision = 'accept' THEN amount END AS accepted,
    CASE WHEN measure = 'edit_decisions' AND decision = 'reject' THEN amount END AS rejected,
    CASE WHEN measure = 'cost_usd' THEN amount END AS cost,
    CAST(NULL AS DOUBLE) AS estimate
  FROM points
  UNION ALL
  SELECT
    c.bucket, c.actor_id, c.agent_system, c.session_id, NULL, NULL, NULL, NULL,
    CASE WHEN m.session_id IS NULL THEN c.lines_added END,
    CASE WHEN m.session_id IS NULL THEN c.lines_removed END,
    false,
    m.session_id IS NULL AND c.has_lines,
    NULL, NULL, NULL, NULL, NULL, NULL
  FROM calls AS c LEFT JOIN metric_line_sessions AS m ON m.session_id = c.session_id
  UNION ALL
  SELECT
    c.bucket, c.actor_id, c.agent_system, c.session_id, NULL, NULL, NULL, NULL, NULL, NULL,
    false, false, NULL, NULL, NULL, NULL,
    CASE WHEN m.session_id IS NULL THEN c.cost END,
    CASE WHEN m.session_id IS NULL THEN c.estimate END
  FROM model AS c LEFT JOIN metric_cost_sessions AS m ON m.session_id = c.session_id
)

-- Summary, series and breakdown in one pass over the facts (GROUPING SETS),
-- told apart by `level`: 7 the summary, 3 a bucket of the series, 4 an actor
-- and agent of the breakdown (up to 500, most sessions first).
-- name: rollup
SELECT
  GROUPING(bucket, actor_id, agent) AS level,
  bucket,
  actor_id,
  agent,
  count(DISTINCT session_id) FILTER (WHERE session_id <> '') AS sessions,
  sum(active_user) AS active_time_user_s,
  sum(active_cli) AS active_time_cli_s,
  sum(lines_added) AS lines_added,
  sum(lines_removed) AS lines_removed,
  CASE
    WHEN bool_or(metric_lines) AND bool_or(derived_lines) THEN 'mixed'
    WHEN bool_or(metric_lines) THEN 'metrics'
    WHEN bool_or(derived_lines) THEN 'tool_calls'
  END AS lines_source,
  sum(commits) AS commits,
  sum(pull_requests) AS pull_requests,
  sum(accepted) AS edits_accepted,
  sum(rejected) AS edits_rejected,
  coalesce(sum(accepted), 0)
    / nullif(coalesce(sum(accepted), 0) + coalesce(sum(rejected), 0), 0) AS acceptance_rate,
  sum(cost) AS cost_usd,
  sum(estimate) AS estimated_cost_usd,
  sum(cost) * 1000
    / nullif(coalesce(sum(lines_added), 0) + coalesce(sum(lines_removed), 0), 0)
    AS cost_per_1k_lines,
  sum(cost) / nullif(sum(commits), 0) AS cost_per_commit
FROM facts
GROUP BY GROUPING SETS ((), (bucket), (actor_id, agent))
QUALIFY row_number() OVER (
  PARTITION BY level ORDER BY bucket, sessions DESC, actor_id, agent
) <= 500
ORDER BY level DESC, bucket, sessions DESC, actor_id, agent;

-- Edit decisions by tool and language, nested into their breakdown row.
-- name: decisions
SELECT
  actor_id,
  agent,
  tool,
  language,
  coalesce(sum(accepted), 0) AS accepted,
  coalesce(sum(rejected), 0) AS rejected
FROM facts
WHERE accepted IS NOT NULL OR rejected IS NOT NULL
GROUP BY actor_id, agent, tool, language
ORDER BY actor_id, agent, tool, language;

-- group_by (docs/api.md §4.23): the summary per group, biggest first, ties by value
-- with the null group last; /*group_value*/ and /*group_join*/ become the group's
-- column or the join that finds it (src/analytics/insights.ts).
-- name: groups
SELECT
  /*group_value*/ AS group_value,
  count(DISTINCT session_id) FILTER (WHERE session_id <> '') AS sessions,
  sum(active_user) AS active_time_user_s,
  sum(active_cli) AS active_time_cli_s,
  sum(lines_added) AS lines_added,
  sum(lines_removed) AS lines_removed,
  CASE
    WHEN bool_or(metric_lines) AND bool_or(derived_lines) THEN 'mixed'
    WHEN bool_or(metric_lines) THEN 'metrics'
    WHEN bool_or(derived_lines) THEN 'tool_calls'
  END AS lines_source,
  sum(commits) AS commits,
  sum(pull_requests) AS pull_requests,
  sum(accepted) AS edits_accepted,
  sum(rejected) AS edits_rejected,
  coalesce(sum(accepted), 0)
    / nullif(coalesce(sum(accepted), 0) + coalesce(sum(rejected), 0), 0) AS acceptance_rate,
  sum(cost) AS cost_usd,
  sum(estimate) AS estimated_cost_usd,
  sum(cost) * 1000
    / nullif(coalesce(sum(lines_added), 0) + coalesce(sum(lines_removed), 0), 0)
    AS cost_per_1k_lines,
  sum(cost) / nullif(sum(commits), 0) AS cost_per_commit
FROM facts /*group_join*/
GROUP BY group_value
ORDER BY sessions DESC, group_value NULLS LAST
LIMIT $group_limit;
