-- Per-day rollups of the replica's tool and model calls (issue #31): what the
-- activity, top-tools and cost insights read for the whole UTC days of their
-- window, so that their cost follows days x groups instead of rows
-- (sql/insights/days/).
--
-- How they stay exact. The meta key days_through (epoch ms, a UTC midnight)
-- says how far they reach: for every day before it, the rollup rows of each
-- (org_id, day) add up to exactly the aggregate of that day's raw rows in the
-- same snapshot (a key may have several rows: all are summed). It holds because:
--
--   - every catch-up transaction that copies, replaces or deletes a tool or
--     model call of such a day, in the same transaction, either adds the new
--     rows' aggregate (rows the source marks fresh, which replace nothing:
--     src/analytics/late_rollups.ts folds them by key as they are appended and
--     appends the sums as more rollup rows, with the day in added_days) or
--     recomputes the whole day from its raw rows (refresh_days,
--     after the merge: it first deletes every rollup row of the day, added
--     ones included). A day is recomputed when it is noted in temp.stage_days:
--     the day of each row that may replace an old copy (src/analytics/replica.ts,
--     from the appended rows), of the old copy it replaces (mark_replaced_days,
--     when old copies may have another ts) and of the row a tombstone drops
--     (mark_tombstoned_days);
--   - days_through only moves forward (advance_*: the days between the old and
--     the new mark recomputed, then the mark moved, in one transaction, at the
--     end of a catch-up, up to the UTC day that holds the catch-up's start);
--     a day at or after it has no rollup row and is never read from one.
--
-- Noting too much only costs a recomputation. Added rows are merged back
-- into one row per key once a day (compact_days). Distinct counts are never
-- summed across days: activity_days keeps a row per (org, day, session,
-- actor, agent), so an insight counts DISTINCT session_id over its rows as
-- over raw rows; tool_days keeps rows per (org, day, actor, agent, tool name,
-- tool type) and counts DISTINCT tool_name the same way (it has no session:
-- top-tools narrowed or grouped by a dimension reads raw rows); model_days
-- likewise per (org, day, actor, agent, provider, model). Counts and tokens
-- are integer sums; top-tools' average is the sum of durations over their
-- count, as avg() computes it; costs are sums of doubles, added per day first
-- (sql/insights/days/cost.sql says what that leaves). tests/insights_days_test.ts
-- compares every answer with the raw rows' byte for byte. A day is midnight
-- UTC: ts minus its floor modulo 86400000 (negative times too).

-- name: create_day_tables
CREATE TABLE activity_days (
  org_id       VARCHAR NOT NULL,
  day          BIGINT NOT NULL,
  session_id   VARCHAR NOT NULL,
  actor_id     VARCHAR NOT NULL,
  agent_system VARCHAR NOT NULL,
  calls        BIGINT NOT NULL,
  errors       BIGINT NOT NULL
);

CREATE TABLE tool_days (
  org_id         VARCHAR NOT NULL,
  day            BIGINT NOT NULL,
  actor_id       VARCHAR NOT NULL,
  agent_system   VARCHAR NOT NULL,
  tool_name      VARCHAR NOT NULL,
  tool_type      VARCHAR NOT NULL,
  calls          BIGINT NOT NULL,
  errors         BIGINT NOT NULL,
  -- Over the calls with a duration (rejected calls have none).
  duration_sum   BIGINT NOT NULL,
  duration_count BIGINT NOT NULL
);

-- Nothing rolled up yet: the mark below every time (-(2^53 - 1), JavaScript's least safe integer).
CREATE TABLE model_days (
  org_id                VARCHAR NOT NULL,
  day                   BIGINT NOT NULL,
  actor_id              VARCHAR NOT NULL,
  agent_system          VARCHAR NOT NULL,
  provider_name         VARCHAR NOT NULL,
  model                 VARCHAR NOT NULL,
  input_tokens          BIGINT NOT NULL,
  output_tokens         BIGINT NOT NULL,
  cache_read_tokens     BIGINT NOT NULL,
  cache_creation_tokens BIGINT NOT NULL,
  -- NULL when no call of the day reported one (sum() of none); cost_count counts those that did.
  cost_usd              DOUBLE,
  cost_count            BIGINT NOT NULL,
  estimated_cost_usd    DOUBLE,
  calls                 BIGINT NOT NULL
);

-- The days late rows added aggregates to since they were last recomputed (late_rollups.ts).
CREATE TABLE added_days (org_id VARCHAR NOT NULL, day BIGINT NOT NULL);

INSERT INTO meta (key, value) VALUES ('days_through', '-9007199254740991');

-- The (org_id, day) pairs a catch-up transaction touched, and those of them
-- it recomputes (in the sync connection's temp catalog, emptied by refresh_days).

-- name: create_day_staging
CREATE TEMP TABLE stage_days (org_id VARCHAR NOT NULL, day BIGINT NOT NULL);
CREATE TEMP TABLE stage_day_refresh (org_id VARCHAR NOT NULL, day BIGINT NOT NULL);

-- With the tables of a first build (replica_schema.sql's clear_tables: one
-- that failed midway may have left rows). days_through stays: no raw row is
-- left, so no rollup row is exact for every day.

-- name: clear_day_tables
DELETE FROM activity_days;
DELETE FROM tool_days;
DELETE FROM model_days;
DELETE FROM added_days;

-- name: read_days_through
SELECT CAST(value AS BIGINT) AS days_through FROM meta WHERE key = 'days_through';

-- Before tombstones apply: the days of the rows they drop (by key alone:
-- noting a row a tombstone then keeps costs a recomputation only).

-- name: mark_tombstoned_days
INSERT INTO temp.stage_days
SELECT DISTINCT c.org_id, c.ts - ((c.ts % 86400000) + 86400000) % 86400000
FROM tool_calls AS c JOIN temp.stage_tombstones AS t ON t.tbl = 'tool_calls' AND c.id = t.row_key;

-- name: mark_tombstoned_model_days
INSERT INTO temp.stage_days
SELECT DISTINCT m.org_id, m.ts - ((m.ts % 86400000) + 86400000) % 86400000
FROM model_calls AS m JOIN temp.stage_tombstones AS t ON t.tbl = 'model_calls' AND m.id = t.row_key;

-- Before the merge deletes old copies by id (PostgreSQL: an old copy may have another ts).

-- name: mark_replaced_days
INSERT INTO temp.stage_days
SELECT DISTINCT org_id, ts - ((ts % 86400000) + 86400000) % 86400000
FROM tool_calls WHERE id IN (SELECT id FROM temp.stage_tool_calls);

-- name: mark_replaced_model_days
INSERT INTO temp.stage_days
SELECT DISTINCT org_id, ts - ((ts % 86400000) + 86400000) % 86400000
FROM model_calls WHERE id IN (SELECT id FROM temp.stage_model_calls);

-- After the merge: every noted day before days_through, recomputed from its
-- raw rows. The range join lets DuckDB read only the noted days' row groups.

-- name: refresh_days
INSERT INTO temp.stage_day_refresh
SELECT DISTINCT org_id, day FROM temp.stage_days
WHERE day < (SELECT CAST(value AS BIGINT) FROM meta WHERE key = 'days_through');
DELETE FROM activity_days AS a USING temp.stage_day_refresh AS r
WHERE a.org_id = r.org_id AND a.day = r.day;
DELETE FROM tool_days AS d USING temp.stage_day_refresh AS r
WHERE d.org_id = r.org_id AND d.day = r.day;
DELETE FROM model_days AS d USING temp.stage_day_refresh AS r
WHERE d.org_id = r.org_id AND d.day = r.day;
INSERT INTO activity_days
SELECT c.org_id, r.day, c.session_id, c.actor_id, c.agent_system,
  count(*), count(*) FILTER (WHERE c.outcome = 'error')
FROM tool_calls AS c JOIN temp.stage_day_refresh AS r
  ON c.org_id = r.org_id AND c.ts >= r.day AND c.ts < r.day + 86400000
GROUP BY c.org_id, r.day, c.session_id, c.actor_id, c.agent_system;
INSERT INTO tool_days
SELECT c.org_id, r.day, c.actor_id, c.agent_system, c.tool_name, c.tool_type,
  count(*), count(*) FILTER (WHERE c.outcome = 'error'),
  coalesce(sum(c.duration_ms), 0), count(c.duration_ms)
FROM tool_calls AS c JOIN temp.stage_day_refresh AS r
  ON c.org_id = r.org_id AND c.ts >= r.day AND c.ts < r.day + 86400000
GROUP BY c.org_id, r.day, c.actor_id, c.agent_system, c.tool_name, c.tool_type;
INSERT INTO model_days
SELECT m.org_id, r.day, m.actor_id, m.agent_system, m.provider_name, m.model,
  sum(m.input_tokens), sum(m.output_tokens), sum(m.cache_read_tokens),
  sum(m.cache_creation_tokens), sum(m.cost_usd), count(m.cost_usd),
  sum(m.estimated_cost_usd), count(*)
FROM model_calls AS m JOIN temp.stage_day_refresh AS r
  ON m.org_id = r.org_id AND m.ts >= r.day AND m.ts < r.day + 86400000
GROUP BY m.org_id, r.day, m.actor_id, m.agent_system, m.provider_name, m.model;
DELETE FROM added_days AS a USING temp.stage_day_refresh AS r
WHERE a.org_id = r.org_id AND a.day = r.day;
DELETE FROM temp.stage_day_refresh;
DELETE FROM temp.stage_days;

-- Moving days_through from $from to $to (both UTC midnights, $from < $to):
-- the days in between recomputed for every organization, then the mark moved,
-- in one transaction. Rows at or after $from are dropped first (none should
-- be there: a day is only ever rolled up below the mark).

-- name: advance_drop_activity
DELETE FROM activity_days WHERE day >= $from;

-- name: advance_drop_tools
DELETE FROM tool_days WHERE day >= $from;

-- name: advance_drop_models
DELETE FROM model_days WHERE day >= $from;

-- name: advance_activity
INSERT INTO activity_days
SELECT org_id, ts - ((ts % 86400000) + 86400000) % 86400000 AS day, session_id, actor_id,
  agent_system, count(*), count(*) FILTER (WHERE outcome = 'error')
FROM tool_calls WHERE ts >= $from AND ts < $to
GROUP BY org_id, day, session_id, actor_id, agent_system;

-- name: advance_tools
INSERT INTO tool_days
SELECT org_id, ts - ((ts % 86400000) + 86400000) % 86400000 AS day, actor_id, agent_system,
  tool_name, tool_type, count(*), count(*) FILTER (WHERE outcome = 'error'),
  coalesce(sum(duration_ms), 0), count(duration_ms)
FROM tool_calls WHERE ts >= $from AND ts < $to
GROUP BY org_id, day, actor_id, agent_system, tool_name, tool_type;

-- name: advance_models
INSERT INTO model_days
SELECT org_id, ts - ((ts % 86400000) + 86400000) % 86400000 AS day, actor_id, agent_system,
  provider_name, model, sum(input_tokens), sum(output_tokens), sum(cache_read_tokens),
  sum(cache_creation_tokens), sum(cost_usd), count(cost_usd), sum(estimated_cost_usd), count(*)
FROM model_calls WHERE ts >= $from AND ts < $to
GROUP BY org_id, day, actor_id, agent_system, provider_name, model;

-- Once a day with the advance, and after a build or a backlog: the days
-- late rows added aggregates to are noted for refresh_days, which recomputes
-- them into one row per key (and forgets them in added_days): the work is
-- the rows of those days (yesterday's, most days), not the whole rollups.

-- name: compact_days
INSERT INTO temp.stage_days SELECT DISTINCT org_id, day FROM added_days;

-- name: advance_mark
UPDATE meta SET value = CAST($to AS VARCHAR) WHERE key = 'days_through';
