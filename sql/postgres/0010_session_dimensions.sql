-- Dimensions (docs/api.md §4.22), as sql/sqlite/telemetry_0013_session_dimensions.sql.
CREATE TABLE session_dimensions (
  org_id     TEXT COLLATE "C" NOT NULL,
  session_id TEXT COLLATE "C" NOT NULL,
  key        TEXT COLLATE "C" NOT NULL,
  value      TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (org_id, session_id, key)
);
CREATE INDEX session_dimensions_by_value ON session_dimensions (org_id, key, value, session_id);

CREATE TABLE dimension_values (
  org_id TEXT COLLATE "C" NOT NULL,
  key    TEXT COLLATE "C" NOT NULL,
  value  TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (org_id, key, value)
);

CREATE TABLE dimension_drops (
  org_id  TEXT COLLATE "C" NOT NULL,
  key     TEXT COLLATE "C" NOT NULL,
  dropped BIGINT NOT NULL,
  PRIMARY KEY (org_id, key)
);
