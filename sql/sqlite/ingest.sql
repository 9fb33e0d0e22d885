-- Statements of the ingest write path (one transaction per export request).
-- {{<table>.columns}} and {{<table>.params}} stand for the table's column list
-- and one placeholder per column (src/store/table_columns.ts).

-- The keys of calls (sql/sqlite/telemetry_0015_keyed_calls.sql).
-- name: org_key
SELECT org_key FROM org_keys WHERE org_id = ?;

-- name: add_org_key
INSERT INTO org_keys (org_id) VALUES (?) RETURNING org_key;

-- name: session_key
SELECT session_key FROM session_keys WHERE session_id = ? AND org_key = ?;

-- name: add_session_key
INSERT INTO session_keys (session_id, org_key) VALUES (?, ?) RETURNING session_key;

-- name: actor_key
SELECT actor_key FROM actor_keys WHERE actor_id = ? AND org_key = ?;

-- name: add_actor_key
INSERT INTO actor_keys (actor_id, org_key) VALUES (?, ?) RETURNING actor_key;

-- A session's prompts (telemetry_0018_prompt_keys.sql).
-- name: prompt_key
SELECT prompt_key FROM prompt_keys WHERE prompt_id = ? AND session_key = ?;

-- name: add_prompt_key
INSERT INTO prompt_keys (prompt_id, session_key) VALUES (?, ?) RETURNING prompt_key;

-- name: read_seq
SELECT value FROM counters WHERE name = 'seq';

-- name: write_seq
UPDATE counters SET value = ? WHERE name = 'seq';

-- name: find_tool_call
SELECT outcome, source, trace_id, span_id FROM calls WHERE id = ?;

-- A call's row holds its organization's, session's and actor's keys where
-- tool_calls (model_calls) has their ids (src/store/sqlite/call_keys.ts).
-- name: insert_tool_call
INSERT INTO calls ({{tool_calls.keyed_columns}}) VALUES ({{tool_calls.params}});

-- name: delete_tool_call
DELETE FROM calls WHERE id = ?;

-- A call's span arrived after its log: the span's ids are the call's own.
-- name: annotate_trace
UPDATE calls SET trace_id = ?, span_id = ?, seq = ? WHERE id = ?;

-- name: annotate_decision
UPDATE calls SET decision = ?, decision_source = ?, seq = ?
WHERE id = ?;

-- Decisions are keyed by their session's key (schema 17); the lookup adds no
-- key for a session that has none.
-- name: find_decision
SELECT decision, decision_source FROM keyed_decisions
WHERE session_key = (
    SELECT s.session_key FROM session_keys AS s JOIN org_keys AS o ON o.org_key = s.org_key
    WHERE o.org_id = ? AND s.session_id = ?
  )
  AND tool_call_id = ?;

-- name: upsert_decision
INSERT INTO keyed_decisions (session_key, tool_call_id, decision, decision_source)
VALUES (?, ?, ?, ?)
ON CONFLICT (session_key, tool_call_id)
DO UPDATE SET decision = excluded.decision, decision_source = excluded.decision_source;

-- name: insert_risk_flag
INSERT OR IGNORE INTO risk_flags ({{risk_flags.columns}}) VALUES ({{risk_flags.params}});

-- name: delete_risk_flags
DELETE FROM risk_flags WHERE call_id = ?;

-- A hit holds its call's keys (schema 19): the parameters are domain_hits'
-- columns (src/store/table_columns.ts); the call's id names the organization
-- and the session (?4, ?6), so those two are not read.
-- name: insert_domain_hit
INSERT OR IGNORE INTO keyed_domain_hits (call_key, domain, scheme, org_key, seq, session_key, ts)
SELECT call_key, ?2, ?3, org_key, ?5, session_key, ?7 FROM calls WHERE id = ?1;

-- name: delete_domain_hits
DELETE FROM keyed_domain_hits WHERE call_key = (SELECT call_key FROM calls WHERE id = ?);

-- name: insert_tombstone
INSERT INTO tombstones (seq, tbl, row_key) VALUES (?, ?, ?);

-- name: insert_model_call
INSERT OR IGNORE INTO keyed_model_calls ({{model_calls.keyed_columns}})
VALUES ({{model_calls.params}});

