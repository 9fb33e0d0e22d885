-- Statements of the PostgreSQL ingest write path (src/store/postgres/telemetry_writer.ts):
-- one transaction per export request. It locks the touched sessions, reads what
-- the batch depends on, then writes each table in one statement over arrays
-- (unnest), whatever the batch's size. {{<table>.columns}} and {{<table>.params}}
-- stand for the table's column list and one typed array parameter per column
-- (src/store/table_columns.ts).

-- Transaction-scoped advisory locks on the batch's sessions, taken in the
-- order of the array (sorted by the caller), so writers never deadlock.
-- name: lock_sessions
SELECT count(pg_advisory_xact_lock(k)) AS locked FROM unnest($1::bigint[]) AS k;

-- $1 values of the telemetry sequence, ascending.
-- name: reserve_seqs
SELECT nextval('telemetry_seq') AS seq FROM generate_series(1, $1::int);

-- name: stored_tool_calls
SELECT id, outcome, decision, source, trace_id, span_id FROM tool_calls WHERE id = ANY($1::text[]);

-- name: stored_decisions
SELECT d.session_id, d.tool_call_id, d.decision, d.decision_source
FROM unnest($2::text[], $3::text[]) AS k(session_id, tool_call_id)
JOIN decisions AS d
  ON d.org_id = $1 AND d.session_id = k.session_id AND d.tool_call_id = k.tool_call_id;

-- name: stored_sessions
SELECT session_id, provider_name FROM sessions WHERE org_id = $1 AND session_id = ANY($2::text[]);

-- name: stored_model_calls
SELECT id, cost_usd, estimated_cost_usd FROM model_calls WHERE id = ANY($1::text[]);

-- name: insert_sessions
INSERT INTO sessions ({{sessions.columns}})
SELECT * FROM unnest({{sessions.params}})
ON CONFLICT (org_id, session_id) DO NOTHING;

-- name: upsert_decisions
INSERT INTO decisions (org_id, session_id, tool_call_id, decision, decision_source)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
ON CONFLICT (org_id, session_id, tool_call_id)
DO UPDATE SET decision = excluded.decision, decision_source = excluded.decision_source;

-- name: annotate_decisions
UPDATE tool_calls AS t SET decision = a.decision, decision_source = a.decision_source, seq = a.seq
FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[])
  AS a(id, decision, decision_source, seq)
WHERE t.id = a.id;

-- A call's span arrived after its log: the span's ids are the call's own.
-- name: annotate_traces
UPDATE tool_calls AS t SET trace_id = a.trace_id, span_id = a.span_id, seq = a.seq
FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS a(id, trace_id, span_id, seq)
WHERE t.id = a.id;

-- name: delete_risk_flags
DELETE FROM risk_flags WHERE call_id = ANY($1::text[]);

-- name: delete_domain_hits
DELETE FROM domain_hits WHERE call_id = ANY($1::text[]);

-- name: insert_tombstones
INSERT INTO tombstones (seq, tbl, row_key)
SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[]);

-- name: delete_tool_calls
DELETE FROM tool_calls WHERE id = ANY($1::text[]);

-- name: insert_tool_calls
INSERT INTO tool_calls ({{tool_calls.columns}})
SELECT * FROM unnest({{tool_calls.params}});

-- name: insert_risk_flags
INSERT INTO risk_flags ({{risk_flags.columns}})
SELECT * FROM unnest({{risk_flags.params}})
ON CONFLICT DO NOTHING;

-- name: insert_domain_hits
INSERT INTO domain_hits ({{domain_hits.columns}})
SELECT * FROM unnest({{domain_hits.params}})
ON CONFLICT DO NOTHING;

