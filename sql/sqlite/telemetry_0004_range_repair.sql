-- Repairs rows an older version stored that today's ingest rejects
-- (src/ingest/limits.ts): a time that is not a whole millisecond from
-- 1970-01-01 to 9999-12-31, a duration, size or token count that is not an
-- integer from 0 to 2^53-1, a cost that is not a number from 0 to 1,000,000.
-- Such a row broke every organization's insights (the replica's INT64 copy
-- failed) or its sender's lists (no JavaScript Date). The row is deleted, as
-- if ingest had rejected it then; its flags and domain hits go with it, a
-- tombstone tells the replica, and the sessions it touched are recounted.

CREATE TEMP TABLE repair_tool_calls AS
SELECT id, org_id, session_id FROM tool_calls
WHERE NOT (typeof(ts) = 'integer' AND ts BETWEEN 0 AND 253402300799999)
  OR (duration_ms IS NOT NULL
    AND NOT (typeof(duration_ms) = 'integer' AND duration_ms BETWEEN 0 AND 9007199254740991))
  OR (result_size_bytes IS NOT NULL
    AND NOT (typeof(result_size_bytes) = 'integer'
      AND result_size_bytes BETWEEN 0 AND 9007199254740991));

CREATE TEMP TABLE repair_model_calls AS
SELECT id, org_id, session_id FROM model_calls
WHERE NOT (typeof(ts) = 'integer' AND ts BETWEEN 0 AND 253402300799999)
  OR NOT (typeof(input_tokens) = 'integer' AND input_tokens BETWEEN 0 AND 9007199254740991)
  OR NOT (typeof(output_tokens) = 'integer' AND output_tokens BETWEEN 0 AND 9007199254740991)
  OR NOT (typeof(cache_read_tokens) = 'integer'
    AND cache_read_tokens BETWEEN 0 AND 9007199254740991)
  OR NOT (typeof(cache_creation_tokens) = 'integer'
    AND cache_creation_tokens BETWEEN 0 AND 9007199254740991)
  OR (duration_ms IS NOT NULL
    AND NOT (typeof(duration_ms) = 'integer' AND duration_ms BETWEEN 0 AND 9007199254740991))
  OR (cost_usd IS NOT NULL
    AND NOT (typeof(cost_usd) IN ('real', 'integer') AND cost_usd BETWEEN 0 AND 1000000));

-- Sessions the deletions touch, and any whose own figures cannot be read.
CREATE TEMP TABLE repair_sessions AS
SELECT org_id, session_id FROM temp.repair_tool_calls
UNION
SELECT org_id, session_id FROM temp.repair_model_calls
UNION
SELECT org_id, session_id FROM sessions
WHERE (first_seen IS NOT NULL
    AND NOT (typeof(first_seen) = 'integer' AND first_seen BETWEEN 0 AND 253402300799999))
  OR (last_seen IS NOT NULL
    AND NOT (typeof(last_seen) = 'integer' AND last_seen BETWEEN 0 AND 253402300799999))
  OR NOT (typeof(cost_usd) IN ('real', 'integer') AND abs(cost_usd) < 1e300);

-- Each tombstone and recounted session takes the next seq, as ingest does.
INSERT INTO tombstones (seq, tbl, row_key)
SELECT (SELECT value FROM counters WHERE name = 'seq') + row_number() OVER (ORDER BY id),
  'tool_calls', id
FROM temp.repair_tool_calls;
UPDATE counters SET value = value + (SELECT count(*) FROM temp.repair_tool_calls)
WHERE name = 'seq';

INSERT INTO tombstones (seq, tbl, row_key)
SELECT (SELECT value FROM counters WHERE name = 'seq') + row_number() OVER (ORDER BY id),
  'model_calls', id
FROM temp.repair_model_calls;
UPDATE counters SET value = value + (SELECT count(*) FROM temp.repair_model_calls)
WHERE name = 'seq';

DELETE FROM risk_flags WHERE call_id IN (SELECT id FROM temp.repair_tool_calls);
DELETE FROM domain_hits WHERE call_id IN (SELECT id FROM temp.repair_tool_calls);
DELETE FROM tool_calls WHERE id IN (SELECT id FROM temp.repair_tool_calls);
DELETE FROM model_calls WHERE id IN (SELECT id FROM temp.repair_model_calls);

CREATE TEMP TABLE repair_session_seqs AS
SELECT org_id, session_id,
  (SELECT value FROM counters WHERE name = 'seq')
    + row_number() OVER (ORDER BY org_id, session_id) AS seq
FROM temp.repair_sessions;
UPDATE counters SET value = value + (SELECT count(*) FROM temp.repair_session_seqs)
WHERE name = 'seq';

UPDATE sessions SET
  seq = (
    SELECT r.seq FROM temp.repair_session_seqs AS r
    WHERE r.org_id = sessions.org_id AND r.session_id = sessions.session_id
  ),
  first_seen = (
    SELECT min(ts) FROM tool_calls AS c
    WHERE c.org_id = sessions.org_id AND c.session_id = sessions.session_id
  ),
  last_seen = (
    SELECT max(ts) FROM tool_calls AS c
    WHERE c.org_id = sessions.org_id AND c.session_id = sessions.session_id
  ),
  tool_call_count = (
    SELECT count(*) FROM tool_calls AS c
    WHERE c.org_id = sessions.org_id AND c.session_id = sessions.session_id
  ),
  error_count = (
    SELECT count(*) FROM tool_calls AS c
    WHERE c.org_id = sessions.org_id AND c.session_id = sessions.session_id
      AND c.outcome = 'error'
  ),
  success_count = (
    SELECT count(*) FROM tool_calls AS c
    WHERE c.org_id = sessions.org_id AND c.session_id = sessions.session_id
      AND c.outcome = 'ok'
  ),
  model = coalesce((
    SELECT model FROM tool_calls AS c
    WHERE c.org_id = sessions.org_id AND c.session_id = sessions.session_id
      AND c.model IS NOT NULL AND c.model <> ''
    ORDER BY c.ts DESC, c.id DESC LIMIT 1
  ), ''),
  model_ts = (
    SELECT ts FROM tool_calls AS c
    WHERE c.org_id = sessions.org_id AND c.session_id = sessions.session_id
      AND c.model IS NOT NULL AND c.model <> ''
    ORDER BY c.ts DESC, c.id DESC LIMIT 1
  ),
  cost_usd = coalesce((
    SELECT sum(cost_usd) FROM model_calls AS m
    WHERE m.org_id = sessions.org_id AND m.session_id = sessions.session_id
  ), 0)
WHERE (org_id, session_id) IN (SELECT org_id, session_id FROM temp.repair_sessions);

DELETE FROM sessions
WHERE (org_id, session_id) IN (SELECT org_id, session_id FROM temp.repair_sessions)
  AND NOT EXISTS (
    SELECT 1 FROM tool_calls AS c
    WHERE c.org_id = sessions.org_id AND c.session_id = sessions.session_id
  )
  AND NOT EXISTS (
    SELECT 1 FROM model_calls AS m
    WHERE m.org_id = sessions.org_id AND m.session_id = sessions.session_id
  );

DROP TABLE temp.repair_session_seqs;
DROP TABLE temp.repair_sessions;
DROP TABLE temp.repair_model_calls;
DROP TABLE temp.repair_tool_calls;
