-- A session spawned by another (a Codex subagent) names its parent, as
-- sql/sqlite/telemetry_0009_parent_sessions.sql.
ALTER TABLE sessions ADD COLUMN parent_session_id TEXT COLLATE "C";
CREATE INDEX sessions_by_parent ON sessions (org_id, parent_session_id)
  WHERE parent_session_id IS NOT NULL;
