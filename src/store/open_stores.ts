/**
 * Opens the stores `serve` runs on: the embedded SQLite files of the data
 * directory, or PostgreSQL when `--database` names one (docs/design.md §8). The rest
 * of the server sees only the interfaces of `stores.ts`.
 *
 * @module
 */
import type { ServeConfig } from "../config.ts";
import {
  dataPaths,
  migratedTelemetryPath,
  openDataDir,
  openKeyStore,
  openTelemetryWriter,
} from "./sqlite/data_dir.ts";
import { checkDataFiles } from "./sqlite/file_checks.ts";
import { connectPostgres } from "./postgres/client.ts";
import { PgKeyStore } from "./postgres/keys.ts";
import { migrateOrEnd } from "./postgres/migrate.ts";
import { PgReader } from "./postgres/reader.ts";
import { PgTelemetryWriter } from "./postgres/telemetry_writer.ts";
import { ReaderPool } from "./sqlite/reader.ts";
import type {
  KeyStoreApi,
  RetentionOptions,
  TelemetryReader,
  TelemetryWriterApi,
} from "./stores.ts";

/** Where the analytics replica copies telemetry from. */
export type ReplicaSourceSpec =
  | { engine: "sqlite"; path: string }
  | { engine: "postgres"; url: string };

/** The open stores of one server process. */
export interface Stores {
  engine: "sqlite" | "postgres";
  keys: KeyStoreApi;
  /** The write path (ingest, retention); null on a read-only node. */
  writer: TelemetryWriterApi | null;
  reader: TelemetryReader;
  replicaSource: ReplicaSourceSpec;
  /** Resolves when the key store answers, the writer takes a transaction and a read answers. */
  readiness(): Promise<void>;
  close(): Promise<void>;
}

/** Opens the stores `config` names, migrated (unless read-only). */
export function openStores(config: ServeConfig): Promise<Stores> {
  return config.database === null ? openSqliteStores(config) : openPostgresStores(config);
}

function retentionOf(config: ServeConfig): RetentionOptions {
  return {
    retentionDays: config.retentionDays,
    maxDiskBytes: config.maxDiskBytes,
    batchSize: 5000,
  };
}

async function openSqliteStores(config: ServeConfig): Promise<Stores> {
  checkDataFiles(config.dataDir, {
    readOnly: config.readOnly,
    allowEmptyStore: config.allowEmptyStore,
  });
  const dataDir = await openDataDir(config.dataDir, {
    readOnly: config.readOnly,
    redactSecrets: !config.keepSecrets,
    retention: retentionOf(config),
  });
  const reader = new ReaderPool({
    path: dataDir.telemetryPath,
    threads: config.readerThreads,
    timeoutMs: config.queryTimeoutMs,
    maxQueued: config.maxQueuedQueries,
  });
  await reader.ready();
  return {
    engine: "sqlite",
    keys: dataDir.keys,
    writer: dataDir.writer,
    reader,
    replicaSource: { engine: "sqlite", path: dataPaths(config.dataDir).telemetry },
    async readiness() {
      dataDir.keys.probe();
      await dataDir.writer?.probe();
      await reader.read([{ sql: "SELECT count(*) AS n FROM counters", params: [] }]);
    },
    async close() {
      reader.close();
      await dataDir.close();
    },
  };
}

/**
 * Separate pools, so that slow reads never hold back key checks or ingest:
 * a small one for the key store, one for the writer, one of
 * `--reader-threads` connections for reads (the time limit is each read's
 * `statement_timeout`).
 */
