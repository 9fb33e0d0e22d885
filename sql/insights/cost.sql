-- GET /v1/insights/cost (docs/api.md §4.12) on the DuckDB replica (SQLite and
-- PostgreSQL run it as is: the benchmark's baselines). cost_available is
-- true when any model call in the window reported a cost (0 included); costs
-- are 0 when none did. estimated_cost_usd sums the price table's estimates of
the calls that reported none (docs/design.md §9), never part of cost_usd.
The breakdown leaves out model calls without a model.

-- /*sessions*/ marks where the dimension filters (docs/api.md §4.22) narrow a
-- read to their sessions (src/analytics/insights.ts splices it; unfiltered: nothing).

-- name: summary
SELECT
  coalesce(sum(input_tokens), 0) AS input_tokens,
  coalesce(sum(output_tokens), 0) AS output_tokens,
  coalesce(sum(cache_read_tokens), 0) AS cache_read_tokens,
  coalesce(sum(cache_creation_tokens), 0) AS cache_creation_tokens,
  coalesce(sum(cost_usd), 0) AS cost_usd,
  count(cost_usd) > 0 AS cost_available,
  coalesce(sum(estimated_cost_usd), 0) AS estimated_cost_usd,
  count(*) AS call_count
FROM model_calls
WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/;

-- name: series
SELECT
  ts - (((ts + $offset) % $width) + $width) % $width AS bucket,
  sum(input_tokens) AS input_tokens,
  sum(output_tokens) AS output_tokens,
  coalesce(sum(cost_usd), 0) AS cost_usd,
  coalesce(sum(estimated_cost_usd), 0) AS estimated_cost_usd
FROM model_calls
WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/
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
  count(*) AS call_count
FROM model_calls
WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/ AND model <> ''
GROUP BY provider_name, model
ORDER BY sum(input_tokens) + sum(output_tokens) DESC, provider_name, model
LIMIT 50;

-- group_by (docs/api.md §4.23): the summary per group, biggest first, ties by value
-- with the null group last; /*group_value*/ and /*group_join*/ become the group's
-- column or the join that finds it (src/analytics/insights.ts).
-- name: groups
SELECT
  /*group_value*/ AS group_value,
  coalesce(sum(input_tokens), 0) AS input_tokens,
  coalesce(sum(output_tokens), 0) AS output_tokens,
  coalesce(sum(cache_read_tokens), 0) AS cache_read_tokens,
  coalesce(sum(cache_creation_tokens), 0) AS cache_creation_tokens,
  coalesce(sum(cost_usd), 0) AS cost_usd,
  count(cost_usd) > 0 AS cost_available,
  coalesce(sum(estimated_cost_usd), 0) AS estimated_cost_usd,
  count(*) AS call_count
FROM model_calls /*group_join*/
WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/
GROUP BY group_value
ORDER BY coalesce(sum(input_tokens), 0) + coalesce(sum(output_tokens), 0) DESC,
  group_value NULLS LAST
LIMIT $group_limit;
