-- Key store: organizations, members, their API keys, and actors with ingest keys.
-- Keys are stored only as SHA-256 hashes (hex).
CREATE TABLE orgs (
  id         TEXT PRIMARY KEY,
  name       TEXT NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE TABLE members (
  id         TEXT PRIMARY KEY,
  org_id     TEXT NOT NULL REFERENCES orgs (id),
  email      TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (org_id, email)
);

CREATE TABLE api_keys (
  id         TEXT PRIMARY KEY,
  org_id     TEXT NOT NULL REFERENCES orgs (id),
  member_id  TEXT NOT NULL,
  name       TEXT NOT NULL DEFAULT '',
  key_hash   TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);
CREATE INDEX api_keys_by_org ON api_keys (org_id, created_at, id);
CREATE INDEX api_keys_by_member ON api_keys (member_id);

CREATE TABLE actors (
  id              TEXT PRIMARY KEY,
  org_id          TEXT NOT NULL REFERENCES orgs (id),
  name            TEXT NOT NULL DEFAULT '',
  ingest_key_hash TEXT NOT NULL UNIQUE,
  created_at      INTEGER NOT NULL,
  revoked_at      INTEGER
);
