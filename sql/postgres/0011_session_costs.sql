-- What a session's model calls cost beside what they reported, on its row, as
-- sql/sqlite/telemetry_0014_session_costs.sql.
ALTER TABLE sessions ADD COLUMN reported_cost_calls BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN estimated_cost_calls BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN estimated_cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0;

UPDATE sessions AS s SET
  reported_cost_calls = c.reported,
  estimated_cost_calls = c.estimated,
  estimated_cost_usd = c.estimate
FROM (
  SELECT org_id, session_id, count(cost_usd) AS reported, count(estimated_cost_usd) AS estimated,
    coalesce(sum(estimated_cost_usd), 0) AS estimate
  FROM model_calls
  GROUP BY org_id, session_id
) AS c
WHERE s.org_id = c.org_id AND s.session_id = c.session_id;
