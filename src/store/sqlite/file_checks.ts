/**
 * Start-up checks of a data directory, run before anything is created: each
 * SQLite file that exists is opened read-only and verified (`PRAGMA
 * quick_check`, or the full `integrity_check` on demand), and a directory
 * that shows data once existed — a replica, telemetry — but whose key store
 * is empty, or whose `telemetry.db` is gone, is refused unless the operator
 * says so. Every refusal is one line naming the file and what to do.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { UserInputError } from "../../errors.ts";
import { sqliteLocation } from "./database.ts";

/** A data file that cannot be used as it is: one line naming it and what to do. */
export class DataFileError extends UserInputError {}

/** The flag that lets `serve` start over a store that looks emptied. */
export const ALLOW_EMPTY_STORE_FLAG = "--allow-empty-store";

/**
 * Files up to this size get `quick_check` at every start (about 0.1 s); a
 * larger one only has its header and schema read, so start-up stays short
 * however large the store grows (`quick_check` reads every page: 2.4 s for
 * 1.6 GB). `check` verifies every file in full.
 */
export const START_CHECK_MAX_BYTES = 64 * 1024 * 1024;

/** Options of {@link checkDataFiles}. */
export interface DataFileCheckOptions {
  /** `integrity_check` (every page) instead of `quick_check`, whatever the size. */
  full?: boolean;
  /** Largest file given `quick_check` (default {@link START_CHECK_MAX_BYTES}). */
  quickCheckMaxBytes?: number;
  /** Start even when the key store is empty or `telemetry.db` missing while data existed. */
  allowEmptyStore?: boolean;
  /** Serving read-only: nothing will be created, so every file must exist. */
  readOnly?: boolean;
}

/** What a check found, file by file (`check --json`). */
export type DataFileReport = Record<string, "ok" | "missing">;

const RESTORE_HINT = "restore it from a backup (restore --from DIR) or move it away";

/** Verifies the SQLite files of `dir`; throws {@link DataFileError} on the first problem. */
export function checkDataFiles(
  dir: string,
  options: DataFileCheckOptions = {},
): DataFileReport {
  const paths = {
    keys: `${dir}/keys.db`,
    telemetry: `${dir}/telemetry.db`,
    analytics: `${dir}/analytics.duckdb`,
  };
  const report: DataFileReport = {};
  const sizes: Record<string, number | null> = {};
  for (const [name, path] of Object.entries(paths)) sizes[name] = fileSize(path);
  if (sizes.keys === null && sizes.telemetry === null && sizes.analytics === null) {
    if (options.readOnly) {
      throw new DataFileError(
        `No data files in "${dir}": --readonly serves an existing data directory; check --data`,
      );
    }
    return { [paths.keys]: "missing", [paths.telemetry]: "missing" };
  }
  const facts = { orgs: 0, toolCalls: 0 };
  for (const name of ["keys", "telemetry"] as const) {
    const path = paths[name];
    if (sizes[name] === null) {
      report[path] = "missing";
      continue;
    }
    if (sizes[name] === 0) {
      // SQLite takes an empty file as a new database.
      if (options.allowEmptyStore) continue;
      throw new DataFileError(
        `Empty data file: "${path}" (0 bytes); ${RESTORE_HINT}, or start with ${ALLOW_EMPTY_STORE_FLAG}`,
      );
    }
    if (!options.readOnly) requireWritable(path);
    const depth = options.full
      ? "full"
      : sizes[name]! <= (options.quickCheckMaxBytes ?? START_CHECK_MAX_BYTES)
      ? "quick"
      : "schema";
    const counted = verifySqliteFile(path, name, depth);
    if (name === "keys") facts.orgs = counted;
    else facts.toolCalls = counted;
    report[path] = "ok";
  }
  if (options.allowEmptyStore) return report;
  const replicaExists = sizes.analytics !== null;
  if (sizes.telemetry === null && replicaExists) {
    throw new DataFileError(
      `Missing data file: "${paths.telemetry}" while "${paths.analytics}" shows data existed; restore it from a backup (restore --from DIR), or start with ${ALLOW_EMPTY_STORE_FLAG} to begin empty`,
    );
  }
  if (facts.orgs === 0 && (facts.toolCalls > 0 || (sizes.keys === null && replicaExists))) {
    throw new DataFileError(
      `Empty key store: "${paths.keys}" has no organizations while telemetry exists (every agent would get 401); restore it from a backup, or start with ${ALLOW_EMPTY_STORE_FLAG}`,
    );
  }
  return report;
}

