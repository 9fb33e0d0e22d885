/**
 * The numbered SQL migrations of each SQLite file, imported as text so that
 * `deno compile` embeds them.
 *
 * @module
 */
import keysInit from "../../../sql/sqlite/keys_0001_init.sql" with { type: "text" };
import keysInstallationSecret from "../../../sql/sqlite/keys_0002_installation_secret.sql" with {
  type: "text",
};
import telemetryInit from "../../../sql/sqlite/telemetry_0001_init.sql" with { type: "text" };
import telemetryRetention from "../../../sql/sqlite/telemetry_0002_retention.sql" with {
  type: "text",
};
import telemetryLeanIndexes from "../../../sql/sqlite/telemetry_0003_lean_indexes.sql" with {
  type: "text",
};
import telemetryRangeRepair from "../../../sql/sqlite/telemetry_0004_range_repair.sql" with {
  type: "text",
};
import telemetryMetricPoints from "../../../sql/sqlite/telemetry_0005_metric_points.sql" with {
  type: "text",
};
import telemetrySessionActors from "../../../sql/sqlite/telemetry_0007_session_actors.sql" with {
  type: "text",
};
import telemetryRiskFlagsByTime from "../../../sql/sqlite/telemetry_0008_risk_flags_by_time.sql" with {
  type: "text",
};
import telemetryParentSessions from "../../../sql/sqlite/telemetry_0009_parent_sessions.sql" with {
  type: "text",
};
import telemetryUnmappedEvents from "../../../sql/sqlite/telemetry_0010_unmapped_events.sql" with {
  type: "text",
};
import telemetryEstimatedCost from "../../../sql/sqlite/telemetry_0012_estimated_cost.sql" with {
  type: "text",
};
import telemetryNarrowCallIndexes from "../../../sql/sqlite/telemetry_0011_narrow_call_indexes.sql" with {
  type: "text",
};
import telemetrySessionDimensions from "../../../sql/sqlite/telemetry_0013_session_dimensions.sql" with {
  type: "text",
};
import type { Migration } from "../migration.ts";

/** Migrations of `keys.db`. */
export const keyStoreMigrations: readonly Migration[] = [
  { version: 1, name: "init", sql: keysInit },
  { version: 2, name: "installation secret", sql: keysInstallationSecret },
];

/** Migrations of `telemetry.db`. */
export const telemetryMigrations: readonly Migration[] = [
  { version: 1, name: "init", sql: telemetryInit },
  { version: 2, name: "retention", sql: telemetryRetention },
  { version: 3, name: "lean indexes", sql: telemetryLeanIndexes },
  { version: 4, name: "range repair", sql: telemetryRangeRepair },
  { version: 5, name: "metric points", sql: telemetryMetricPoints },
  // Version 6 (dropping the tool_type, category and outcome indexes) was withdrawn before any
  // release: a value an organization rarely or never stored made its list walk every call.
  { version: 7, name: "session actors", sql: telemetrySessionActors },
  { version: 8, name: "risk flags by time", sql: telemetryRiskFlagsByTime },
  { version: 9, name: "parent sessions", sql: telemetryParentSessions },
  { version: 10, name: "unmapped events", sql: telemetryUnmappedEvents },
  {
    version: 11,
    name: "narrow call indexes",
    sql: telemetryNarrowCallIndexes,
    rebuilds: { table: "tool_calls", rowsPerSecond: 50_000 },
  },
  { version: 12, name: "estimated cost", sql: telemetryEstimatedCost },
  { version: 13, name: "session dimensions", sql: telemetrySessionDimensions },
];
