/**
 * The data directory (DESIGN §2): `keys.db`, `telemetry.db` and, later,
 * `analytics.duckdb`, opened and migrated together.
 *
 * @module
 */
import { KeyStore } from "./keys.ts";
import { telemetryMigrations } from "./migrations.ts";
import { migrate, openDatabase } from "./sqlite.ts";
import { TelemetryWriter } from "./telemetry_writer.ts";
import { Retention, type RetentionOptions } from "./retention.ts";

/** The open stores of one data directory. */
export interface DataDir {
  keys: KeyStore;
  writer: TelemetryWriter;
  retention: Retention;
  telemetryPath: string;
  close(): void;
}

/** Paths of the files in a data directory. */
export function dataPaths(dir: string) {
  return {
    keys: `${dir}/keys.db`,
    telemetry: `${dir}/telemetry.db`,
    analytics: `${dir}/analytics.duckdb`,
  };
}

/** Opens just the key store (admin commands). */
export function openKeyStore(dir: string): KeyStore {
  Deno.mkdirSync(dir, { recursive: true });
  return KeyStore.open(dataPaths(dir).keys);
}

/** Creates the directory when missing and opens both SQLite stores, migrated. */
export function openDataDir(
  dir: string,
  options: { redactSecrets: boolean; retention?: RetentionOptions },
): DataDir {
  Deno.mkdirSync(dir, { recursive: true });
  const paths = dataPaths(dir);
  const keys = KeyStore.open(paths.keys);
  const telemetryDb = openDatabase(paths.telemetry);
  migrate(telemetryDb, telemetryMigrations);
  const writer = new TelemetryWriter(telemetryDb, options);
  const retention = new Retention(
    telemetryDb,
    paths.telemetry,
    options.retention ?? { retentionDays: 400, maxDiskBytes: null, batchSize: 5000 },
  );
  return {
    keys,
    writer,
    retention,
    telemetryPath: paths.telemetry,
    close() {
      keys.close();
      if (telemetryDb.isOpen) telemetryDb.close();
    },
  };
}
