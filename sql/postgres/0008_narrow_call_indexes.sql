-- Narrower indexes on tool_calls, as sql/sqlite/telemetry_0011_narrow_call_indexes.sql:
-- an entry is the filter's key and the time, ascending (time only grows, so
-- B-tree pages fill from the right instead of splitting half full). Lists
-- read the index backwards and sort only the calls of one millisecond by id
-- (an incremental sort on the presorted time).
DROP INDEX tool_calls_by_time;
DROP INDEX tool_calls_by_session;
DROP INDEX tool_calls_by_tool_name;
DROP INDEX tool_calls_by_tool_type;
DROP INDEX tool_calls_by_category;
DROP INDEX tool_calls_by_outcome;
DROP INDEX tool_calls_by_actor;
CREATE INDEX tool_calls_by_time ON tool_calls (org_id, ts);
CREATE INDEX tool_calls_by_session ON tool_calls (org_id, session_id, ts);
CREATE INDEX tool_calls_by_tool_name ON tool_calls (org_id, tool_name, ts);
CREATE INDEX tool_calls_by_tool_type ON tool_calls (org_id, tool_type, ts);
CREATE INDEX tool_calls_by_category ON tool_calls (org_id, category, ts);
CREATE INDEX tool_calls_by_outcome ON tool_calls (org_id, outcome, ts);
CREATE INDEX tool_calls_by_actor ON tool_calls (org_id, actor_id, ts);