-- Records of an export that stored nothing, added to their rows; keys not yet
-- stored are added, in the export's order, only up to 1,000 rows for the
-- organization (sql/sqlite/ingest.sql note_unmapped). One export's keys are
-- distinct and its organization one. The room left is counted once, before
-- the insert (a statement does not see its own rows).
-- name: note_unmapped
WITH u AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
    $7::bigint[], $8::bigint[]) WITH ORDINALITY
    AS u(org_id, actor_id, agent, agent_version, event_name, reason, records, seen, n)
),
known AS (
  SELECT u.* FROM u
  WHERE EXISTS (
    SELECT 1 FROM unmapped_events AS e
    WHERE e.org_id = u.org_id AND e.actor_id = u.actor_id AND e.agent = u.agent
      AND e.agent_version = u.agent_version AND e.event_name = u.event_name
      AND e.reason = u.reason
  )
),
fresh AS (
  SELECT * FROM u WHERE n NOT IN (SELECT n FROM known)
  ORDER BY n
  LIMIT greatest(0, 1000 - (
    SELECT count(*) FROM unmapped_events WHERE org_id = ($1::text[])[1]
  ))
)
INSERT INTO unmapped_events (org_id, actor_id, agent, agent_version, event_name, reason, records,
  first_seen, last_seen)
SELECT org_id, actor_id, agent, agent_version, event_name, reason, records, seen, seen
FROM (SELECT * FROM known UNION ALL SELECT * FROM fresh) AS rows
ON CONFLICT (org_id, actor_id, agent, agent_version, event_name, reason) DO UPDATE SET
  records = unmapped_events.records + excluded.records,
  first_seen = least(unmapped_events.first_seen, excluded.first_seen),
  last_seen = greatest(unmapped_events.last_seen, excluded.last_seen);

-- name: insert_model_calls
INSERT INTO model_calls ({{model_calls.columns}})
SELECT * FROM unnest({{model_calls.params}});

-- A reported cost replaces the estimate (docs/design.md §9).
-- name: fill_model_call_costs
UPDATE model_calls AS m SET cost_usd = f.cost_usd, estimated_cost_usd = NULL, seq = f.seq
FROM unnest($1::text[], $2::double precision[], $3::bigint[]) AS f(id, cost_usd, seq)
WHERE m.id = f.id AND m.cost_usd IS NULL;

-- name: set_session_providers
UPDATE sessions AS s SET seq = p.seq, provider_name = p.provider_name
FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[])
  AS p(seq, provider_name, org_id, session_id)
WHERE s.org_id = p.org_id AND s.session_id = p.session_id;

-- The first parent reported wins: a retried export changes nothing.
-- name: set_session_parents
UPDATE sessions AS s SET seq = p.seq, parent_session_id = p.parent_session_id
FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[])
  AS p(seq, parent_session_id, org_id, session_id)
WHERE s.org_id = p.org_id AND s.session_id = p.session_id AND s.parent_session_id IS NULL;

-- Each session's batch changes (see SessionChangeValues in src/store/ingest_batch.ts).
-- name: change_sessions
UPDATE sessions AS s SET
  seq = c.seq,
  first_seen = CASE WHEN c.calls > 0 THEN least(s.first_seen, c.first_seen) ELSE s.first_seen END,
  last_seen = CASE WHEN c.calls > 0 THEN greatest(s.last_seen, c.last_seen) ELSE s.last_seen END,
  tool_call_count = s.tool_call_count + c.calls,
  error_count = s.error_count + c.errors,
  success_count = s.success_count + c.oks,
  agent_version = CASE WHEN s.agent_version = '' THEN c.agent_version ELSE s.agent_version END,
  model = CASE WHEN c.model <> '' AND c.model_ts >= coalesce(s.model_ts, c.model_ts)
    THEN c.model ELSE s.model END,
  model_ts = CASE WHEN c.model <> '' AND c.model_ts >= coalesce(s.model_ts, c.model_ts)
    THEN c.model_ts ELSE s.model_ts END,
  cost_usd = s.cost_usd + c.cost,
  reported_cost_calls = s.reported_cost_calls + c.reported_cost_calls,
  estimated_cost_calls = s.estimated_cost_calls + c.estimated_cost_calls,
  estimated_cost_usd = s.estimated_cost_usd + c.estimated_cost_usd
