-- Retention walks the oldest rows across organizations.
CREATE INDEX tool_calls_by_ts ON tool_calls (ts);
CREATE INDEX model_calls_by_ts ON model_calls (ts);
