-- Telemetry an organization's agents sent that stored nothing (an event no
-- mapping keeps, a record of no known agent, a record missing what its event
-- needs), per actor, agent, version, event name and reason: the drift a new
-- client release brings shows here the day it ships (GET /v1/unmapped-events).
-- At most 1,000 rows per organization (sql/sqlite/ingest.sql note_unmapped).
CREATE TABLE unmapped_events (
  org_id        TEXT NOT NULL,
  actor_id      TEXT NOT NULL,
  agent         TEXT NOT NULL,
  agent_version TEXT NOT NULL,
  event_name    TEXT NOT NULL,
  reason        TEXT NOT NULL,
  records       INTEGER NOT NULL,
  first_seen    INTEGER NOT NULL,
  last_seen     INTEGER NOT NULL,
  PRIMARY KEY (org_id, actor_id, agent, agent_version, event_name, reason)
) WITHOUT ROWID;
