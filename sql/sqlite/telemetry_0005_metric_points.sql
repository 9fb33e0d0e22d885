-- Agents' metric points (issue #18): one row per (series, start time, time)
-- of an instrument we keep (src/ingest/metrics/instruments.ts), as sent; the
-- id is derived from those three, so a retried export stores nothing twice
-- (INSERT OR IGNORE). What a point adds to its interval is computed where it
-- is read (sql/metrics/interval_deltas.sql). Times are nanoseconds, exact
-- (milliseconds could tie); `ts` is the time in milliseconds, for windows.
CREATE TABLE metric_points (
  id             TEXT PRIMARY KEY,
  org_id         TEXT NOT NULL,
  seq            INTEGER NOT NULL,
  actor_id       TEXT NOT NULL,
  agent          TEXT NOT NULL,
  agent_system   TEXT NOT NULL,
  agent_version  TEXT NOT NULL,
  session_id     TEXT NOT NULL,
  instrument     TEXT NOT NULL,
  measure        TEXT NOT NULL,
  type           TEXT NOT NULL,
  model          TEXT NOT NULL,
  tool           TEXT NOT NULL,
  decision       TEXT NOT NULL,
  language       TEXT NOT NULL,
  temporality    TEXT NOT NULL,
  monotonic      INTEGER NOT NULL,
  series_id      TEXT NOT NULL,
  start_time_ns  INTEGER,
  time_ns        INTEGER NOT NULL,
  ts             INTEGER NOT NULL,
  value          REAL NOT NULL
);
CREATE INDEX metric_points_by_time ON metric_points (org_id, ts);
CREATE INDEX metric_points_by_series ON metric_points (series_id, start_time_ns, time_ns);
CREATE INDEX metric_points_by_seq ON metric_points (seq);
