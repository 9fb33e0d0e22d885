-- Reads of `migrate-to-postgres` on keys.db and telemetry.db, through
-- read-only connections inside one read transaction each (a snapshot). The
-- key-ordered and seq-ordered reads of each table are built from its columns.

-- Starts the key store's snapshot.
-- name: key_store_snapshot
SELECT count(*) FROM orgs;

-- name: current_seq
SELECT value FROM counters WHERE name = 'seq';

-- name: table_columns
SELECT name FROM pragma_table_info(?) ORDER BY cid;

-- name: tombstones_since
SELECT seq, tbl, row_key FROM tombstones WHERE seq > ? ORDER BY seq;

-- name: session_exists
SELECT 1 AS found FROM sessions WHERE org_id = ? AND session_id = ?;

-- name: member_ids
SELECT id FROM members ORDER BY id;

-- name: cursor_secret
SELECT value FROM installation_secrets WHERE name = 'cursor';
