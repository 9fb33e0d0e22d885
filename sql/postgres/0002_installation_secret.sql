-- Secrets of this installation, generated here once and never served; every
-- node of the cluster reads the same ones, so a cursor served by one node is
-- accepted by another. `cursor` keys the HMAC-SHA256 that binds a page cursor
-- to its organization and filters (src/api/cursor.ts). Core PostgreSQL has no
-- random-bytes function without pgcrypto: two gen_random_uuid() values (244
-- bits from pg_strong_random, PostgreSQL 13+) hashed to 32 bytes.
CREATE TABLE installation_secrets (
  name  TEXT PRIMARY KEY,
  value BYTEA NOT NULL
);
INSERT INTO installation_secrets (name, value)
VALUES ('cursor', sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')));