FROM unnest(
  $1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[],
  $7::text[], $8::text[], $9::bigint[], $10::float8[], $11::text[], $12::text[],
  $13::bigint[], $14::bigint[], $15::float8[]
) AS c(
  seq, first_seen, last_seen, calls, errors, oks, agent_version, model, model_ts, cost, org_id,
  session_id, reported_cost_calls, estimated_cost_calls, estimated_cost_usd
)
WHERE s.org_id = c.org_id AND s.session_id = c.session_id;

-- Sessions' counts, first/last seen and model recomputed from their stored
-- calls (after a replaced call, or retention).
-- name: recount_sessions
UPDATE sessions AS s SET
  seq = r.seq,
  first_seen = c.first_seen,
  last_seen = c.last_seen,
  tool_call_count = c.calls,
  error_count = c.errors,
  success_count = c.oks,
  model = coalesce(m.model, ''),
  model_ts = m.ts
FROM unnest($1::bigint[], $2::text[], $3::text[]) AS r(seq, org_id, session_id)
CROSS JOIN LATERAL (
  SELECT min(ts) AS first_seen, max(ts) AS last_seen, count(*) AS calls,
    count(*) FILTER (WHERE outcome = 'error') AS errors,
    count(*) FILTER (WHERE outcome = 'ok') AS oks
  FROM tool_calls WHERE org_id = r.org_id AND session_id = r.session_id
) AS c
LEFT JOIN LATERAL (
  SELECT model, ts FROM tool_calls
  WHERE org_id = r.org_id AND session_id = r.session_id AND model IS NOT NULL AND model <> ''
  ORDER BY ts DESC, id DESC LIMIT 1
) AS m ON true
WHERE s.org_id = r.org_id AND s.session_id = r.session_id;

-- Each batch's calls in a session by one actor and agent
-- (SessionActorChangeValues in src/store/ingest_batch.ts), one row per key.
-- name: change_session_actors
INSERT INTO session_actors AS s (org_id, session_id, actor_id, agent_system, first_seen,
  last_seen, calls, errors, oks, model_key)
SELECT * FROM unnest(
  $1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[],
  $8::bigint[], $9::bigint[], $10::text[]
)
ON CONFLICT (org_id, session_id, actor_id, agent_system) DO UPDATE SET
  first_seen = least(s.first_seen, excluded.first_seen),
  last_seen = greatest(s.last_seen, excluded.last_seen),
  calls = s.calls + excluded.calls,
  errors = s.errors + excluded.errors,
  oks = s.oks + excluded.oks,
  model_key = greatest(s.model_key, excluded.model_key);

-- Sessions' rows per actor and agent rebuilt from their calls (after a
-- replaced call, or retention): cleared, then counted again.
-- name: clear_session_actors
DELETE FROM session_actors AS s
USING unnest($1::text[], $2::text[]) AS r(org_id, session_id)
WHERE s.org_id = r.org_id AND s.session_id = r.session_id;

-- name: recount_session_actors
INSERT INTO session_actors (org_id, session_id, actor_id, agent_system, first_seen, last_seen,
  calls, errors, oks, model_key)
SELECT c.org_id, c.session_id, c.actor_id, c.agent_system, min(c.ts), max(c.ts), count(*),
  count(*) FILTER (WHERE c.outcome = 'error'), count(*) FILTER (WHERE c.outcome = 'ok'),
  max(CASE WHEN c.model IS NOT NULL AND c.model <> ''
    THEN lpad(c.ts::text, 15, '0') || '|' || c.id || '|' || c.model END COLLATE "C")
FROM unnest($1::text[], $2::text[]) AS r(org_id, session_id)
JOIN tool_calls AS c ON c.org_id = r.org_id AND c.session_id = r.session_id
GROUP BY c.org_id, c.session_id, c.actor_id, c.agent_system;

-- name: calls_after
SELECT id, org_id, session_id FROM tool_calls WHERE id > $1 ORDER BY id LIMIT $2;

