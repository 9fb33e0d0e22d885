-- What each stored metric point adds to its interval (issue #18), the rule of
-- src/ingest/metrics/deltas.ts as a window query: a delta point adds its
-- value; a cumulative point adds its value minus the previous point's of the
-- same series and start time, or its whole value when it is the first of its
-- start time (a restart) or a monotonic value went down (an unmarked
-- restart). Runs as is on DuckDB, SQLite and PostgreSQL. Columns of
-- metric_points: id, series_id, temporality ('delta' | 'cumulative'),
-- monotonic (0/1), start_time_ns (NULL when absent), time_ns, value.
-- Points are stored once per (series_id, start_time_ns, time_ns).

-- name: interval_deltas
SELECT
  id,
  CASE
    WHEN temporality = 'delta' OR previous_value IS NULL THEN value
    WHEN monotonic = 1 AND value < previous_value THEN value
    ELSE value - previous_value
  END AS delta
FROM (
  SELECT
    id,
    temporality,
    monotonic,
    value,
    LAG(value) OVER (PARTITION BY series_id, start_time_ns ORDER BY time_ns) AS previous_value
  FROM metric_points
) AS points
ORDER BY id;
