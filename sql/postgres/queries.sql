-- Read statements of the query API on PostgreSQL: the statements of
-- sql/sqlite/queries.sql under the same names, returning the same columns,
-- values and order. `/*filters*/` is replaced by zero or more parameterized
-- `AND …` predicates built in src/store/telemetry_queries.ts; `?` placeholders
-- are numbered `$1, $2, …` before they run. Text orders byte-wise, as in
-- SQLite, because the telemetry columns are declared COLLATE "C"
-- (sql/postgres/0001_init.sql), which also keeps every index usable for it.
-- A page, or a detail, of sessions or tool calls carries each row's session
-- dimensions as a JSON object (`dimensions`, text, keys in order), read along
-- session_dimensions' primary key, so that it is one read (issue #31).

-- name: sessions_page
SELECT session_id, actor_id, first_seen, last_seen, tool_call_count, error_count,
  success_count, agent_system, agent_version, model, cost_usd, parent_session_id,
  reported_cost_calls, estimated_cost_calls, estimated_cost_usd,
  (SELECT coalesce(json_object_agg(m.key, m.value ORDER BY m.key), '{}')::text
    FROM session_dimensions AS m
    WHERE m.org_id = sessions.org_id AND m.session_id = sessions.session_id) AS dimensions
FROM sessions
WHERE org_id = ? AND last_seen IS NOT NULL /*filters*/
ORDER BY last_seen DESC, session_id DESC
LIMIT ?;

-- Sessions with calls since a time (`after` alone): a session's latest call
-- is its last_seen, so the session index gives the order and the page, and
-- only the page's sessions' calls since then are read (filtered_sessions_page
-- would group every call of the window first).
-- name: recent_sessions_page
WITH page AS MATERIALIZED (
  SELECT org_id, session_id, actor_id, first_seen, last_seen, tool_call_count, error_count,
    success_count, agent_system, agent_version, model, cost_usd, parent_session_id,
    reported_cost_calls, estimated_cost_calls, estimated_cost_usd
  FROM sessions
  WHERE org_id = ? AND last_seen >= ? /*page*/
  ORDER BY last_seen DESC, session_id DESC
  LIMIT ?
)
SELECT session_id, actor_id, first_seen, last_seen, tool_call_count, error_count,
  success_count, agent_system, agent_version,
  CASE WHEN model <> '' THEN lpad('0', 15, '0') || '||' || model END AS model_key,
  cost_usd, parent_session_id, reported_cost_calls, estimated_cost_calls, estimated_cost_usd,
  (SELECT coalesce(json_object_agg(m.key, m.value ORDER BY m.key), '{}')::text
    FROM session_dimensions AS m
    WHERE m.org_id = page.org_id AND m.session_id = page.session_id) AS dimensions
FROM page
WHERE first_seen >= ?
UNION ALL
SELECT s.session_id, s.actor_id, min(c.ts), s.last_seen, count(*),
  count(*) FILTER (WHERE c.outcome = 'error'), count(*) FILTER (WHERE c.outcome = 'ok'),
  s.agent_system, s.agent_version,
  max(CASE WHEN c.model IS NOT NULL AND c.model <> ''
    THEN lpad(c.ts::text, 15, '0') || '|' || c.id || '|' || c.model END COLLATE "C"),
  s.cost_usd, s.parent_session_id,
  s.reported_cost_calls, s.estimated_cost_calls, s.estimated_cost_usd,
  (SELECT coalesce(json_object_agg(m.key, m.value ORDER BY m.key), '{}')::text
    FROM session_dimensions AS m
    WHERE m.org_id = s.org_id AND m.session_id = s.session_id) AS dimensions
FROM page AS s
JOIN tool_calls AS c ON c.org_id = s.org_id AND c.session_id = s.session_id AND c.ts >= ?
WHERE s.first_seen < ?
GROUP BY s.org_id, s.session_id, s.actor_id, s.last_seen, s.agent_system, s.agent_version, s.cost_usd,
  s.parent_session_id,
  s.reported_cost_calls, s.estimated_cost_calls, s.estimated_cost_usd
ORDER BY last_seen DESC, session_id DESC;

