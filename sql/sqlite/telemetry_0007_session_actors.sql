-- A session's calls per actor and agent (issue #16), kept current at ingest
-- (src/store/ingest_batch.ts) and recounted from tool_calls wherever a
-- session is (a replaced call, retention), so a page of `?actor=`, `?team=`
-- or `?agent=` sessions reads about one row per session shown instead of
-- grouping every call of the filter (sql/sqlite/queries.sql,
-- rollup_sessions_page). `model_key` is the latest call that reports a model,
-- as filtered_sessions_page spells it: printf('%015d|%s|%s', ts, id, model),
-- so the greatest key of several rows is the session's.
CREATE TABLE session_actors (
  org_id       TEXT NOT NULL,
  session_id   TEXT NOT NULL,
  actor_id     TEXT NOT NULL,
  agent_system TEXT NOT NULL,
  first_seen   INTEGER NOT NULL,
  last_seen    INTEGER NOT NULL,
  calls        INTEGER NOT NULL,
  errors       INTEGER NOT NULL,
  oks          INTEGER NOT NULL,
  model_key    TEXT,
  PRIMARY KEY (org_id, session_id, actor_id, agent_system)
) WITHOUT ROWID;
CREATE INDEX session_actors_by_actor
  ON session_actors (org_id, actor_id, last_seen DESC, session_id DESC);
CREATE INDEX session_actors_by_agent
  ON session_actors (org_id, agent_system, last_seen DESC, session_id DESC);

INSERT INTO session_actors (org_id, session_id, actor_id, agent_system, first_seen, last_seen,
  calls, errors, oks, model_key)
SELECT org_id, session_id, actor_id, agent_system, min(ts), max(ts), count(*),
  sum(outcome = 'error'), sum(outcome = 'ok'),
  max(CASE WHEN model IS NOT NULL AND model <> '' THEN printf('%015d|%s|%s', ts, id, model) END)
FROM tool_calls
GROUP BY org_id, session_id, actor_id, agent_system;
