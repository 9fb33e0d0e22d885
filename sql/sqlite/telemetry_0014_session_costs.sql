-- Schema 14 (issue #31): what a session's model calls cost beside what they
-- reported, kept on its row as the writer stores them (docs/design.md §9):
-- the calls that reported a cost, those the price table estimated, and the
-- estimates' sum. A page of sessions summed them from model_calls on every
-- read (~870 µs of a reader's time for 50 sessions at 1M calls); now it reads
-- them with the row. Filled here from the calls already stored.
ALTER TABLE sessions ADD COLUMN reported_cost_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN estimated_cost_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN estimated_cost_usd REAL NOT NULL DEFAULT 0;

UPDATE sessions SET
  reported_cost_calls = c.reported,
  estimated_cost_calls = c.estimated,
  estimated_cost_usd = c.estimate
FROM (
  SELECT org_id, session_id, count(cost_usd) AS reported, count(estimated_cost_usd) AS estimated,
    coalesce(sum(estimated_cost_usd), 0) AS estimate
  FROM model_calls
  GROUP BY org_id, session_id
) AS c
WHERE sessions.org_id = c.org_id AND sessions.session_id = c.session_id;
