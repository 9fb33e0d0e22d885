-- Statements of the PostgreSQL migration runner (src/store/postgres/migrate.ts).

-- Held until the migrating transaction ends: nodes starting at once take turns.
-- name: lock
SELECT pg_advisory_xact_lock(?);

-- name: create_table
CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at BIGINT NOT NULL
);

-- name: current_version
SELECT coalesce(max(version), 0) AS version FROM schema_migrations;

-- name: record
INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?);