-- name: find_model_call
SELECT cost_usd, estimated_cost_usd FROM keyed_model_calls WHERE id = ?;

-- A reported cost replaces the estimate (docs/design.md §9).
-- name: fill_model_call_cost
UPDATE keyed_model_calls SET cost_usd = ?, estimated_cost_usd = NULL, seq = ?
WHERE id = ? AND cost_usd IS NULL;

-- name: ensure_session
INSERT INTO sessions ({{sessions.columns}}) VALUES ({{sessions.params}})
ON CONFLICT (org_id, session_id) DO NOTHING;

-- name: find_session
SELECT provider_name FROM sessions WHERE org_id = ? AND session_id = ?;

-- One batch's changes to a session: counts added, first/last seen widened,
-- the model of its latest call that reports one, cost added. ?2/?3 are null
-- when the batch added no call.
-- name: add_to_session
UPDATE sessions SET
  seq = ?1,
  first_seen = CASE WHEN ?4 > 0 THEN min(coalesce(first_seen, ?2), ?2) ELSE first_seen END,
  last_seen = CASE WHEN ?4 > 0 THEN max(coalesce(last_seen, ?3), ?3) ELSE last_seen END,
  tool_call_count = tool_call_count + ?4,
  error_count = error_count + ?5,
  success_count = success_count + ?6,
  agent_version = CASE WHEN agent_version = '' THEN ?7 ELSE agent_version END,
  model = CASE WHEN ?8 <> '' AND ?9 >= coalesce(model_ts, ?9) THEN ?8 ELSE model END,
  model_ts = CASE WHEN ?8 <> '' AND ?9 >= coalesce(model_ts, ?9) THEN ?9 ELSE model_ts END,
  cost_usd = cost_usd + ?10,
  reported_cost_calls = reported_cost_calls + ?13,
  estimated_cost_calls = estimated_cost_calls + ?14,
  estimated_cost_usd = estimated_cost_usd + ?15
WHERE org_id = ?11 AND session_id = ?12;

-- A session's counters recounted from its calls (after a replaced call, or
-- retention). The session's calls are read once, through tool_calls_by_session
-- (MATERIALIZED): counted in place, `outcome = 'ok'` led the planner to
-- tool_calls_by_outcome, every ok call of the organization, 45 s at 10M calls
-- with the writer held.
-- name: recount_session
WITH session_calls AS MATERIALIZED (
  SELECT ts, id, outcome, model FROM tool_calls WHERE org_id = ?2 AND session_id = ?3
),
latest_model AS (
  SELECT model, ts FROM session_calls WHERE model IS NOT NULL AND model <> ''
  ORDER BY ts DESC, id DESC LIMIT 1
)
UPDATE sessions SET
  seq = ?1,
  first_seen = (SELECT min(ts) FROM session_calls),
  last_seen = (SELECT max(ts) FROM session_calls),
  tool_call_count = (SELECT count(*) FROM session_calls),
  error_count = (SELECT count(*) FROM session_calls WHERE outcome = 'error'),
  success_count = (SELECT count(*) FROM session_calls WHERE outcome = 'ok'),
  model = coalesce((SELECT model FROM latest_model), ''),
  model_ts = (SELECT ts FROM latest_model)
WHERE org_id = ?2 AND session_id = ?3;

-- name: set_session_provider
UPDATE sessions SET seq = ?, provider_name = ? WHERE org_id = ? AND session_id = ?;

-- The first parent reported wins: a retried export changes nothing.
-- name: set_session_parent
UPDATE sessions SET seq = ?, parent_session_id = ?
WHERE org_id = ? AND session_id = ? AND parent_session_id IS NULL;

-- name: calls_to_rescan
SELECT id, org_id, session_id, ts, tool_name, tool_type, category, tool_call_id, arguments, result,
  error_message, error_type, tool_description, agent_name, mcp_server_name, mcp_server_scope, cwd
FROM tool_calls
WHERE id > ?
ORDER BY id
LIMIT ?;

-- name: credential_flag
SELECT evidence FROM risk_flags WHERE call_id = ? AND flag = 'credential_detected';

-- name: update_call_text
UPDATE calls SET arguments = ?, result = ?, error_message = ?, error_type = ?,
  tool_description = ?, agent_name = ?, mcp_server_name = ?, mcp_server_scope = ?, cwd = ?, seq = ?
