/**
 * The data directory (docs/design.md §2): `keys.db`, `telemetry.db` and
 * `analytics.duckdb`, opened and migrated together.
 *
 * @module
 */
import { KeyStore } from "./keys.ts";
import { telemetryMigrations } from "./migrations.ts";
import type { RetentionOptions } from "../stores.ts";
import { migrate, openDatabase, requireMigrated } from "./database.ts";
import { TelemetryWriter } from "./telemetry_writer.ts";
import { WriterThread } from "./writer_thread.ts";
import { openDataFile } from "./file_checks.ts";
import { log } from "../../log.ts";

/** The open stores of one data directory. */
export interface DataDir {
  keys: KeyStore;
  /** The write path (ingest, retention) on its own thread; null in read-only mode. */
  writer: WriterThread | null;
  telemetryPath: string;
  close(): Promise<void>;
}

/** Options of {@link openDataDir}. */
export interface DataDirOptions {
  redactSecrets: boolean;
  retention?: RetentionOptions;
  /** Serve an existing, migrated directory without writing to it. */
  readOnly?: boolean;
}

const DEFAULT_RETENTION: RetentionOptions = {
  retentionDays: 400,
  maxDiskBytes: null,
  batchSize: 5000,
};

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
  Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = dataPaths(dir).keys;
  return openDataFile(path, () => KeyStore.open(path));
}

/** Creates `telemetry.db` when missing and applies its migrations. */
function migrateTelemetry(path: string): void {
  const db = openDatabase(path);
  try {
    migrate(
      db,
      telemetryMigrations,
      (notice) =>
        log("info", "migrating telemetry.db; the server starts when it is done", {
          path,
          from_version: notice.from,
          to_version: notice.to,
          step: notice.name,
          rows: notice.rows,
          estimated_seconds: notice.estimatedSeconds,
        }),
    );
  } finally {
    db.close();
  }
}

/**
 * The path of `telemetry.db`, migrated, for a command that reads it outside
 * the server (`export`); null when the directory holds none yet.
 */
export function migratedTelemetryPath(dir: string): string | null {
  const path = dataPaths(dir).telemetry;
  try {
    Deno.statSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  openDataFile(path, () => migrateTelemetry(path));
  return path;
}

/**
 * A writer on the calling thread, for commands that run outside the server
 * (`detect rescan`); SQLite serializes it with a running server's writer.
 */
export function openTelemetryWriter(
  dir: string,
  options: { redactSecrets: boolean },
): { writer: TelemetryWriter; close(): void } {
  const path = dataPaths(dir).telemetry;
  const db = openDataFile(path, () => {
    migrateTelemetry(path);
    return openDatabase(path);
  });
  return { writer: new TelemetryWriter(db, options), close: () => db.close() };
}

/** Creates the directory when missing and opens both SQLite stores, migrated. */
export async function openDataDir(dir: string, options: DataDirOptions): Promise<DataDir> {
  const paths = dataPaths(dir);
  if (options.readOnly) {
    const keys = KeyStore.open(paths.keys, { readOnly: true });
    const telemetryDb = openDatabase(paths.telemetry, { readOnly: true });
    try {
      requireMigrated(telemetryDb, telemetryMigrations, paths.telemetry);
    } finally {
      telemetryDb.close();
    }
    return {
      keys,
      writer: null,
      telemetryPath: paths.telemetry,
      close: () => Promise.resolve(keys.close()),
    };
  }
  Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const keys = KeyStore.open(paths.keys);
  migrateTelemetry(paths.telemetry);
  const writer = await WriterThread.open(paths.telemetry, {
    redactSecrets: options.redactSecrets,
    retention: options.retention ?? DEFAULT_RETENTION,
  });
  return {
    keys,
    writer,
    telemetryPath: paths.telemetry,
    async close() {
      await writer.close();
      keys.close();
    },
  };
}
