-- Agents' metric points (issue #18), as sql/sqlite/telemetry_0005_metric_points.sql:
-- one row per (series, start time, time) of a kept instrument, the id derived
-- from those three so a retried export stores nothing twice (ON CONFLICT DO
-- NOTHING); deltas are computed where points are read
-- (sql/metrics/interval_deltas.sql). `txid` and `seq` as for the other tables,
-- for the replica's copy.
CREATE TABLE metric_points (
  id             TEXT COLLATE "C" PRIMARY KEY,
  org_id         TEXT COLLATE "C" NOT NULL,
  seq            BIGINT NOT NULL,
  txid           XID8 NOT NULL DEFAULT pg_current_xact_id(),
  actor_id       TEXT COLLATE "C" NOT NULL,
  agent          TEXT COLLATE "C" NOT NULL,
  agent_system   TEXT COLLATE "C" NOT NULL,
  agent_version  TEXT COLLATE "C" NOT NULL,
  session_id     TEXT COLLATE "C" NOT NULL,
  instrument     TEXT COLLATE "C" NOT NULL,
  measure        TEXT COLLATE "C" NOT NULL,
  type           TEXT COLLATE "C" NOT NULL,
  model          TEXT COLLATE "C" NOT NULL,
  tool           TEXT COLLATE "C" NOT NULL,
  decision       TEXT COLLATE "C" NOT NULL,
  language       TEXT COLLATE "C" NOT NULL,
  temporality    TEXT COLLATE "C" NOT NULL,
  monotonic      SMALLINT NOT NULL,
  series_id      TEXT COLLATE "C" NOT NULL,
  start_time_ns  BIGINT,
  time_ns        BIGINT NOT NULL,
  ts             BIGINT NOT NULL,
  value          DOUBLE PRECISION NOT NULL
);
CREATE INDEX metric_points_by_time ON metric_points (org_id, ts);
CREATE INDEX metric_points_by_series ON metric_points (series_id, start_time_ns, time_ns);
CREATE INDEX metric_points_by_txid ON metric_points (txid, seq);