/**
 * Opens a SQLite file read-only and verifies it to `depth`: `integrity_check`,
 * `quick_check`, or only its header and schema; returns 1 when it holds an
 * organization (key store) or a tool call (telemetry), else 0.
 */
function verifySqliteFile(
  path: string,
  name: "keys" | "telemetry",
  depth: "full" | "quick" | "schema",
): number {
  // A read-only connection to a WAL database creates `-wal` and `-shm`:
  // remove them again when they were not there before, so that a refused
  // start leaves the directory as it found it.
  const companions = [`${path}-wal`, `${path}-shm`].filter((file) => fileSize(file) === null);
  let db: DatabaseSync | null = null;
  try {
    db = new DatabaseSync(sqliteLocation(path, true), { readOnly: true });
    const pragma = depth === "full" ? "integrity_check" : "quick_check";
    const rows = depth === "schema"
      ? [{ verdict: schemaVerdict(db) }]
      : db.prepare(`PRAGMA ${pragma}`).all() as Record<string, unknown>[];
    const verdict = rows.map((row) => String(Object.values(row)[0])).join("; ").replace(
      /\s+/g,
      " ",
    );
    if (verdict !== "ok") {
      throw new DataFileError(
        `Corrupt data file: "${path}" (${pragma}: ${verdict.slice(0, 200)}); ${RESTORE_HINT}`,
      );
    }
    const table = name === "keys" ? "orgs" : "tool_calls";
    if (!hasTable(db, table)) return 0;
    return db.prepare(`SELECT 1 FROM ${table} LIMIT 1`).get() === undefined ? 0 : 1;
  } catch (error) {
    if (error instanceof DataFileError) throw error;
    throw new DataFileError(
      `Cannot use data file: "${path}" (${describe(error)}); ${hintFor(error)}`,
    );
  } finally {
    if (db?.isOpen) db.close();
    if (companions.length === 2 && !(Number(fileSize(`${path}-wal`)) > 0)) {
      for (const file of companions) removeQuietly(file);
    }
  }
}

/** "ok" when the header and every schema page read (a damaged one throws). */
function schemaVerdict(db: DatabaseSync): string {
  db.prepare("SELECT count(*) FROM sqlite_master").get();
  return "ok";
}

function removeQuietly(path: string): void {
  try {
    Deno.removeSync(path);
  } catch {
    // Not created.
  }
}

function requireWritable(path: string): void {
  try {
    Deno.openSync(path, { read: true, write: true }).close();
  } catch (error) {
    throw new DataFileError(
      `Data file is not writable: "${path}" (${
        describe(error)
      }); give the service's user read and write permission on it, or serve it with --readonly`,
    );
  }
}

/** Whether `table` exists: a table, or a view (tool_calls since schema 15, its table before). */
function hasTable(db: DatabaseSync, table: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?")
    .get(table) !== undefined;
}

function hintFor(error: unknown): string {
  const text = describe(error);
  if (/not a database|malformed|corrupt/i.test(text)) return RESTORE_HINT;
  if (/permission|readonly|read-only|access/i.test(text)) {
    return "give the service's user read and write permission on it";
  }
  return RESTORE_HINT;
}

function fileSize(path: string): number | null {
  try {
    return Deno.statSync(path).size;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw new DataFileError(
      `Cannot use data file: "${path}" (${describe(error)}); give the service's user access to it`,
    );
  }
}

/**
 * Runs `open` on the data file `path`, turning SQLite's refusal of it (not a
 * database, malformed, not permitted) into one line naming the file: admin
 * commands (`org list`, `key list`, `detect rescan`…) meet a damaged file as
 * `serve` does, not as a stack trace.
 */
export function openDataFile<T>(path: string, open: () => T): T {
  try {
    return open();
  } catch (error) {
    if (error instanceof UserInputError) throw error;
    if ((error as { code?: unknown } | null)?.code !== "ERR_SQLITE_ERROR") throw error;
    throw new DataFileError(
      `Cannot use data file: "${path}" (${describe(error)}); ${hintFor(error)}`,
    );
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message.split("\n")[0]! : String(error);
}
