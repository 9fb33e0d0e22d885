-- Secrets of this installation, generated here once and never served. `cursor`
-- keys the HMAC-SHA256 that binds a page cursor to its organization and
-- filters (src/api/cursor.ts): 32 bytes from SQLite's CSPRNG, which is seeded
-- from the operating system.
CREATE TABLE installation_secrets (
  name  TEXT PRIMARY KEY,
  value BLOB NOT NULL
);
INSERT INTO installation_secrets (name, value) VALUES ('cursor', randomblob(32));