WHERE id = ?;

-- Records of an export that stored nothing, added to their row; a key not yet
-- stored is added only while the organization has fewer than 1,000 rows.
-- name: note_unmapped
INSERT INTO unmapped_events (org_id, actor_id, agent, agent_version, event_name, reason, records,
  first_seen, last_seen)
SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8
WHERE (SELECT count(*) FROM unmapped_events WHERE org_id = ?1) < 1000
  OR EXISTS (
    SELECT 1 FROM unmapped_events
    WHERE org_id = ?1 AND actor_id = ?2 AND agent = ?3 AND agent_version = ?4
      AND event_name = ?5 AND reason = ?6
  )
ON CONFLICT (org_id, actor_id, agent, agent_version, event_name, reason) DO UPDATE SET
  records = records + excluded.records,
  first_seen = min(first_seen, excluded.first_seen),
  last_seen = max(last_seen, excluded.last_seen);

-- name: insert_metric_point
INSERT OR IGNORE INTO metric_points ({{metric_points.columns}})
VALUES ({{metric_points.params}});

-- A batch's calls in a session by one actor and agent (SessionActorChangeValues
-- in src/store/ingest_batch.ts). SQLite's max() of a NULL is NULL: coalesce
-- keeps the model key that is there.
-- name: add_to_session_actor
INSERT INTO session_actors (org_id, session_id, actor_id, agent_system, first_seen, last_seen,
  calls, errors, oks, model_key)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (org_id, session_id, actor_id, agent_system) DO UPDATE SET
  first_seen = min(first_seen, excluded.first_seen),
  last_seen = max(last_seen, excluded.last_seen),
  calls = calls + excluded.calls,
  errors = errors + excluded.errors,
  oks = oks + excluded.oks,
  model_key = coalesce(max(model_key, excluded.model_key), model_key, excluded.model_key);

-- A session's rows per actor and agent rebuilt from its calls (after a
-- replaced call, or retention): cleared, then counted again.
-- name: clear_session_actors
DELETE FROM session_actors WHERE org_id = ? AND session_id = ?;

-- The session's calls are read first (MATERIALIZED): grouped in place, the
-- planner would walk the organization's calls in actor order to skip a sort.
-- name: recount_session_actors
INSERT INTO session_actors (org_id, session_id, actor_id, agent_system, first_seen, last_seen,
  calls, errors, oks, model_key)
WITH session_calls AS MATERIALIZED (
  SELECT org_id, session_id, actor_id, agent_system, ts, id, outcome, model FROM tool_calls
  WHERE org_id = ?1 AND session_id = ?2
)
SELECT org_id, session_id, actor_id, agent_system, min(ts), max(ts), count(*),
  sum(outcome = 'error'), sum(outcome = 'ok'),
  max(CASE WHEN model IS NOT NULL AND model <> '' THEN printf('%015d|%s|%s', ts, id, model) END)
FROM session_calls
GROUP BY actor_id, agent_system;

-- A session's dimension value joins its key's values while the key has fewer
-- than ?4 in the organization (docs/api.md §4.22); one already there is kept.
-- name: admit_dimension_value
INSERT INTO dimension_values (org_id, key, value)
SELECT ?1, ?2, ?3
WHERE (SELECT count(*) FROM dimension_values WHERE org_id = ?1 AND key = ?2) < ?4
ON CONFLICT (org_id, key, value) DO NOTHING;

-- The first value a session sends for a key is its value, when admitted.
-- name: note_session_dimension
INSERT INTO session_dimensions (org_id, session_id, key, value)
SELECT ?1, ?2, ?3, ?4
WHERE EXISTS (SELECT 1 FROM dimension_values WHERE org_id = ?1 AND key = ?3 AND value = ?4)
ON CONFLICT (org_id, session_id, key) DO NOTHING;

-- A value not admitted (over the values of its key, or over its length: NULL)
-- is counted, never an error.
-- name: count_dropped_dimension
INSERT INTO dimension_drops (org_id, key, dropped)
SELECT ?1, ?2, 1
WHERE NOT EXISTS (SELECT 1 FROM dimension_values WHERE org_id = ?1 AND key = ?2 AND value = ?3)
ON CONFLICT (org_id, key) DO UPDATE SET dropped = dropped + 1;
