-- Telemetry that stored nothing, per organization, actor, agent, version,
-- event name and reason: as sql/sqlite/telemetry_0010_unmapped_events.sql.
CREATE TABLE unmapped_events (
  org_id        TEXT COLLATE "C" NOT NULL,
  actor_id      TEXT COLLATE "C" NOT NULL,
  agent         TEXT COLLATE "C" NOT NULL,
  agent_version TEXT COLLATE "C" NOT NULL,
  event_name    TEXT COLLATE "C" NOT NULL,
  reason        TEXT COLLATE "C" NOT NULL,
  records       BIGINT NOT NULL,
  first_seen    BIGINT NOT NULL,
  last_seen     BIGINT NOT NULL,
  PRIMARY KEY (org_id, actor_id, agent, agent_version, event_name, reason)
);
