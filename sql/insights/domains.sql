-- GET /v1/insights/domains (docs/api.md §4.14) on the DuckDB replica (SQLite and
-- PostgreSQL run it as is: the benchmark's baselines): one hit per
-- (tool call, domain, scheme), timed by its tool call.

-- /*sessions*/ marks where the dimension filters (docs/api.md §4.22) narrow a
-- read to their sessions (src/analytics/insights.ts splices it; unfiltered: nothing).

-- name: summary
SELECT
  count(*) AS total_hits,
  count(DISTINCT domain) AS unique_domains,
  count(DISTINCT session_id) AS sessions
FROM domain_hits
WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/;

-- name: series
SELECT
  ts - (((ts + $offset) % $width) + $width) % $width AS bucket,
  count(*) AS hits,
  count(DISTINCT domain) AS unique_domains
FROM domain_hits
WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/
GROUP BY bucket
ORDER BY bucket;

-- name: breakdown
SELECT
  domain,
  scheme,
  count(*) AS hits,
  count(DISTINCT session_id) AS sessions
FROM domain_hits
WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/
GROUP BY domain, scheme
ORDER BY hits DESC, domain, scheme
LIMIT 50;

-- group_by (docs/api.md §4.23): the summary per group, biggest first, ties by value
-- with the null group last; /*group_value*/ and /*group_join*/ become the group's
-- column or the join that finds it (src/analytics/insights.ts).
-- name: groups
SELECT
  /*group_value*/ AS group_value,
  count(*) AS total_hits,
  count(DISTINCT domain) AS unique_domains,
  count(DISTINCT session_id) AS sessions
FROM domain_hits /*group_join*/
WHERE org_id = $org AND ts >= $start AND ts < $end /*sessions*/
GROUP BY group_value
ORDER BY total_hits DESC, group_value NULLS LAST
LIMIT $group_limit;
