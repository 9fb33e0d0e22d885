-- Narrower indexes on tool_calls (issue #30). Each entry held the 35-character
-- call id for the tie-break of `ORDER BY ts DESC, id DESC`, and was declared
-- `ts DESC` while time only grows, so pages split half full: seven indexes
-- were 960 B of the 1,741 B a call cost at 1M calls. An entry is now the
-- filter's key and the time (SQLite adds the rowid); lists walk the index by
-- time and sort only the calls of one millisecond by id ("USE TEMP B-TREE FOR
-- RIGHT PART OF ORDER BY", stopping at the page's limit), which reads the
-- rows the page returns anyway.
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
