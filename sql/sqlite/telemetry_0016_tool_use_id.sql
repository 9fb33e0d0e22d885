-- Schema 16 (issue #30): Claude Code's tool_use_id is its call id, so the
-- column repeated tool_call_id in ~70% of the rows (21 of a call's ~880
-- bytes at 1M calls). A call writes '' there when the two are equal (no
-- bytes of text: an empty string is its record header alone) and the view
-- gives the call id back. Rows written before keep their text; both read the
-- same.
DROP VIEW tool_calls;
CREATE VIEW tool_calls AS
SELECT calls.id, org_keys.org_id, calls.seq, session_keys.session_id, actor_keys.actor_id,
  calls.ts, calls.tool_name, calls.tool_type, calls.category, calls.outcome, calls.duration_ms,
  calls.result_size_bytes, calls.agent_system, calls.agent_version, calls.model,
  calls.error_message, calls.error_type, calls.decision, calls.decision_source, calls.prompt_id,
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
  ON actor_keys.actor_key = calls.actor_key AND actor_keys.org_key = org_keys.org_key;
