-- Read statements of the query API. `/*filters*/` is replaced by zero or more
-- parameterized `AND …` predicates built in src/store/telemetry_queries.ts.
-- A page, or a detail, of sessions or tool calls carries each row's session
-- dimensions as a JSON object (`dimensions`, text), read along
-- session_dimensions' primary key, so that it is one read (issue #31).

-- name: sessions_page
SELECT session_id, actor_id, first_seen, last_seen, tool_call_count, error_count,
  success_count, agent_system, agent_version, model, cost_usd, parent_session_id,
  reported_cost_calls, estimated_cost_calls, estimated_cost_usd,
  (SELECT json_group_object(m.key, m.value) FROM session_dimensions AS m
    WHERE m.org_id = sessions.org_id AND m.session_id = sessions.session_id) AS dimensions
FROM sessions
WHERE org_id = ? AND last_seen IS NOT NULL /*filters*/
ORDER BY last_seen DESC, session_id DESC
LIMIT ?;

-- Sessions with calls since a time (`after` alone): a session's latest call
-- is its last_seen, so the session index gives the order and the page, and
-- only the page's sessions' calls since then are read (filtered_sessions_page
-- would group every call of the window first). A session that began at or
-- after the bound has every call in the window: its stored row is already
-- the answer (the same as the unfiltered list's), so only the sessions that
-- straddle the bound read their calls (at 1M calls a page of 50 read ~3,300
-- calls, 6.7 ms, where most sessions of a recent page began inside it).
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
  CASE WHEN model <> '' THEN printf('%015d||%s', 0, model) END AS model_key,
  cost_usd, parent_session_id, reported_cost_calls, estimated_cost_calls, estimated_cost_usd,
  (SELECT json_group_object(m.key, m.value) FROM session_dimensions AS m
    WHERE m.org_id = page.org_id AND m.session_id = page.session_id) AS dimensions
FROM page
WHERE first_seen >= ?
UNION ALL
SELECT s.session_id, s.actor_id, min(c.ts), s.last_seen, count(*),
  sum(c.outcome = 'error'), sum(c.outcome = 'ok'), s.agent_system, s.agent_version,
  max(CASE WHEN c.model IS NOT NULL AND c.model <> ''
    THEN printf('%015d|%s|%s', c.ts, c.id, c.model) END),
  s.cost_usd, s.parent_session_id,
  s.reported_cost_calls, s.estimated_cost_calls, s.estimated_cost_usd,
  (SELECT json_group_object(m.key, m.value) FROM session_dimensions AS m
    WHERE m.org_id = s.org_id AND m.session_id = s.session_id) AS dimensions
FROM page AS s
CROSS JOIN tool_calls AS c ON c.org_id = s.org_id AND c.session_id = s.session_id AND c.ts >= ?
WHERE s.first_seen < ?
GROUP BY s.session_id
ORDER BY last_seen DESC, session_id DESC;

-- name: filtered_sessions_page
SELECT g.session_id, s.actor_id, g.first_seen, g.last_seen, g.tool_call_count, g.error_count,
  g.success_count, s.agent_system, s.agent_version, g.model_key, s.cost_usd, s.parent_session_id,
  s.reported_cost_calls, s.estimated_cost_calls, s.estimated_cost_usd,
  (SELECT json_group_object(m.key, m.value) FROM session_dimensions AS m
    WHERE m.org_id = s.org_id AND m.session_id = s.session_id) AS dimensions
FROM (
  SELECT session_id,
    min(ts) AS first_seen,
    max(ts) AS last_seen,
    count(*) AS tool_call_count,
    sum(outcome = 'error') AS error_count,
    sum(outcome = 'ok') AS success_count,
    -- The model of the latest matching call that reports one, in one pass.
    max(CASE WHEN model IS NOT NULL AND model <> ''
      THEN printf('%015d|%s|%s', ts, id, model) END) AS model_key
  FROM tool_calls
  WHERE org_id = ? /*filters*/
  -- `+` keeps the planner from walking the session index for the grouping:
  -- the filters' own index (actor, time, …) reads far fewer rows.
  GROUP BY +session_id
) AS g
-- CROSS JOIN keeps the order: one primary-key lookup per matching session.
CROSS JOIN sessions AS s ON s.org_id = ? AND s.session_id = g.session_id
WHERE 1 = 1 /*page*/
ORDER BY g.last_seen DESC, g.session_id DESC
LIMIT ?;

-- Sessions of an actor, a team or an agent, from the session_actors rollup
-- (one row per session, actor and agent; sql/sqlite/telemetry_0007_session_actors.sql):
-- the answer of filtered_sessions_page, reading about `limit` rows per walk.
-- `/*walks*/` is one or more rollup_sessions_by_actor (one per actor of a
-- team) joined by UNION ALL, or one rollup_sessions_by_agent; `/*rows*/` is
-- the filter on a rollup row (actor, team, agent).
-- A session's last_seen is that of its latest row, so only the pages' walks
-- are read: each takes a session only at that row (NOT EXISTS a later one),
-- so it gives each session once and in the order of the page.
-- name: rollup_sessions_page
WITH walked AS (/*walks*/),
page AS (
  SELECT session_id, last_seen FROM walked
  ORDER BY last_seen DESC, session_id DESC
  LIMIT ?
)
SELECT p.session_id, s.actor_id, min(r.first_seen) AS first_seen, p.last_seen,
  sum(r.calls) AS tool_call_count, sum(r.errors) AS error_count, sum(r.oks) AS success_count,
  s.agent_system, s.agent_version, max(r.model_key) AS model_key, s.cost_usd,
  s.parent_session_id, s.reported_cost_calls, s.estimated_cost_calls, s.estimated_cost_usd,
  (SELECT json_group_object(m.key, m.value) FROM session_dimensions AS m
    WHERE m.org_id = s.org_id AND m.session_id = s.session_id) AS dimensions
FROM page AS p
CROSS JOIN session_actors AS r ON r.org_id = ? AND r.session_id = p.session_id /*rows*/
CROSS JOIN sessions AS s ON s.org_id = ? AND s.session_id = p.session_id
GROUP BY p.session_id
ORDER BY p.last_seen DESC, p.session_id DESC;

-- The walks of rollup_sessions_page, down one actor's or one agent's index
-- of session_actors, newest first: `/*agent*/` adds an agent to an actor's
-- walk, `/*page*/` starts after the cursor, `/*rows*/` is the filter on x.
-- The indexes are named: without statistics the planner would check each
-- row's later rows (x) along the actor's index instead of the session's key,
-- and walk an agent's rows for an actor and agent.
-- name: rollup_sessions_by_actor
SELECT * FROM (
  SELECT r.session_id, r.last_seen
  FROM session_actors AS r INDEXED BY session_actors_by_actor
  WHERE r.org_id = ? AND r.actor_id = ? /*agent*/ /*page*/
    AND NOT EXISTS (
      SELECT 1 FROM session_actors AS x INDEXED BY sqlite_autoindex_session_actors_1
      WHERE x.org_id = r.org_id AND x.session_id = r.session_id /*rows*/
        AND (x.last_seen, x.actor_id, x.agent_system) > (r.last_seen, r.actor_id, r.agent_system)
    )
  ORDER BY r.last_seen DESC, r.session_id DESC
  LIMIT ?
) AS w

-- name: rollup_sessions_by_agent
SELECT * FROM (
  SELECT r.session_id, r.last_seen
  FROM session_actors AS r INDEXED BY session_actors_by_agent
  WHERE r.org_id = ? AND r.agent_system = ? /*page*/
    AND NOT EXISTS (
      SELECT 1 FROM session_actors AS x INDEXED BY sqlite_autoindex_session_actors_1
      WHERE x.org_id = r.org_id AND x.session_id = r.session_id /*rows*/
        AND (x.last_seen, x.actor_id, x.agent_system) > (r.last_seen, r.actor_id, r.agent_system)
    )
  ORDER BY r.last_seen DESC, r.session_id DESC
  LIMIT ?
) AS w

-- The sessions that reached a domain (whole sessions: a domain selects
-- sessions, not calls), as the one walk of rollup_sessions_page. A domain
-- reached by many sessions is found fastest by walking the newest sessions
-- and checking each for the domain; a rare one by reading its sessions from
-- the domain's index and sorting them. The walk stops after a page or a fixed
-- number of sessions (DOMAIN_WALK_SESSIONS); when it found less than a page
-- without reaching the last session, the domain's own sessions answer
-- instead. Those are read only then: `walk` is the outer loop of `few`.
-- name: rollup_sessions_by_domain
SELECT * FROM (
  WITH hits AS (
    SELECT session_id, last_seen FROM (
      SELECT session_id, last_seen FROM sessions INDEXED BY sessions_by_last_seen
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
        SELECT 1 FROM sessions INDEXED BY sessions_by_last_seen
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
    FROM walk
    CROSS JOIN (
      -- The keyed table itself (schema 19): its index gives the distinct session keys in
      -- order, read inside the loop over walk; the view would join before DISTINCT.
      SELECT DISTINCT session_key FROM keyed_domain_hits
      WHERE org_key = (SELECT org_key FROM org_keys WHERE org_id = ?) AND domain = ?
    ) AS d
    CROSS JOIN session_keys AS k ON k.session_key = d.session_key
    CROSS JOIN sessions AS s ON s.org_id = ? AND s.session_id = k.session_id
    WHERE NOT walk.answers AND s.last_seen IS NOT NULL /*page*/
    ORDER BY s.last_seen DESC, s.session_id DESC
    LIMIT ?
  ) AS few
) AS w

-- name: session
SELECT session_id, actor_id, first_seen, last_seen, tool_call_count, error_count,
  success_count, agent_system, agent_version, model, cost_usd, parent_session_id,
  reported_cost_calls, estimated_cost_calls, estimated_cost_usd,
  (SELECT json_group_object(m.key, m.value) FROM session_dimensions AS m
    WHERE m.org_id = sessions.org_id AND m.session_id = sessions.session_id) AS dimensions
FROM sessions
WHERE org_id = ? AND session_id = ? AND last_seen IS NOT NULL;

-- The sessions a session spawned (Codex subagents), oldest first.
-- name: child_sessions
SELECT session_id, actor_id, first_seen, last_seen, tool_call_count, error_count,
  success_count, agent_system, agent_version, model, cost_usd, parent_session_id,
  reported_cost_calls, estimated_cost_calls, estimated_cost_usd,
  (SELECT json_group_object(m.key, m.value) FROM session_dimensions AS m
    WHERE m.org_id = sessions.org_id AND m.session_id = sessions.session_id) AS dimensions
FROM sessions INDEXED BY sessions_by_parent
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
-- through its key and model_calls_by_session, and only they are sorted
-- (schema 15's estimates keep the planner off the organization's model calls
-- by time, model_calls_by_time, which would spare the sort).
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
  (SELECT json_group_object(m.key, m.value) FROM session_dimensions AS m
    WHERE m.org_id = tool_calls.org_id AND m.session_id = tool_calls.session_id) AS dimensions
FROM tool_calls /*index*/
WHERE org_id = ? /*filters*/
ORDER BY ts DESC, id DESC
LIMIT ?;

-- A page of the export (/v1/export/tool-calls): the list's columns oldest
-- first, each call with its risk flags and external domains as JSON arrays,
-- read along the primary keys of risk_flags and domain_hits (call id first,
-- so in flag and in domain order).
-- name: export_tool_calls_page
SELECT id, ts, session_id, actor_id, tool_name, tool_type, category, duration_ms, outcome,
  error_message, decision, decision_source, agent_system, model,
  (SELECT json_group_array(json_object('flag', f.flag, 'evidence', f.evidence))
    FROM risk_flags AS f WHERE f.call_id = tool_calls.id) AS risk_flags,
  (SELECT json_group_array(json_object('domain', d.domain, 'scheme', d.scheme))
    FROM domain_hits AS d WHERE d.call_id = tool_calls.id) AS external_domains,
  (SELECT json_group_object(m.key, m.value) FROM session_dimensions AS m
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
  (SELECT json_group_object(m.key, m.value) FROM session_dimensions AS m
    WHERE m.org_id = s.org_id AND m.session_id = s.session_id) AS dimensions
FROM sessions AS s
WHERE org_id = ? AND last_seen IS NOT NULL /*filters*/
ORDER BY last_seen, session_id
LIMIT ?;

-- The columns of the write path's list (src/store/table_columns.ts) and the
-- call's session dimensions.
-- name: tool_call
SELECT {{tool_calls.columns}},
  (SELECT json_group_object(m.key, m.value) FROM session_dimensions AS m
    WHERE m.org_id = tool_calls.org_id AND m.session_id = tool_calls.session_id) AS dimensions
FROM tool_calls WHERE org_id = ? AND id = ?;

-- Facets walk an index one distinct value at a time (a skip scan), so they
-- cost one seek per value, not a scan of every row.

-- name: facet_agents
WITH RECURSIVE v(value) AS (
  SELECT min(agent_system) FROM sessions WHERE org_id = ?1
  UNION ALL
  SELECT (SELECT min(agent_system) FROM sessions WHERE org_id = ?1 AND agent_system > v.value)
  FROM v WHERE v.value IS NOT NULL
)
SELECT value FROM v WHERE value IS NOT NULL LIMIT 1000;

-- name: facet_domains
WITH RECURSIVE v(value) AS (
  SELECT min(domain) FROM domain_hits WHERE org_id = ?1
  UNION ALL
  SELECT (SELECT min(domain) FROM domain_hits WHERE org_id = ?1 AND domain > v.value)
  FROM v WHERE v.value IS NOT NULL
)
SELECT value FROM v WHERE value IS NOT NULL LIMIT 1000;

-- name: facet_tool_names
WITH RECURSIVE v(value) AS (
  SELECT min(tool_name) FROM tool_calls WHERE org_id = ?1
  UNION ALL
  SELECT (SELECT min(tool_name) FROM tool_calls WHERE org_id = ?1 AND tool_name > v.value)
  FROM v WHERE v.value IS NOT NULL
)
SELECT value FROM v WHERE value IS NOT NULL LIMIT 1000;

-- name: facet_tool_types
WITH RECURSIVE v(value) AS (
  SELECT min(tool_type) FROM tool_calls WHERE org_id = ?1
  UNION ALL
  SELECT (SELECT min(tool_type) FROM tool_calls WHERE org_id = ?1 AND tool_type > v.value)
  FROM v WHERE v.value IS NOT NULL
)
SELECT value FROM v WHERE value IS NOT NULL LIMIT 1000;

-- name: facet_categories
WITH RECURSIVE v(value) AS (
  SELECT min(category) FROM tool_calls WHERE org_id = ?1
  UNION ALL
  SELECT (SELECT min(category) FROM tool_calls WHERE org_id = ?1 AND category > v.value)
  FROM v WHERE v.value IS NOT NULL
)
SELECT value FROM v WHERE value IS NOT NULL LIMIT 1000;

-- What an organization's agents sent that stored nothing, summed over actors
-- (or one actor's), newest first.
-- name: unmapped_events
SELECT agent, agent_version, event_name, reason, sum(records) AS records,
  min(first_seen) AS first_seen, max(last_seen) AS last_seen
FROM unmapped_events
WHERE org_id = ? AND (? = '' OR actor_id = ?)
GROUP BY agent, agent_version, event_name, reason
ORDER BY max(last_seen) DESC, agent, agent_version, event_name, reason
LIMIT 1000;

-- The fleet (GET /v1/fleet): the actors of an organization that sent
-- telemetry, each with its last time, and for those the answer shows (at most
-- ?4 last seen at or before ?2, newest first, ties by id): its sessions with a
-- call since ?3, each agent and version it ran and what of its telemetry
-- stored nothing. Read from session_actors, sessions and unmapped_events by
-- index, never from tool or model calls: the actors one seek each (a skip
-- scan of session_actors_by_actor and of unmapped_events' key) and each
-- one's last time at the head of its range; then, for the answer's actors,
-- their recent sessions counted in their index range, each of their
-- sessions' rows with one key lookup of the session (its version), and
-- their unmapped rows. Rows: `kind` 'actor' (answered; `count` its sessions
-- since ?3) or 'sender' (sent telemetry, not answered); 'agent' per actor,
-- agent and version (a session's version is that of its first record: the
-- rows of another agent in it have none); 'unmapped' per actor, agent, event
-- name and reason (`count` its records).
-- name: fleet
WITH RECURSIVE
  called(actor_id) AS (
    SELECT min(actor_id) FROM session_actors WHERE org_id = ?1
    UNION ALL
    SELECT (SELECT min(actor_id) FROM session_actors WHERE org_id = ?1 AND actor_id > c.actor_id)
    FROM called AS c WHERE c.actor_id IS NOT NULL
  ),
  unmapped(actor_id) AS (
    SELECT min(actor_id) FROM unmapped_events WHERE org_id = ?1
    UNION ALL
    SELECT (SELECT min(actor_id) FROM unmapped_events WHERE org_id = ?1 AND actor_id > u.actor_id)
    FROM unmapped AS u WHERE u.actor_id IS NOT NULL
  ),
  seen(actor_id, last_seen) AS (
    SELECT c.actor_id, (
      SELECT last_seen FROM session_actors INDEXED BY session_actors_by_actor
      WHERE org_id = ?1 AND actor_id = c.actor_id
      ORDER BY last_seen DESC LIMIT 1
    )
    FROM called AS c WHERE c.actor_id IS NOT NULL
    UNION ALL
    SELECT u.actor_id, (
      SELECT max(last_seen) FROM unmapped_events WHERE org_id = ?1 AND actor_id = u.actor_id
    )
    FROM unmapped AS u WHERE u.actor_id IS NOT NULL
  ),
  senders AS MATERIALIZED (
    SELECT actor_id, max(last_seen) AS last_seen FROM seen GROUP BY actor_id
  ),
  fleet AS MATERIALIZED (
    SELECT actor_id, last_seen FROM senders
    WHERE last_seen <= ?2
    ORDER BY last_seen DESC, actor_id
    LIMIT ?4
  )
SELECT 'sender' AS kind, actor_id, '' AS agent, '' AS agent_version, '' AS event_name,
  '' AS reason, last_seen, NULL AS count
FROM senders WHERE actor_id NOT IN (SELECT actor_id FROM fleet)
UNION ALL
SELECT 'actor', f.actor_id, '', '', '', '', f.last_seen, (
    SELECT count(DISTINCT r.session_id)
    FROM session_actors AS r INDEXED BY session_actors_by_actor
    WHERE r.org_id = ?1 AND r.actor_id = f.actor_id AND r.last_seen >= ?3
  )
FROM fleet AS f
UNION ALL
SELECT 'agent', f.actor_id, r.agent_system,
  CASE WHEN s.agent_system = r.agent_system THEN s.agent_version ELSE '' END, '', '',
  max(r.last_seen), NULL
FROM fleet AS f
CROSS JOIN session_actors AS r INDEXED BY session_actors_by_actor
  ON r.org_id = ?1 AND r.actor_id = f.actor_id
CROSS JOIN sessions AS s ON s.org_id = ?1 AND s.session_id = r.session_id
GROUP BY f.actor_id, r.agent_system,
  CASE WHEN s.agent_system = r.agent_system THEN s.agent_version ELSE '' END
UNION ALL
SELECT 'unmapped', f.actor_id, u.agent, '', u.event_name, u.reason, max(u.last_seen),
  sum(u.records)
FROM fleet AS f
CROSS JOIN unmapped_events AS u ON u.org_id = ?1 AND u.actor_id = f.actor_id
GROUP BY f.actor_id, u.agent, u.event_name, u.reason;

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
-- SQLite walks tool_calls_by_time for a page by time, testing each call's
-- session, so a dimension value of few calls (a small team's, one
-- repository's) read the whole organization: 650 ms of CPU a page at 1M
-- calls, 0.2 ms along the session index.
-- name: tool_calls_by_dimension
WITH dimset AS MATERIALIZED (
  /*sessions*/
  LIMIT ?
),
dim AS MATERIALIZED (
  SELECT count(*) <= ? AND coalesce(sum(s.tool_call_count), 0) <= ? AS few
  FROM dimset AS d
  CROSS JOIN sessions AS s ON s.org_id = ? AND s.session_id = d.session_id
)
SELECT * FROM (/*few*/) AS few
UNION ALL
SELECT * FROM (/*many*/) AS many
ORDER BY /*order*/;

-- The session column a page read in time order tests (tool_calls_by_dimension's
-- many branch): `+` keeps the planner from reaching the calls through their
-- sessions' keys, every call of a common value's sessions sorted for one page.
-- name: session_column_by_time
+session_id

-- The index a page of tool calls of a few sessions reads (tool_calls_by_dimension).
-- name: session_calls_index
/* the planner finds each session's key, then its calls by calls_by_session */
