/**
 * The data directory (DESIGN §2): `keys.db`, `telemetry.db` and
 * `analytics.duckdb`, opened and migrated together.
 *
 * @module
 */
import { KeyStore } from "./keys.ts";
import { telemetryMigrations } from "./migrations.ts";
import { Retention, type RetentionOptions } from "./retention.ts";
import { migrate, openDatabase, requireMigrated } from "./sqlite.ts";
import { TelemetryWriter } from "./telemetry_writer.ts";
import { Checkpointer } from "./checkpointer.ts";

/** The open stores of one data directory. */
export interface DataDir {
  keys: KeyStore;
  /** Null in read-only mode. */
  writer: TelemetryWriter | null;
  /** Null in read-only mode. */
  retention: Retention | null;
  telemetryPath: string;
  close(): Promise<void> | void;
}

/** Options of {@link openDataDir}. */
export interface DataDirOptions {
  redactSecrets: boolean;
  retention?: RetentionOptions;
  /** Serve an existing, migrated directory without writing to it. */
  readOnly?: boolean;
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
export function openDataDir(dir: string, options: DataDirOptions): DataDir {
  const paths = dataPaths(dir);
  if (options.readOnly) {
    const keys = KeyStore.open(paths.keys, { readOnly: true });
    const telemetryDb = openDatabase(paths.telemetry, { readOnly: true });
    requireMigrated(telemetryDb, telemetryMigrations, paths.telemetry);
    return {
      keys,
      writer: null,
      retention: null,
      telemetryPath: paths.telemetry,
      close() {
        keys.close();
        if (telemetryDb.isOpen) telemetryDb.close();
      },
    };
  }
  Deno.mkdirSync(dir, { recursive: true });
  const keys = KeyStore.open(paths.keys);
  const telemetryDb = openDatabase(paths.telemetry);
  migrate(telemetryDb, telemetryMigrations);
  // Checkpoints run on the checkpointer thread (src/store/checkpointer.ts), not in COMMIT.
  telemetryDb.exec("PRAGMA wal_autocheckpoint = 0");
  const checkpointer = new Checkpointer(paths.telemetry, 250);
  return {
    keys,
    writer: new TelemetryWriter(telemetryDb, options),
    retention: new Retention(
      telemetryDb,
      paths.telemetry,
      options.retention ?? { retentionDays: 400, maxDiskBytes: null, batchSize: 5000 },
    ),
    telemetryPath: paths.telemetry,
    async close() {
      await checkpointer.stop();
      keys.close();
      if (!telemetryDb.isOpen) return;
      try {
        telemetryDb.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      } catch {
        // A reader still holds the WAL: the next start checkpoints it.
      }
      telemetryDb.close();
    },
  };
}
