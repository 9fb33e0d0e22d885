-- Schema 18 (issue #30): a tool call names its prompt by a key. The agent's
-- prompt id (a 36-character UUID for Claude Code) was in every call of the
-- prompt, ~9 calls each in the bench's mix: 32 of a call's ~880 bytes.
-- `prompt_keys` holds each prompt id once per session; a call written from
-- now on holds its key in `prompt_key` and no prompt_id (rows written before
-- keep their text: no row is rewritten, so the migration is instant). The
-- view reads either. A dropped session's prompts go with it (retention.sql).
CREATE TABLE prompt_keys (
  prompt_key  INTEGER PRIMARY KEY,
  session_key INTEGER NOT NULL,
  prompt_id   TEXT NOT NULL,
  UNIQUE (session_key, prompt_id)
);

ALTER TABLE calls ADD COLUMN prompt_key INTEGER;

DROP VIEW tool_calls;
CREATE VIEW tool_calls AS
SELECT calls.id, org_keys.org_id, calls.seq, session_keys.session_id, actor_keys.actor_id,
  calls.ts, calls.tool_name, calls.tool_type, calls.category, calls.outcome, calls.duration_ms,
  calls.result_size_bytes, calls.agent_system, calls.agent_version, calls.model,
  calls.error_message, calls.error_type, calls.decision, calls.decision_source,
  coalesce(calls.prompt_id, prompt_keys.prompt_id) AS prompt_id,
  calls.agent_name, calls.provider_name, calls.tool_call_id,
  CASE calls.tool_use_id WHEN '' THEN calls.tool_call_id ELSE calls.tool_use_id END
    AS tool_use_id,
  calls.tool_description, calls.source, calls.arguments, calls.result, calls.mcp_server_name,
  calls.mcp_server_scope, calls.os_type, calls.host_arch, calls.terminal_type, calls.cwd,
  calls.trace_id, calls.span_id
FROM calls
JOIN org_keys ON org_keys.org_key = calls.org_key
-- The second term of each join repeats what the key implies; with it the
-- planner proves `session_id = ?` (or `actor_id = ?`) names one key.
JOIN session_keys
  ON session_keys.session_key = calls.session_key AND session_keys.org_key = org_keys.org_key
JOIN actor_keys
  ON actor_keys.actor_key = calls.actor_key AND actor_keys.org_key = org_keys.org_key
-- Unused by a statement that reads no prompt_id, the join is left out (a
-- LEFT JOIN on the primary key).
LEFT JOIN prompt_keys ON prompt_keys.prompt_key = calls.prompt_key;

INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES
  ('prompt_keys', 'sqlite_autoindex_prompt_keys_1', '1000000 10 1');
