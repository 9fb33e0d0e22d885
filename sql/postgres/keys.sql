-- Statements of the PostgreSQL key store (src/store/postgres/keys.ts). Same
-- tables and meaning as the SQLite key store (sql/sqlite/keys_0001_init.sql).

-- name: find_api_key
SELECT id, org_id FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL;

-- name: find_ingest_key
SELECT id, org_id FROM actors WHERE ingest_key_hash = ? AND revoked_at IS NULL;

-- name: probe
SELECT 1 FROM orgs LIMIT 1;

-- name: find_org
SELECT 1 FROM orgs WHERE id = ?;

-- name: insert_org
INSERT INTO orgs (id, name, created_at) VALUES (?, ?, ?);

-- Inserts nothing when the email is taken in the organization.
-- name: insert_member
INSERT INTO members (id, org_id, email, created_at) VALUES (?, ?, ?, ?)
ON CONFLICT (org_id, email) DO NOTHING;

-- A key created for a member holds this share lock until it commits, so a
-- removal either waits and then revokes the new key too, or goes first and
-- the creation finds no member.
-- name: lock_member_for_key
SELECT 1 FROM members WHERE id = ? AND org_id = ? FOR SHARE;

-- name: lock_member_for_removal
SELECT 1 FROM members WHERE id = ? AND org_id = ? FOR UPDATE;

-- name: revoke_member_keys
UPDATE api_keys SET revoked_at = ? WHERE member_id = ? AND revoked_at IS NULL;

-- name: delete_member
DELETE FROM members WHERE id = ?;

-- name: insert_api_key
INSERT INTO api_keys (id, org_id, member_id, name, key_hash, created_at)
VALUES (?, ?, ?, ?, ?, ?);

-- name: lock_api_key
SELECT revoked_at FROM api_keys WHERE id = ? FOR UPDATE;

-- name: revoke_api_key
UPDATE api_keys SET revoked_at = ? WHERE id = ?;

-- `COLLATE "C"` orders ids byte by byte, as SQLite does, when two keys share a millisecond.
-- name: list_api_keys
SELECT id, name, member_id, created_at, revoked_at
FROM api_keys
WHERE org_id = ?
ORDER BY created_at, id COLLATE "C";

-- name: insert_actor
INSERT INTO actors (id, org_id, name, ingest_key_hash, created_at) VALUES (?, ?, ?, ?, ?);

-- name: cursor_secret
SELECT value FROM installation_secrets WHERE name = 'cursor';

-- name: list_orgs
SELECT id, name, created_at FROM orgs ORDER BY created_at, id COLLATE "C";

-- name: list_members
SELECT id, email, created_at
FROM members
WHERE org_id = ?
ORDER BY created_at, id COLLATE "C";

-- name: list_actors
SELECT id, name, created_at, revoked_at
FROM actors
WHERE org_id = ?
ORDER BY created_at, id COLLATE "C";

-- name: lock_actor
SELECT revoked_at FROM actors WHERE id = ? FOR UPDATE;

-- name: revoke_actor
UPDATE actors SET revoked_at = ? WHERE id = ?;

-- Names of the given actors (a JSON array of ids) within one organization
-- only: an id of another organization's actor finds nothing.
-- name: actor_names
SELECT id, name
FROM actors
WHERE org_id = ? AND id IN (SELECT jsonb_array_elements_text(?::text::jsonb));
