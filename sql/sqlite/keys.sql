-- Statements of the SQLite key store (src/store/keys.ts) on keys.db. Same
-- meaning as the PostgreSQL key store's (sql/postgres/keys.sql).

-- name: find_api_key
SELECT id, org_id FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL;

-- name: find_ingest_key
SELECT id, org_id FROM actors WHERE ingest_key_hash = ? AND revoked_at IS NULL;

-- name: probe
SELECT count(*) FROM orgs;

-- name: find_org
SELECT 1 FROM orgs WHERE id = ?;

-- name: insert_org
INSERT INTO orgs (id, name, created_at) VALUES (?, ?, ?);

-- name: list_orgs
SELECT id, name, created_at FROM orgs ORDER BY created_at, id;

-- name: find_member_email
SELECT 1 FROM members WHERE org_id = ? AND email = ?;

-- name: insert_member
INSERT INTO members (id, org_id, email, created_at) VALUES (?, ?, ?, ?);

-- name: find_member
SELECT 1 FROM members WHERE id = ? AND org_id = ?;

-- name: list_members
SELECT id, email, created_at FROM members WHERE org_id = ? ORDER BY created_at, id;

-- name: revoke_member_keys
UPDATE api_keys SET revoked_at = ? WHERE member_id = ? AND revoked_at IS NULL;

-- name: delete_member
DELETE FROM members WHERE id = ?;

-- name: insert_api_key
INSERT INTO api_keys (id, org_id, member_id, name, key_hash, created_at)
VALUES (?, ?, ?, ?, ?, ?);

-- name: find_api_key_revocation
SELECT revoked_at FROM api_keys WHERE id = ?;

-- name: revoke_api_key
UPDATE api_keys SET revoked_at = ? WHERE id = ?;

-- name: list_api_keys
SELECT id, name, member_id, created_at, revoked_at
FROM api_keys
WHERE org_id = ?
ORDER BY created_at, id;

-- name: insert_actor
INSERT INTO actors (id, org_id, name, ingest_key_hash, created_at) VALUES (?, ?, ?, ?, ?);

-- name: list_actors
SELECT id, name, created_at, revoked_at FROM actors WHERE org_id = ? ORDER BY created_at, id;

-- name: find_actor_revocation
SELECT revoked_at FROM actors WHERE id = ?;

-- name: revoke_actor
UPDATE actors SET revoked_at = ? WHERE id = ?;

-- Names of the given actors (a JSON array of ids) within one organization
-- only: an id of another organization's actor finds nothing.
-- name: actor_names
SELECT a.id, a.name
FROM json_each(?) AS wanted
JOIN actors AS a ON a.id = wanted.value
WHERE a.org_id = ?;

-- name: cursor_secret
SELECT value FROM installation_secrets WHERE name = 'cursor';
