/**
 * The numbered SQL migrations of each SQLite file: `sql/sqlite/keys_000N_*.sql`
 * for `keys.db`, `sql/sqlite/telemetry_000N_*.sql` for `telemetry.db`, found
 * by name (`../migration.ts`); here only what a step needs besides its SQL.
 *
 * @module
 */
import { type Migration, readMigrations } from "../migration.ts";

const [keys, telemetry] = readMigrations(new URL("../../../sql/sqlite/", import.meta.url), [
  { prefix: "keys_" },
  {
    prefix: "telemetry_",
    extras: {
      6: {
        withdrawn: "dropping the tool_type, category and outcome indexes, before any release: " +
          "a value an organization rarely or never stored made its list walk every call",
      },
      11: { rebuilds: { table: "tool_calls", rowsPerSecond: 50_000 } },
      15: { rebuilds: { table: "tool_calls", rowsPerSecond: 15_000 } },
    },
  },
]);

/** Migrations of `keys.db`. */
export const keyStoreMigrations: readonly Migration[] = keys!;

/** Migrations of `telemetry.db`. */
export const telemetryMigrations: readonly Migration[] = telemetry!;