-- name: filtered_sessions_page
SELECT g.session_id, s.actor_id, g.first_seen, g.last_seen, g.tool_call_count, g.error_count,
  g.success_count, s.agent_system, s.agent_version, g.model_key, s.cost_usd, s.parent_session_id,
  s.reported_cost_calls, s.estimated_cost_calls, s.estimated_cost_usd,
  (SELECT coalesce(json_object_agg(m.key, m.value ORDER BY m.key), '{}')::text
    FROM session_dimensions AS m
    WHERE m.org_id = s.org_id AND m.session_id = s.session_id) AS dimensions
FROM (
  SELECT session_id,
    min(ts) AS first_seen,
    max(ts) AS last_seen,
    count(*) AS tool_call_count,
    count(*) FILTER (WHERE outcome = 'error') AS error_count,
    count(*) FILTER (WHERE outcome = 'ok') AS success_count,
    -- The model of the latest matching call that reports one, in one pass:
    -- the text SQLite's printf('%015d|%s|%s', ts, id, model) gives.
    max(CASE WHEN model IS NOT NULL AND model <> ''
      THEN lpad(ts::text, 15, '0') || '|' || id || '|' || model END COLLATE "C") AS model_key
  FROM tool_calls
  WHERE org_id = ? /*filters*/
  GROUP BY session_id
) AS g
JOIN sessions AS s ON s.org_id = ? AND s.session_id = g.session_id
WHERE true /*page*/
ORDER BY g.last_seen DESC, g.session_id DESC
LIMIT ?;

-- Sessions of an actor, a team or an agent from the session_actors rollup:
-- see sql/sqlite/queries.sql. LATERAL keeps the lookups per page row (a hash
-- join would read every session of the organization; `LIMIT 1` keeps the
-- planner from turning the sessions lookup into one).
-- name: rollup_sessions_page
WITH walked AS (/*walks*/),
page AS (
  SELECT session_id, last_seen FROM walked
  ORDER BY last_seen DESC, session_id DESC
  LIMIT ?
)
SELECT p.session_id, s.actor_id, g.first_seen, p.last_seen, g.tool_call_count, g.error_count,
  g.success_count, s.agent_system, s.agent_version, g.model_key, s.cost_usd, s.parent_session_id,
  s.reported_cost_calls, s.estimated_cost_calls, s.estimated_cost_usd,
  (SELECT coalesce(json_object_agg(m.key, m.value ORDER BY m.key), '{}')::text
    FROM session_dimensions AS m
    WHERE m.org_id = s.org_id AND m.session_id = s.session_id) AS dimensions
FROM page AS p
CROSS JOIN LATERAL (
  -- sum(bigint) is numeric, which the driver returns as text: back to bigint.
  SELECT min(r.first_seen) AS first_seen, sum(r.calls)::bigint AS tool_call_count,
    sum(r.errors)::bigint AS error_count, sum(r.oks)::bigint AS success_count,
    max(r.model_key) AS model_key
  FROM session_actors AS r
  WHERE r.org_id = ? AND r.session_id = p.session_id /*rows*/
) AS g
CROSS JOIN LATERAL (
  SELECT org_id, session_id, actor_id, agent_system, agent_version, cost_usd, parent_session_id,
    reported_cost_calls, estimated_cost_calls, estimated_cost_usd FROM sessions
  WHERE org_id = ? AND session_id = p.session_id
  LIMIT 1
) AS s
ORDER BY p.last_seen DESC, p.session_id DESC;

-- The walks of rollup_sessions_page: see sql/sqlite/queries.sql.
-- name: rollup_sessions_by_actor
SELECT * FROM (
  SELECT r.session_id, r.last_seen
  FROM session_actors AS r
  WHERE r.org_id = ? AND r.actor_id = ? /*agent*/ /*page*/
    AND NOT EXISTS (
      SELECT 1 FROM session_actors AS x
      WHERE x.org_id = r.org_id AND x.session_id = r.session_id /*rows*/
        AND (x.last_seen, x.actor_id, x.agent_system) > (r.last_seen, r.actor_id, r.agent_system)
    )
  ORDER BY r.last_seen DESC, r.session_id DESC
  LIMIT ?
) AS w