async function openPostgresStores(config: ServeConfig): Promise<Stores> {
  const url = config.database!;
  // The node's own file, the replica, lives there.
  Deno.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const keysPool = connectPostgres(url, { max: 2, applicationName: "agent-telemetry keys" });
  const writerPool = connectPostgres(url, { max: 4, applicationName: "agent-telemetry ingest" });
  const readPool = connectPostgres(url, {
    max: config.readerThreads,
    applicationName: "agent-telemetry reads",
  });
  const pools = [keysPool, writerPool, readPool];
  await migrateOrEnd(keysPool, pools, { readOnly: config.readOnly });
  const keys = new PgKeyStore(keysPool, { readOnly: config.readOnly });
  const writer = config.readOnly ? null : new PgTelemetryWriter(writerPool, {
    redactSecrets: !config.keepSecrets,
    retention: retentionOf(config),
  });
  const reader = new PgReader(readPool, {
    timeoutMs: config.queryTimeoutMs,
    maxConcurrent: config.readerThreads,
    maxQueued: config.maxQueuedQueries,
  });
  return {
    engine: "postgres",
    keys,
    writer,
    reader,
    replicaSource: { engine: "postgres", url },
    async readiness() {
      await keys.probe();
      await writer?.probe();
      await reader.read([{ sql: "SELECT 1 AS n", params: [] }]);
    },
    async close() {
      await writer?.close();
      await reader.close();
      await keys.close();
      await Promise.all(pools.map((pool) => pool.end({ timeout: 5 })));
    },
  };
}

/** The key store of the admin commands: PostgreSQL when `database` is set, else `keys.db`. */
export async function openKeyStoreFor(dir: string, database: string | null): Promise<KeyStoreApi> {
  return database === null ? openKeyStore(dir) : await PgKeyStore.open(database);
}

/** What `detect rescan` needs: batches of stored calls run through detection again. */
export interface Rescanner {
  rescanBatch(afterId: string, limit: number): Promise<{ lastId: string | null; scanned: number }>;
  close(): Promise<void>;
}

/** A rescanner over the store `database` names, else the data directory's `telemetry.db`. */
export async function openRescanner(
  dir: string,
  database: string | null,
  options: { redactSecrets: boolean },
): Promise<Rescanner> {
  if (database === null) {
    const store = openTelemetryWriter(dir, options);
    return {
      rescanBatch: (afterId, limit) => Promise.resolve(store.writer.rescanBatch(afterId, limit)),
      close: () => Promise.resolve(store.close()),
    };
  }
  const pool = connectPostgres(database, { max: 1, applicationName: "agent-telemetry rescan" });
  await migrateOrEnd(pool, [pool]);
  const writer = new PgTelemetryWriter(pool, {
    ...options,
    retention: { retentionDays: Number.MAX_SAFE_INTEGER, maxDiskBytes: null, batchSize: 5000 },
  });
  return {
    rescanBatch: (afterId, limit) => writer.rescanBatch(afterId, limit),
    async close() {
      await writer.close();
      await pool.end();
    },
  };
}

/** What `export` reads: the organizations and actors' names, and the telemetry store. */
export interface ExportStores {
  keys: KeyStoreApi;
  /** Null when the data directory holds no telemetry yet. */
  reader: TelemetryReader | null;
  close(): Promise<void>;
}

/**
 * The stores `export` reads: PostgreSQL when `database` is set, else the
 * data directory's files (migrated, as the admin commands do), with one
 * reader under the query time limit of each page.
 */
export async function openExportStores(
  dir: string,
  database: string | null,
  options: { timeoutMs: number },
): Promise<ExportStores> {
  if (database === null) {
    const keys = openKeyStore(dir);
    const path = migratedTelemetryPath(dir);
    const reader = path === null
      ? null
      : new ReaderPool({ path, threads: 1, timeoutMs: options.timeoutMs });
    await reader?.ready();
    return {
      keys,
      reader,
      close() {
        reader?.close();
        keys.close();
        return Promise.resolve();
      },
    };
  }
  const keys = await PgKeyStore.open(database);
  const pool = connectPostgres(database, { max: 1, applicationName: "agent-telemetry export" });
  const reader = new PgReader(pool, { timeoutMs: options.timeoutMs, maxConcurrent: 1 });
  return {
    keys,
    reader,
    async close() {
      reader.close();
      await keys.close();
      await pool.end({ timeout: 5 });
    },
  };
}
