-- Statements of `migrate-to-postgres` (src/store/postgres/copy_from_sqlite.ts)
-- on the PostgreSQL side. The multi-row inserts of each table are built from
-- the source table's columns; everything fixed is here.

-- What the copy has done so far, one row per table (and one for tombstones):
-- the primary key of the last row of the first, key-ordered pass (`last_key`,
-- JSON), whether that pass reached the end, the rows written, and the source's
-- `seq` up to which later writes were copied (`synced_seq`, telemetry only).
-- name: create_progress
CREATE TABLE IF NOT EXISTS migration_progress (
  tbl        TEXT PRIMARY KEY,
  last_key   TEXT,
  rows       BIGINT NOT NULL DEFAULT 0,
  done       BOOLEAN NOT NULL DEFAULT false,
  synced_seq BIGINT
);

-- A table's row, on its first run: telemetry written after this run's snapshot
-- (`synced_seq`) is caught up once the first pass is done.
-- name: start_table
INSERT INTO migration_progress (tbl, synced_seq) VALUES (?, ?)
ON CONFLICT (tbl) DO NOTHING;

-- name: progress
SELECT tbl, last_key, rows, done, synced_seq FROM migration_progress;

-- One batch and its record, in one statement (so one transaction): `/*insert*/`
-- is the batch's multi-row INSERT … ON CONFLICT, built from the table's
-- columns. The first pass records its last key and whether it reached the end.
-- name: copy_batch
WITH copied AS (/*insert*/ RETURNING 1)
UPDATE migration_progress
SET last_key = ?, done = ?, rows = rows + (SELECT count(*) FROM copied)
WHERE tbl = ?
RETURNING (SELECT count(*) FROM copied) AS copied;

-- Later passes (catching up, comparing again) count the rows they write.
-- name: copy_again
WITH copied AS (/*insert*/ RETURNING 1)
UPDATE migration_progress SET rows = rows + (SELECT count(*) FROM copied)
WHERE tbl = ?
RETURNING (SELECT count(*) FROM copied) AS copied;

-- name: record_done
UPDATE migration_progress SET done = true WHERE tbl = ?;

-- name: record_synced
UPDATE migration_progress SET synced_seq = ? WHERE tbl = ?;

-- Deletions in the source since the last run, applied as the replicas apply
-- them (sql/duckdb/replica_schema.sql): only to rows older than the deletion.
-- A tool call's flags and hits go with it (ON DELETE CASCADE). The sessions
-- of deleted calls are returned: those the source dropped go too.
-- name: apply_tool_call_tombstones
DELETE FROM tool_calls AS c USING tombstones AS t
WHERE t.seq > ? AND t.seq <= ? AND t.tbl = 'tool_calls' AND c.id = t.row_key AND c.seq < t.seq
RETURNING c.org_id, c.session_id;

-- name: apply_model_call_tombstones
DELETE FROM model_calls AS m USING tombstones AS t
WHERE t.seq > ? AND t.seq <= ? AND t.tbl = 'model_calls' AND m.id = t.row_key AND m.seq < t.seq
RETURNING m.org_id, m.session_id;

-- name: apply_risk_flag_tombstones
DELETE FROM risk_flags AS r USING tombstones AS t
WHERE t.seq > ? AND t.seq <= ? AND t.tbl IN ('detections', 'tool_calls')
  AND r.call_id = t.row_key AND r.seq < t.seq;

-- name: apply_domain_hit_tombstones
DELETE FROM domain_hits AS d USING tombstones AS t
WHERE t.seq > ? AND t.seq <= ? AND t.tbl IN ('detections', 'tool_calls')
  AND d.call_id = t.row_key AND d.seq < t.seq;

-- name: apply_metric_point_tombstones
DELETE FROM metric_points AS p USING tombstones AS t
WHERE t.seq > ? AND t.seq <= ? AND t.tbl = 'metric_points' AND p.id = t.row_key
  AND p.seq < t.seq;

-- name: delete_session
DELETE FROM sessions WHERE org_id = ? AND session_id = ?;

-- name: record_pending
UPDATE migration_progress SET done = false WHERE tbl = ?;

-- The per-actor session rollup (sql/postgres/0005_session_actors.sql) is not
-- copied: it is rebuilt from the copied calls after a run that changed them.
-- name: clear_all_session_actors
DELETE FROM session_actors;

-- name: rebuild_session_actors
INSERT INTO session_actors (org_id, session_id, actor_id, agent_system, first_seen, last_seen,
  calls, errors, oks, model_key)
SELECT org_id, session_id, actor_id, agent_system, min(ts), max(ts), count(*),
  count(*) FILTER (WHERE outcome = 'error'), count(*) FILTER (WHERE outcome = 'ok'),
  max(CASE WHEN model IS NOT NULL AND model <> ''
    THEN lpad(ts::text, 15, '0') || '|' || id || '|' || model END COLLATE "C")
FROM tool_calls
GROUP BY org_id, session_id, actor_id, agent_system;

-- New rows take seqs above every copied one; never lowers the sequence.
-- name: raise_seq
SELECT setval('telemetry_seq', greatest(?::bigint, (SELECT last_value FROM telemetry_seq)));

-- Members the directory held at the last run, so a member removed there since
-- is removed here too, and only such a member: one added in PostgreSQL itself
-- is never in this list. A database copied by an earlier version, which kept
-- no list, starts it from the members it has.
-- name: copied_members_present
SELECT to_regclass('migration_members') IS NOT NULL AS present;

-- name: create_copied_members
CREATE TABLE IF NOT EXISTS migration_members (id TEXT PRIMARY KEY);

-- name: seed_copied_members
INSERT INTO migration_members (id)
SELECT id FROM members
WHERE EXISTS (SELECT 1 FROM migration_progress WHERE tbl = 'members')
ON CONFLICT DO NOTHING;

-- A removed member's keys are revoked with it, as `member remove` does (the
-- directory revoked them too; the api_keys pass never un-revokes). Parameters:
-- the revocation time, then the directory's member ids (a JSON array).
-- name: revoke_removed_member_keys
UPDATE api_keys SET revoked_at = ?
WHERE revoked_at IS NULL AND member_id IN (
  SELECT id FROM migration_members
  WHERE id NOT IN (SELECT jsonb_array_elements_text(?::text::jsonb))
);

-- name: delete_removed_members
WITH removed AS (
  DELETE FROM migration_members
  WHERE id NOT IN (SELECT jsonb_array_elements_text(?::text::jsonb))
  RETURNING id
)
DELETE FROM members WHERE id IN (SELECT id FROM removed);

-- name: record_copied_members
INSERT INTO migration_members (id)
SELECT jsonb_array_elements_text(?::text::jsonb)
ON CONFLICT DO NOTHING;

-- The directory's cursor secret replaces the one this database made, so a
-- page cursor served before the move is still accepted after it.
-- name: carry_cursor_secret
UPDATE installation_secrets SET value = ?
WHERE name = 'cursor' AND value IS DISTINCT FROM ?;