-- name: rollup_sessions_by_agent
SELECT * FROM (
  SELECT r.session_id, r.last_seen
  FROM session_actors AS r
  WHERE r.org_id = ? AND r.agent_system = ? /*page*/
    AND NOT EXISTS (
      SELECT 1 FROM session_actors AS x
      WHERE x.org_id = r.org_id AND x.session_id = r.session_id /*rows*/
        AND (x.last_seen, x.actor_id, x.agent_system) > (r.last_seen, r.actor_id, r.agent_system)
    )
  ORDER BY r.last_seen DESC, r.session_id DESC
  LIMIT ?
) AS w

-- The sessions that reached a domain: see sql/sqlite/queries.sql.
-- name: rollup_sessions_by_domain
SELECT * FROM (
  WITH hits AS (
    SELECT session_id, last_seen FROM (
      SELECT session_id, last_seen FROM sessions
      WHERE org_id = ? AND last_seen IS NOT NULL /*page*/
      ORDER BY last_seen DESC, session_id DESC
      LIMIT ?
    ) AS r
    WHERE EXISTS (
      SELECT 1 FROM domain_hits AS d
      WHERE d.org_id = ? AND d.session_id = r.session_id AND d.domain = ?
    )
    LIMIT ?
  ),
  walk AS (
    SELECT CASE WHEN (SELECT count(*) FROM hits) = ? THEN true ELSE (
      SELECT count(*) FROM (
        SELECT 1 FROM sessions
        WHERE org_id = ? AND last_seen IS NOT NULL /*page*/
        ORDER BY last_seen DESC, session_id DESC
        LIMIT ?
      ) AS walked
    ) < ? END AS answers
  )
  SELECT session_id, last_seen FROM hits WHERE (SELECT answers FROM walk)
  UNION ALL
  SELECT * FROM (
    SELECT s.session_id, s.last_seen
    FROM (
      SELECT DISTINCT session_id FROM domain_hits WHERE org_id = ? AND domain = ?
    ) AS d
    JOIN sessions AS s ON s.org_id = ? AND s.session_id = d.session_id
    WHERE NOT (SELECT answers FROM walk) AND s.last_seen IS NOT NULL /*page*/
    ORDER BY s.last_seen DESC, s.session_id DESC
    LIMIT ?
  ) AS few
) AS w

-- name: session
SELECT session_id, actor_id, first_seen, last_seen, tool_call_count, error_count,
  success_count, agent_system, agent_version, model, cost_usd, parent_session_id,
  reported_cost_calls, estimated_cost_calls, estimated_cost_usd,
  (SELECT coalesce(json_object_agg(m.key, m.value ORDER BY m.key), '{}')::text
    FROM session_dimensions AS m
    WHERE m.org_id = sessions.org_id AND m.session_id = sessions.session_id) AS dimensions
FROM sessions
WHERE org_id = ? AND session_id = ? AND last_seen IS NOT NULL;

-- The sessions a session spawned (Codex subagents), oldest first.
-- name: child_sessions
SELECT session_id, actor_id, first_seen, last_seen, tool_call_count, error_count,
  success_count, agent_system, agent_version, model, cost_usd, parent_session_id,
  reported_cost_calls, estimated_cost_calls, estimated_cost_usd,
  (SELECT coalesce(json_object_agg(m.key, m.value ORDER BY m.key), '{}')::text
    FROM session_dimensions AS m
    WHERE m.org_id = sessions.org_id AND m.session_id = sessions.session_id) AS dimensions
FROM sessions
WHERE org_id = ? AND parent_session_id = ? AND last_seen IS NOT NULL
ORDER BY first_seen, session_id
LIMIT 1000;

-- Calls of one millisecond in the order they were reported (Gemini CLI logs a
-- batch of parallel calls at one time), the same in every organization.
-- name: session_tool_calls
SELECT id, ts, tool_name, tool_type, category, duration_ms, outcome, error_message, decision,
  decision_source
FROM tool_calls
WHERE org_id = ? AND session_id = ?
ORDER BY ts, seq, id
LIMIT 5000;

-- name: session_risk_flags
SELECT ts, tool_call_id, tool_name, flag, evidence
FROM risk_flags
WHERE org_id = ? AND session_id = ?
ORDER BY ts, flag, call_id
LIMIT 5000;

