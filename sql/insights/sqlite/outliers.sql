-- GET /v1/insights/outliers (docs/api.md §4.11) on SQLite (telemetry.db), for the
-- benchmark. SQLite has no quantile_cont: the continuous 95th percentile is
-- interpolated between the ranked counts at floor and ceil of 0.95 * (n - 1);
-- no arg_max either: the latest call's values ride in a sortable text key.

-- name: summary
WITH counts AS (
  SELECT session_id, count(*) AS call_count
  FROM tool_calls
  WHERE org_id = $org AND ts >= $start AND ts < $end
  GROUP BY session_id
),
ranked AS (
  SELECT call_count, row_number() OVER (ORDER BY call_count) - 1 AS i FROM counts
),
position AS (
  SELECT count(*) AS n, (count(*) - 1) * 0.95 AS p FROM counts
),
threshold AS (
  SELECT
    position.n,
    CASE WHEN position.n = 0 THEN NULL ELSE
      lo.call_count + (position.p - CAST(position.p AS INTEGER))
        * (coalesce(hi.call_count, lo.call_count) - lo.call_count)
    END AS p95
  FROM position
  LEFT JOIN ranked AS lo ON lo.i = CAST(position.p AS INTEGER)
  LEFT JOIN ranked AS hi ON hi.i = CAST(position.p AS INTEGER) + 1
)
SELECT
  coalesce(threshold.p95, 0) AS p95_call_count,
  (SELECT count(*) FROM counts WHERE call_count > threshold.p95) AS outlier_count,
  threshold.n AS session_count
FROM threshold;

-- name: breakdown
WITH counts AS (
  SELECT session_id, count(*) AS call_count
  FROM tool_calls
  WHERE org_id = $org AND ts >= $start AND ts < $end
  GROUP BY session_id
),
ranked AS (
  SELECT call_count, row_number() OVER (ORDER BY call_count) - 1 AS i FROM counts
),
position AS (
  SELECT count(*) AS n, (count(*) - 1) * 0.95 AS p FROM counts
),
threshold AS (
  SELECT
    lo.call_count + (position.p - CAST(position.p AS INTEGER))
      * (coalesce(hi.call_count, lo.call_count) - lo.call_count) AS p95
  FROM position
  JOIN ranked AS lo ON lo.i = CAST(position.p AS INTEGER)
  LEFT JOIN ranked AS hi ON hi.i = CAST(position.p AS INTEGER) + 1
),
outliers AS (
  SELECT session_id, call_count
  FROM counts, threshold
  WHERE call_count > threshold.p95
  ORDER BY call_count DESC, session_id
  LIMIT 50
),
details AS (
  SELECT
    o.session_id,
    o.call_count,
    min(c.ts) AS first_seen,
    max(c.ts) AS last_seen,
    max(printf('%015d|%s|%s', c.ts, c.id, c.agent_system)) AS agent_key,
    max(CASE WHEN c.model IS NOT NULL AND c.model <> ''
      THEN printf('%015d|%s|%s', c.ts, c.id, c.model) END) AS model_key,
    count(*) FILTER (WHERE c.outcome = 'error') AS error_count
  FROM outliers AS o
  JOIN tool_calls AS c
    ON c.org_id = $org AND c.session_id = o.session_id AND c.ts >= $start AND c.ts < $end
  GROUP BY o.session_id, o.call_count
)
SELECT
  session_id,
  call_count,
  first_seen,
  last_seen,
  substr(agent_key, 17 + instr(substr(agent_key, 17), '|')) AS agent_system,
  coalesce(substr(model_key, 17 + instr(substr(model_key, 17), '|')), '') AS model,
  error_count
FROM details
ORDER BY call_count DESC, session_id;

-- group_by (docs/api.md §4.23): the summary per group, biggest first, ties by value
-- with the null group last; /*group_value*/ and /*group_join*/ become the group's
-- column or the join that finds it (src/analytics/insights.ts).
-- A group's p95 is over its own sessions' counts, interpolated as above.
-- name: groups
WITH counts AS (
  SELECT /*group_value*/ AS group_value, session_id, count(*) AS call_count
  FROM tool_calls /*group_join*/
  WHERE org_id = $org AND ts >= $start AND ts < $end
  GROUP BY group_value, session_id
),
ranked AS (
  SELECT
    group_value,
    call_count,
    row_number() OVER (PARTITION BY group_value ORDER BY call_count) - 1 AS i,
    count(*) OVER (PARTITION BY group_value) AS n
  FROM counts
),
thresholds AS (
  SELECT
    lo.group_value,
    lo.n AS session_count,
    lo.call_count + ((lo.n - 1) * 0.95 - CAST((lo.n - 1) * 0.95 AS INTEGER))
      * (coalesce(hi.call_count, lo.call_count) - lo.call_count) AS p95
  FROM ranked AS lo
  LEFT JOIN ranked AS hi ON hi.group_value IS lo.group_value AND hi.i = lo.i + 1
  WHERE lo.i = CAST((lo.n - 1) * 0.95 AS INTEGER)
)
SELECT
  t.group_value,
  t.p95 AS p95_call_count,
  (SELECT count(*) FROM counts AS c
    WHERE c.group_value IS t.group_value AND c.call_count > t.p95) AS outlier_count,
  t.session_count
FROM thresholds AS t
ORDER BY t.session_count DESC, t.group_value NULLS LAST
LIMIT $group_limit;
