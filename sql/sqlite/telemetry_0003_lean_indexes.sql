-- Fewer indexes on the largest table, for ingest speed: retention walks each
-- organization's calls through tool_calls_by_time instead of a global ts index,
-- and the agents facet reads the (much smaller) sessions table.
DROP INDEX tool_calls_by_ts;
DROP INDEX tool_calls_by_agent;
CREATE INDEX sessions_by_agent ON sessions (org_id, agent_system);
DROP INDEX model_calls_by_ts;
CREATE INDEX model_calls_by_time ON model_calls (org_id, ts);