-- name: session_domains
SELECT domain, scheme, count(*) AS hits
FROM domain_hits
WHERE org_id = ? AND session_id = ?
GROUP BY domain, scheme
ORDER BY hits DESC, domain, scheme
LIMIT 5000;

-- A session's model calls, oldest first, ties by id: its rows are found
-- through model_calls_by_session (org_id, session_id) and only they are sorted.
-- name: session_model_calls
SELECT id, ts, provider_name, model, input_tokens, output_tokens, cache_read_tokens,
  cache_creation_tokens, cost_usd, duration_ms, estimated_cost_usd
FROM model_calls
WHERE org_id = ? AND session_id = ?
ORDER BY ts, id
LIMIT 5000;

-- name: tool_calls_page
SELECT id, ts, session_id, actor_id, tool_name, tool_type, category, duration_ms, outcome,
  error_message, decision, decision_source, agent_system, model,
  (SELECT coalesce(json_object_agg(m.key, m.value ORDER BY m.key), '{}')::text
    FROM session_dimensions AS m
    WHERE m.org_id = tool_calls.org_id AND m.session_id = tool_calls.session_id) AS dimensions
FROM tool_calls /*index*/
WHERE org_id = ? /*filters*/
ORDER BY ts DESC, id DESC
LIMIT ?;

-- A page of the export (/v1/export/tool-calls): the list's columns oldest
-- first, each call with its risk flags and external domains as JSON arrays
-- (text, as SQLite gives them), read along the primary keys of risk_flags and
-- domain_hits (call id first), in flag and in domain order.
-- name: export_tool_calls_page
SELECT id, ts, session_id, actor_id, tool_name, tool_type, category, duration_ms, outcome,
  error_message, decision, decision_source, agent_system, model,
  (SELECT coalesce(json_agg(json_build_object('flag', f.flag, 'evidence', f.evidence)
    ORDER BY f.flag), '[]')::text
    FROM risk_flags AS f WHERE f.call_id = tool_calls.id) AS risk_flags,
  (SELECT coalesce(json_agg(json_build_object('domain', d.domain, 'scheme', d.scheme)
    ORDER BY d.domain, d.scheme), '[]')::text
    FROM domain_hits AS d WHERE d.call_id = tool_calls.id) AS external_domains,
  (SELECT coalesce(json_object_agg(m.key, m.value ORDER BY m.key), '{}')::text
    FROM session_dimensions AS m
    WHERE m.org_id = tool_calls.org_id AND m.session_id = tool_calls.session_id) AS dimensions
FROM tool_calls /*index*/
WHERE org_id = ? /*filters*/
ORDER BY ts, id
LIMIT ?;

-- A page of the export of whole sessions (/v1/export/sessions) by last_seen,
-- oldest first, along sessions_by_last_seen read backwards.
-- name: export_sessions_page
SELECT session_id, actor_id, first_seen, last_seen, tool_call_count, error_count,
  success_count, agent_system, agent_version, model, cost_usd, parent_session_id,
  reported_cost_calls, estimated_cost_calls, estimated_cost_usd,
  (SELECT coalesce(json_object_agg(m.key, m.value ORDER BY m.key), '{}')::text FROM session_dimensions AS m
    WHERE m.org_id = s.org_id AND m.session_id = s.session_id) AS dimensions
FROM sessions AS s
WHERE org_id = ? AND last_seen IS NOT NULL /*filters*/
ORDER BY last_seen, session_id
LIMIT ?;

-- The columns of the write path's list (src/store/table_columns.ts), not
-- `txid`, and the call's session dimensions.
-- name: tool_call
SELECT {{tool_calls.columns}},
  (SELECT coalesce(json_object_agg(m.key, m.value ORDER BY m.key), '{}')::text
    FROM session_dimensions AS m
    WHERE m.org_id = tool_calls.org_id AND m.session_id = tool_calls.session_id) AS dimensions
FROM tool_calls WHERE org_id = ? AND id = ?;

-- Facets walk an index one distinct value at a time (a skip scan), so they
-- cost one seek per value, not a scan of every row. The organization is bound
-- once and used twice, so these name it `$1` rather than `?`.

