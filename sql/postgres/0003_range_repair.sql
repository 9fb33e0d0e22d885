-- Repairs rows an older version stored that today's ingest rejects
-- (src/ingest/limits.ts), as sql/sqlite/telemetry_0004_range_repair.sql does:
-- a time outside 1970-01-01..9999-12-31 (a BIGINT JavaScript cannot make a
-- Date of), a duration, size or token count outside 0..2^53-1 (the replica
-- copies through a double), a cost outside 0..1,000,000 or NaN. The row is
-- deleted, as if ingest had rejected it then; its flags and domain hits go
-- with it (ON DELETE CASCADE), a tombstone tells the replicas, and the
-- sessions it touched are recounted. NULL is never out of range here.

CREATE TEMP TABLE repair_tool_calls ON COMMIT DROP AS
SELECT id, org_id, session_id FROM tool_calls
WHERE ts NOT BETWEEN 0 AND 253402300799999
  OR duration_ms NOT BETWEEN 0 AND 9007199254740991
  OR result_size_bytes NOT BETWEEN 0 AND 9007199254740991;

CREATE TEMP TABLE repair_model_calls ON COMMIT DROP AS
SELECT id, org_id, session_id FROM model_calls
WHERE ts NOT BETWEEN 0 AND 253402300799999
  OR input_tokens NOT BETWEEN 0 AND 9007199254740991
  OR output_tokens NOT BETWEEN 0 AND 9007199254740991
  OR cache_read_tokens NOT BETWEEN 0 AND 9007199254740991
  OR cache_creation_tokens NOT BETWEEN 0 AND 9007199254740991
  OR duration_ms NOT BETWEEN 0 AND 9007199254740991
  OR cost_usd NOT BETWEEN 0 AND 1000000;

-- Sessions the deletions touch, and any whose own figures cannot be read
-- ('NaN' sorts above every number, so it is outside any BETWEEN).
CREATE TEMP TABLE repair_sessions ON COMMIT DROP AS
SELECT org_id, session_id FROM repair_tool_calls
UNION
SELECT org_id, session_id FROM repair_model_calls
UNION
SELECT org_id, session_id FROM sessions
WHERE first_seen NOT BETWEEN 0 AND 253402300799999
  OR last_seen NOT BETWEEN 0 AND 253402300799999
  OR cost_usd NOT BETWEEN -1e300 AND 1e300;

INSERT INTO tombstones (seq, tbl, row_key)
SELECT nextval('telemetry_seq'), 'tool_calls', id FROM repair_tool_calls ORDER BY id;

INSERT INTO tombstones (seq, tbl, row_key)
SELECT nextval('telemetry_seq'), 'model_calls', id FROM repair_model_calls ORDER BY id;

DELETE FROM tool_calls WHERE id IN (SELECT id FROM repair_tool_calls);
DELETE FROM model_calls WHERE id IN (SELECT id FROM repair_model_calls);

UPDATE sessions AS s SET
  seq = nextval('telemetry_seq'),
  first_seen = c.first_seen,
  last_seen = c.last_seen,
  tool_call_count = c.calls,
  error_count = c.errors,
  success_count = c.oks,
  model = coalesce(m.model, ''),
  model_ts = m.ts,
  cost_usd = coalesce((
    SELECT sum(cost_usd) FROM model_calls
    WHERE org_id = r.org_id AND session_id = r.session_id
  ), 0)
FROM repair_sessions AS r
CROSS JOIN LATERAL (
  SELECT min(ts) AS first_seen, max(ts) AS last_seen, count(*) AS calls,
    count(*) FILTER (WHERE outcome = 'error') AS errors,
    count(*) FILTER (WHERE outcome = 'ok') AS oks
  FROM tool_calls WHERE org_id = r.org_id AND session_id = r.session_id
) AS c
LEFT JOIN LATERAL (
  SELECT model, ts FROM tool_calls
  WHERE org_id = r.org_id AND session_id = r.session_id AND model IS NOT NULL AND model <> ''
  ORDER BY ts DESC, id DESC LIMIT 1
) AS m ON true
WHERE s.org_id = r.org_id AND s.session_id = r.session_id;

DELETE FROM sessions AS s
USING repair_sessions AS r
WHERE s.org_id = r.org_id AND s.session_id = r.session_id
  AND NOT EXISTS (
    SELECT 1 FROM tool_calls AS t WHERE t.org_id = r.org_id AND t.session_id = r.session_id
  )
  AND NOT EXISTS (
    SELECT 1 FROM model_calls AS m WHERE m.org_id = r.org_id AND m.session_id = r.session_id
  );
