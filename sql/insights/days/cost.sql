-- GET /v1/insights/cost (docs/api.md §4.12) over the per-day rollups (issue
-- #31; sql/duckdb/replica_days.sql): the whole UTC days in [$day_lo, $day_hi)
-- from model_days, the rest of the window from raw model calls, as
-- sql/insights/days/activity.sql does. Token and call counts are integer sums,
-- the same as the raw-row statements' (sql/insights/cost.sql, the reference);
-- cost_available is whether any reported cost was counted. Costs are sums of
-- doubles, added per day first: they may differ from the raw rows' sum in the
-- last bits (which the raw sum does too, in no fixed order over two threads),
-- never once rounded to 1e-9 USD unless a total lies within that of a
-- half-nano-dollar. model_days keeps no session: narrowed or grouped by a
-- dimension, cost reads raw rows.

-- name: rows
WITH calls AS (
  SELECT day AS ts, actor_id, agent_system, provider_name, model, input_tokens,
    output_tokens, cache_read_tokens, cache_creation_tokens, cost_usd, cost_count,
    estimated_cost_usd, calls AS n
  FROM model_days
  WHERE org_id = $org AND day >= $day_lo AND day < $day_hi
  UNION ALL
  SELECT ts, actor_id, agent_system, provider_name, model, input_tokens, output_tokens,
    cache_read_tokens, cache_creation_tokens, cost_usd,
    CASE WHEN cost_usd IS NULL THEN 0 ELSE 1 END AS cost_count, estimated_cost_usd, 1 AS n
  FROM model_calls
  WHERE org_id = $org AND ts >= $start AND ts < $day_lo
  UNION ALL
  SELECT ts, actor_id, agent_system, provider_name, model, input_tokens, output_tokens,
    cache_read_tokens, cache_creation_tokens, cost_usd,
    CASE WHEN cost_usd IS NULL THEN 0 ELSE 1 END AS cost_count, estimated_cost_usd, 1 AS n
  FROM model_calls
  WHERE org_id = $org AND ts >= $day_hi AND ts < $end
)

-- name: summary
SELECT
  coalesce(sum(input_tokens), 0) AS input_tokens,
  coalesce(sum(output_tokens), 0) AS output_tokens,
  coalesce(sum(cache_read_tokens), 0) AS cache_read_tokens,
  coalesce(sum(cache_creation_tokens), 0) AS cache_creation_tokens,
  coalesce(sum(cost_usd), 0) AS cost_usd,
  coalesce(sum(cost_count), 0) > 0 AS cost_available,
  coalesce(sum(estimated_cost_usd), 0) AS estimated_cost_usd,
  coalesce(sum(n), 0) AS call_count
FROM calls;

-- name: series
SELECT
  ts - (((ts + $offset) % $width) + $width) % $width AS bucket,
  sum(input_tokens) AS input_tokens,
  sum(output_tokens) AS output_tokens,
  coalesce(sum(cost_usd), 0) AS cost_usd,
  coalesce(sum(estimated_cost_usd), 0) AS estimated_cost_usd
FROM calls
GROUP BY bucket
ORDER BY bucket;

-- name: breakdown
SELECT
  provider_name,
  model,
  sum(input_tokens) AS input_tokens,
  sum(output_tokens) AS output_tokens,
  coalesce(sum(cost_usd), 0) AS cost_usd,
  coalesce(sum(estimated_cost_usd), 0) AS estimated_cost_usd,
  sum(n) AS call_count
FROM calls
WHERE model <> ''
GROUP BY provider_name, model
ORDER BY sum(input_tokens) + sum(output_tokens) DESC, provider_name, model
LIMIT 50;

-- name: groups
SELECT
  /*group_value*/ AS group_value,
  coalesce(sum(input_tokens), 0) AS input_tokens,
  coalesce(sum(output_tokens), 0) AS output_tokens,
  coalesce(sum(cache_read_tokens), 0) AS cache_read_tokens,
  coalesce(sum(cache_creation_tokens), 0) AS cache_creation_tokens,
  coalesce(sum(cost_usd), 0) AS cost_usd,
  coalesce(sum(cost_count), 0) > 0 AS cost_available,
  coalesce(sum(estimated_cost_usd), 0) AS estimated_cost_usd,
  sum(n) AS call_count
FROM calls /*group_join*/
GROUP BY group_value
ORDER BY coalesce(sum(input_tokens), 0) + coalesce(sum(output_tokens), 0) DESC,
  group_value NULLS LAST
LIMIT $group_limit;