-- name: facet_agents
WITH RECURSIVE v(value) AS (
  SELECT min(agent_system) FROM sessions WHERE org_id = $1
  UNION ALL
  SELECT (SELECT min(agent_system) FROM sessions WHERE org_id = $1 AND agent_system > v.value)
  FROM v WHERE v.value IS NOT NULL
)
SELECT value FROM v WHERE value IS NOT NULL LIMIT 1000;

-- name: facet_domains
WITH RECURSIVE v(value) AS (
  SELECT min(domain) FROM domain_hits WHERE org_id = $1
  UNION ALL
  SELECT (SELECT min(domain) FROM domain_hits WHERE org_id = $1 AND domain > v.value)
  FROM v WHERE v.value IS NOT NULL
)
SELECT value FROM v WHERE value IS NOT NULL LIMIT 1000;

-- name: facet_tool_names
WITH RECURSIVE v(value) AS (
  SELECT min(tool_name) FROM tool_calls WHERE org_id = $1
  UNION ALL
  SELECT (SELECT min(tool_name) FROM tool_calls WHERE org_id = $1 AND tool_name > v.value)
  FROM v WHERE v.value IS NOT NULL
)
SELECT value FROM v WHERE value IS NOT NULL LIMIT 1000;

-- name: facet_tool_types
WITH RECURSIVE v(value) AS (
  SELECT min(tool_type) FROM tool_calls WHERE org_id = $1
  UNION ALL
  SELECT (SELECT min(tool_type) FROM tool_calls WHERE org_id = $1 AND tool_type > v.value)
  FROM v WHERE v.value IS NOT NULL
)
SELECT value FROM v WHERE value IS NOT NULL LIMIT 1000;

-- name: facet_categories
WITH RECURSIVE v(value) AS (
  SELECT min(category) FROM tool_calls WHERE org_id = $1
  UNION ALL
  SELECT (SELECT min(category) FROM tool_calls WHERE org_id = $1 AND category > v.value)
  FROM v WHERE v.value IS NOT NULL
)
SELECT value FROM v WHERE value IS NOT NULL LIMIT 1000;

