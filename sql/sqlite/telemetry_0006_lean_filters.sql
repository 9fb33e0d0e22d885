-- Fewer tool_calls indexes ordered by time (issue #16). Such an index takes a
-- new call at its time within its value's run, on a page older calls fill,
-- so each call dirties a page of each (at 1M calls, ingest wrote 20 KB and
-- read 11 KB per call; without these three, 15.5 KB and 7.8 KB). tool_type,
-- category and outcome have few values, each common (the rarest in the
-- bench's data: 2.8%): their lists walk the time index, which now carries
-- the three columns, so a call that does not match is passed over without
-- reading its row. The facets of tool_type and category seek an index of
-- their own, one seek per value, keyed on `column || ''` so that no list
-- filter (`column = ?`) picks it and sorts; a new call lands at the end of
-- its value's run there.
-- (IF EXISTS: a store rolled back to an older version runs this again.)
DROP INDEX IF EXISTS tool_calls_by_tool_type;
DROP INDEX IF EXISTS tool_calls_by_category;
DROP INDEX IF EXISTS tool_calls_by_outcome;
DROP INDEX tool_calls_by_time;
CREATE INDEX tool_calls_by_time ON tool_calls (
  org_id, ts DESC, id DESC, outcome, tool_type, category
);
CREATE INDEX IF NOT EXISTS tool_calls_tool_types ON tool_calls (org_id, tool_type || '');
CREATE INDEX IF NOT EXISTS tool_calls_categories ON tool_calls (org_id, category || '');
