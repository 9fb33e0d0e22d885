-- Dimensions (docs/api.md §4.22): the resource attributes `--dimension` names
-- (team.id, department, cost_center, repository, …), one value per session and
-- key, the first one sent. `session_dimensions_by_value` answers a
-- `dim.<key>=<value>` filter; `dimension_values` is each key's catalogue
-- (at most 1,000 values per key per organization) and `dimension_drops`
-- counts the values refused by a bound.
CREATE TABLE session_dimensions (
  org_id     TEXT NOT NULL,
  session_id TEXT NOT NULL,
  key        TEXT NOT NULL,
  value      TEXT NOT NULL,
  PRIMARY KEY (org_id, session_id, key)
) WITHOUT ROWID;
CREATE INDEX session_dimensions_by_value ON session_dimensions (org_id, key, value, session_id);

CREATE TABLE dimension_values (
  org_id TEXT NOT NULL,
  key    TEXT NOT NULL,
  value  TEXT NOT NULL,
  PRIMARY KEY (org_id, key, value)
) WITHOUT ROWID;

CREATE TABLE dimension_drops (
  org_id  TEXT NOT NULL,
  key     TEXT NOT NULL,
  dropped INTEGER NOT NULL,
  PRIMARY KEY (org_id, key)
) WITHOUT ROWID;