-- The calls to rescan as they are once their sessions are locked, with the
-- credential flag a redacted secret leaves behind.
-- name: calls_to_rescan
SELECT t.id, t.org_id, t.session_id, t.ts, t.tool_name, t.tool_type, t.category, t.tool_call_id,
  t.arguments, t.result, t.error_message, t.error_type, t.tool_description, t.agent_name,
  t.mcp_server_name, t.mcp_server_scope, t.cwd, f.evidence AS credential_evidence
FROM tool_calls AS t
LEFT JOIN risk_flags AS f ON f.call_id = t.id AND f.flag = 'credential_detected'
WHERE t.id = ANY($1::text[])
ORDER BY t.id;

-- name: update_call_texts
UPDATE tool_calls AS t SET arguments = u.arguments, result = u.result,
  error_message = u.error_message, error_type = u.error_type, tool_description = u.tool_description,
  agent_name = u.agent_name, mcp_server_name = u.mcp_server_name,
  mcp_server_scope = u.mcp_server_scope, cwd = u.cwd, seq = u.seq
FROM unnest(
  $1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
  $9::text[], $10::bigint[], $11::text[]
) AS u(
  arguments, result, error_message, error_type, tool_description, agent_name, mcp_server_name,
  mcp_server_scope, cwd, seq, id
)
WHERE t.id = u.id;

-- name: probe
SELECT 1 FROM tool_calls LIMIT 0;

-- name: probe_write
-- A real write (readiness while writes were refused): refused in a read-only
-- transaction; the value it takes is a gap like a rolled-back ingest's.
SELECT nextval('telemetry_seq') AS seq;

-- name: insert_metric_points
INSERT INTO metric_points ({{metric_points.columns}})
SELECT * FROM unnest({{metric_points.params}})
ON CONFLICT (id) DO NOTHING;

-- An export's dimension values ($2 keys, $3 values) join their keys' values
-- while a key has fewer than $4 in the organization $1 (docs/api.md §4.22), as
-- sql/sqlite/ingest.sql admit_dimension_value; of an export's new values of
-- one key, the first by code point are admitted until the key is full.
-- name: admit_dimension_value
WITH fresh AS (
  SELECT DISTINCT d.key, d.value
  FROM unnest($2::text[], $3::text[]) AS d(key, value)
  WHERE d.value IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM dimension_values AS v
    WHERE v.org_id = $1 AND v.key = d.key AND v.value = d.value
  )
),
ranked AS (
  SELECT key, value, row_number() OVER (PARTITION BY key ORDER BY value) AS n FROM fresh
)
INSERT INTO dimension_values (org_id, key, value)
SELECT $1::text, r.key, r.value
FROM ranked AS r
WHERE r.n <= $4 - (SELECT count(*) FROM dimension_values AS v WHERE v.org_id = $1 AND v.key = r.key)
ON CONFLICT (org_id, key, value) DO NOTHING;

-- The first value a session sends for a key is its value, when admitted.
-- name: note_session_dimension
INSERT INTO session_dimensions (org_id, session_id, key, value)
SELECT $1::text, d.session_id, d.key, d.value
FROM unnest($2::text[], $3::text[], $4::text[]) AS d(session_id, key, value)
WHERE EXISTS (
  SELECT 1 FROM dimension_values AS v WHERE v.org_id = $1 AND v.key = d.key AND v.value = d.value
)
ON CONFLICT (org_id, session_id, key) DO NOTHING;

-- A value not admitted (over the values of its key, or over its length: NULL)
-- is counted, never an error.
-- name: count_dropped_dimension
INSERT INTO dimension_drops (org_id, key, dropped)
SELECT $1::text, d.key, count(*)
FROM unnest($2::text[], $3::text[]) AS d(key, value)
WHERE NOT EXISTS (
  SELECT 1 FROM dimension_values AS v WHERE v.org_id = $1 AND v.key = d.key AND v.value = d.value
)
GROUP BY d.key
ON CONFLICT (org_id, key) DO UPDATE SET dropped = dimension_drops.dropped + excluded.dropped;