-- What an organization's agents sent that stored nothing, summed over actors
-- (or one actor's), newest first.
-- name: unmapped_events
SELECT agent, agent_version, event_name, reason, sum(records)::bigint AS records,
  min(first_seen) AS first_seen, max(last_seen) AS last_seen
FROM unmapped_events
WHERE org_id = ? AND (? = '' OR actor_id = ?)
GROUP BY agent, agent_version, event_name, reason
ORDER BY max(last_seen) DESC, agent, agent_version, event_name, reason
LIMIT 1000;

-- The fleet (GET /v1/fleet): as sql/sqlite/queries.sql reads it, by the same indexes.
-- name: fleet
WITH RECURSIVE
  called(actor_id) AS (
    SELECT min(actor_id) FROM session_actors WHERE org_id = $1
    UNION ALL
    SELECT (SELECT min(actor_id) FROM session_actors WHERE org_id = $1 AND actor_id > c.actor_id)
    FROM called AS c WHERE c.actor_id IS NOT NULL
  ),
  unmapped(actor_id) AS (
    SELECT min(actor_id) FROM unmapped_events WHERE org_id = $1
    UNION ALL
    SELECT (SELECT min(actor_id) FROM unmapped_events WHERE org_id = $1 AND actor_id > u.actor_id)
    FROM unmapped AS u WHERE u.actor_id IS NOT NULL
  ),
  seen(actor_id, last_seen) AS (
    SELECT c.actor_id, (
      SELECT last_seen FROM session_actors
      WHERE org_id = $1 AND actor_id = c.actor_id
      ORDER BY last_seen DESC LIMIT 1
    )
    FROM called AS c WHERE c.actor_id IS NOT NULL
    UNION ALL
    SELECT u.actor_id, (
      SELECT max(last_seen) FROM unmapped_events WHERE org_id = $1 AND actor_id = u.actor_id
    )
    FROM unmapped AS u WHERE u.actor_id IS NOT NULL
  ),
  senders AS MATERIALIZED (
    SELECT actor_id, max(last_seen) AS last_seen FROM seen GROUP BY actor_id
  ),
  fleet AS MATERIALIZED (
    SELECT actor_id, last_seen FROM senders
    WHERE last_seen <= $2
    ORDER BY last_seen DESC, actor_id
    LIMIT $4
  )
SELECT 'sender' AS kind, actor_id, '' AS agent, '' AS agent_version, '' AS event_name,
  '' AS reason, last_seen, NULL::bigint AS count
FROM senders WHERE actor_id NOT IN (SELECT actor_id FROM fleet)
UNION ALL
SELECT 'actor', f.actor_id, '', '', '', '', f.last_seen, (
    SELECT count(DISTINCT r.session_id)
    FROM session_actors AS r
    WHERE r.org_id = $1 AND r.actor_id = f.actor_id AND r.last_seen >= $3
  )
FROM fleet AS f
UNION ALL
-- LATERAL and a subquery per row: one walk of each answered actor's index
-- range and one key lookup of each of its sessions, whatever the estimates
-- (joined, the planner hashed the organization's sessions once per actor).
SELECT 'agent', f.actor_id, a.agent_system, a.agent_version, '', '', a.last_seen, NULL::bigint
FROM fleet AS f
CROSS JOIN LATERAL (
  SELECT r.agent_system, (
      SELECT CASE WHEN s.agent_system = r.agent_system THEN s.agent_version ELSE '' END
      FROM sessions AS s WHERE s.org_id = $1 AND s.session_id = r.session_id
    ) AS agent_version,
    max(r.last_seen) AS last_seen
  FROM session_actors AS r
  WHERE r.org_id = $1 AND r.actor_id = f.actor_id
  GROUP BY 1, 2
) AS a
UNION ALL
SELECT 'unmapped', f.actor_id, u.agent, '', u.event_name, u.reason, u.last_seen, u.records
FROM fleet AS f
CROSS JOIN LATERAL (
  SELECT agent, event_name, reason, max(last_seen) AS last_seen, sum(records)::bigint AS records
  FROM unmapped_events
  WHERE org_id = $1 AND actor_id = f.actor_id
  GROUP BY agent, event_name, reason
) AS u;

-- Every session of the organization with one dimension key, and its value:
-- what groups an insight by `dim.<key>` on the replica (docs/api.md §4.23).
-- name: session_dimension_values
SELECT session_id, value FROM session_dimensions WHERE org_id = ? AND key = ?;

-- GET /v1/dimensions: every key's values, sorted (at most 1,000 per key by
-- the write path's bound), and what each key dropped.
-- name: dimension_values
SELECT key, value FROM dimension_values WHERE org_id = ? ORDER BY key, value;

-- name: dimension_drops
SELECT key, dropped FROM dimension_drops WHERE org_id = ? ORDER BY key;

-- The repository facet of /v1/sessions/facets: the `repository` dimension's values.
-- name: facet_repositories
SELECT value FROM dimension_values WHERE org_id = ? AND key = 'repository'
ORDER BY value LIMIT 1000;

-- A page of tool calls (/*page*/: tool_calls_page or export_tool_calls_page)
-- narrowed to the sessions with some dimensions (/*sessions*/: the first
-- dimension's sessions, the others' as predicates). When at most ? such
-- sessions hold at most ? calls (their stored counts; at most that many
-- sessions are read to know), the page reads their calls along the session
-- index (/*few*/), else as it reads them unnarrowed (/*many*/). The branch not
-- chosen has LIMIT 0, which both engines stop before it reads a row. One
-- statement: the choice and the page see one snapshot.
-- (PostgreSQL: the same shape, its planner choosing the index.)
-- name: tool_calls_by_dimension
WITH dimset AS MATERIALIZED (
  /*sessions*/
  LIMIT ?
),
dim AS MATERIALIZED (
  SELECT count(*) <= ? AND coalesce(sum(s.tool_call_count), 0) <= ? AS few
  FROM dimset AS d
  JOIN sessions AS s ON s.org_id = ? AND s.session_id = d.session_id
)
SELECT * FROM (/*few*/) AS few
UNION ALL
SELECT * FROM (/*many*/) AS many
ORDER BY /*order*/;

-- The session column a page read in time order tests (tool_calls_by_dimension's
-- many branch): the planner picks the index from its statistics.
-- name: session_column_by_time
session_id

-- The index a page of tool calls of a few sessions reads (tool_calls_by_dimension).
-- name: session_calls_index
/* the planner picks the index from its statistics */
