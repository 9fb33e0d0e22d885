-- A session's calls per actor and agent (issue #16), as
-- sql/sqlite/telemetry_0007_session_actors.sql: kept current at ingest and
-- recounted from tool_calls wherever a session is, so a page of `?actor=`,
-- `?team=` or `?agent=` sessions reads about one row per session shown.
-- `model_key` is the text SQLite's printf('%015d|%s|%s', ts, id, model) gives
-- for the latest call that reports a model. Not replicated (no seq, no txid):
-- the replicas read tool_calls.
CREATE TABLE session_actors (
  org_id       TEXT COLLATE "C" NOT NULL,
  session_id   TEXT COLLATE "C" NOT NULL,
  actor_id     TEXT COLLATE "C" NOT NULL,
  agent_system TEXT COLLATE "C" NOT NULL,
  first_seen   BIGINT NOT NULL,
  last_seen    BIGINT NOT NULL,
  calls        BIGINT NOT NULL,
  errors       BIGINT NOT NULL,
  oks          BIGINT NOT NULL,
  model_key    TEXT COLLATE "C",
  PRIMARY KEY (org_id, session_id, actor_id, agent_system)
);
CREATE INDEX session_actors_by_actor
  ON session_actors (org_id, actor_id, last_seen DESC, session_id DESC);
CREATE INDEX session_actors_by_agent
  ON session_actors (org_id, agent_system, last_seen DESC, session_id DESC);

INSERT INTO session_actors (org_id, session_id, actor_id, agent_system, first_seen, last_seen,
  calls, errors, oks, model_key)
SELECT org_id, session_id, actor_id, agent_system, min(ts), max(ts), count(*),
  count(*) FILTER (WHERE outcome = 'error'), count(*) FILTER (WHERE outcome = 'ok'),
  max(CASE WHEN model IS NOT NULL AND model <> ''
    THEN lpad(ts::text, 15, '0') || '|' || id || '|' || model END COLLATE "C")
FROM tool_calls
GROUP BY org_id, session_id, actor_id, agent_system;
