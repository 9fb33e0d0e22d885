-- A session spawned by another (a Codex subagent: its own conversation id,
-- linked by the parent's `codex.agent_communication` spawn) names its parent;
-- the parent's detail lists its children through the partial index.
ALTER TABLE sessions ADD COLUMN parent_session_id TEXT;
CREATE INDEX sessions_by_parent ON sessions (org_id, parent_session_id)
  WHERE parent_session_id IS NOT NULL;
