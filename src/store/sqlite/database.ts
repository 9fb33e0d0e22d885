/**
 * Opening SQLite files the one way this service uses them: busy timeout first,
 * then WAL, `synchronous=NORMAL` and foreign keys; numbered migrations applied
 * in one transaction; a `tx()` helper for write transactions.
 *
 * @module
 */
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { latestVersion, type Migration, pendingMigrations } from "../migration.ts";
import { namedSql } from "../named_sql.ts";
import { StoreUnavailableError, type UnavailableReason, UserInputError } from "../../errors.ts";

/** What a migration about to take a while says first: its name, the rows it rebuilds, its time. */
export interface MigrationNotice {
  from: number;
  to: number;
  name: string;
  rows: number;
  estimatedSeconds: number;
}

/** Options for {@link openDatabase}. */
export interface OpenOptions {
  /** Milliseconds a writer waits for another writer before SQLITE_BUSY. */
  busyTimeoutMs?: number;
  readOnly?: boolean;
  /** Page cache of this connection in MiB (default 8); the writer's wants the most. */
  cacheMiB?: number;
}

/** Opens (creating when missing) a SQLite file with the service's pragmas. */
export function openDatabase(path: string, options: OpenOptions = {}): DatabaseSync {
  const db = new DatabaseSync(sqliteLocation(path, options.readOnly ?? false), {
    timeout: options.busyTimeoutMs ?? 5000,
    readOnly: options.readOnly ?? false,
    enableForeignKeyConstraints: true,
  });
  if (!options.readOnly) {
    // Only takes effect on a new, empty file: lets retention hand pages back to the disk.
    db.exec("PRAGMA auto_vacuum = INCREMENTAL");
    db.exec("PRAGMA journal_mode = WAL");
  }
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA temp_store = MEMORY");
  db.exec(`PRAGMA cache_size = -${Math.round((options.cacheMiB ?? 8) * 1024)}`);
  return db;
}

/**
 * Where SQLite opens `path`: the path itself, or, read-only on read-only
 * media (where SQLite cannot create the WAL's `-shm` file), an `immutable`
 * URI that needs none. A WAL that still holds writes cannot be read that way:
 * that is refused with what to do.
 */
export function sqliteLocation(path: string, readOnly: boolean): string | URL {
  if (!readOnly || directoryWritable(parentDirectory(path))) return path;
  let walBytes = 0;
  try {
    walBytes = Deno.statSync(`${path}-wal`).size;
  } catch {
    // No WAL: everything is in the file.
  }
  if (walBytes > 0) {
    throw new UserInputError(
      `Data file on read-only storage has writes only in its WAL: "${path}-wal"; start once without --readonly on writable storage so they are checkpointed`,
    );
  }
  const url = new URL(`file://${encodeURI(absolutePath(path))}`);
  url.searchParams.set("immutable", "1");
  return url;
}

function parentDirectory(path: string): string {
  const index = path.lastIndexOf("/");
  return index < 0 ? "." : index === 0 ? "/" : path.slice(0, index);
}

function absolutePath(path: string): string {
  return path.startsWith("/") ? path : `${Deno.cwd()}/${path}`;
}

/** Whether a file can be created in `dir` (read-only media and permissions say no). */
export function directoryWritable(dir: string): boolean {
  const probe = `${dir}/.write-probe-${crypto.randomUUID()}`;
  try {
    Deno.writeFileSync(probe, new Uint8Array(), { createNew: true });
    Deno.removeSync(probe);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `fn` inside `BEGIN IMMEDIATE … COMMIT`, rolling back when it throws.
 * Nested calls join the outer transaction.
 */
export function tx<T>(db: DatabaseSync, fn: () => T): T {
  if (db.isTransaction) return fn();
  db.exec("BEGIN IMMEDIATE");
  try {
    const value = fn();
    db.exec("COMMIT");
    return value;
  } catch (error) {
    if (db.isTransaction) db.exec("ROLLBACK");
    throw error;
  }
}

/** Throws unless every migration was applied (for read-only opens, which cannot migrate). */
export function requireMigrated(db: DatabaseSync, migrations: readonly Migration[], path: string) {
  const current = Number(
    (db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version,
  );
  const latest = latestVersion(migrations);
  if (current < latest) {
    throw new UserInputError(
      `Read-only data file is not at the current schema: "${path}" (version ${current}, needs ${latest}); start once without --readonly`,
    );
  }
}

/**
 * Applies the migrations newer than the file's `user_version`, all in one
 * transaction; `notice` hears first of each that rebuilds a table holding
 * rows, with an estimate of its time (a new file has none).
 */
export function migrate(
  db: DatabaseSync,
  migrations: readonly Migration[],
  notice?: (notice: MigrationNotice) => void,
): number {
  const current = Number(
    (db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version,
  );
  const pending = pendingMigrations(migrations, current);
  const last = pending.at(-1);
  if (!last) return current;
  for (const migration of pending) {
    if (!migration.rebuilds || !notice) continue;
    const { table, rowsPerSecond } = migration.rebuilds;
    const exists = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?")
      .get(table);
    if (!exists) continue;
    const { rows } = db.prepare(`SELECT count(*) AS rows FROM "${table}"`).get() as {
      rows: number;
    };
    if (rows === 0) continue;
    notice({
      from: current,
      to: last.version,
      name: migration.name,
      rows,
      estimatedSeconds: Math.ceil(rows / rowsPerSecond),
    });
  }
  tx(db, () => {
    for (const migration of pending) db.exec(migration.sql);
    db.exec(`PRAGMA user_version = ${last.version}`);
  });
  return last.version;
}

/** SQLite's primary result codes that mean "not now", by reason. */
const UNAVAILABLE_CODES: Record<number, UnavailableReason> = {
  5: "busy", // SQLITE_BUSY
  6: "busy", // SQLITE_LOCKED
  8: "readOnly", // SQLITE_READONLY
  10: "io", // SQLITE_IOERR
  13: "full", // SQLITE_FULL
};

/** SQLite's own texts of those codes, for errors without `errcode` (`exec`: BEGIN, COMMIT). */
const UNAVAILABLE_TEXTS: [RegExp, UnavailableReason][] = [
  [/^database (table )?is locked/, "busy"],
  [/^database or disk is full/, "full"],
  [/^attempt to write a readonly database/, "readOnly"],
  [/^disk I\/O error/, "io"],
];

/**
 * The neutral {@link StoreUnavailableError} for a SQLite failure that passes
 * (busy, locked, full, read-only, I/O error), including extended codes;
 * null for any other error. Nothing of a failed transaction was stored.
 */
export function sqliteUnavailable(
  error: { errcode?: unknown; message?: unknown } | null | undefined,
): StoreUnavailableError | null {
  if (error instanceof StoreUnavailableError) return error;
  const message = typeof error?.message === "string" ? error.message : "";
  const code = error?.errcode;
  let reason: UnavailableReason | undefined;
  if (typeof code === "number") reason = UNAVAILABLE_CODES[code & 0xff];
  reason ??= UNAVAILABLE_TEXTS.find(([pattern]) => pattern.test(message))?.[1];
  return reason === undefined ? null : new StoreUnavailableError(reason, message);
}

/** Named statements (`named_sql.ts`) on one connection, each prepared on its first use. */
export class NamedStatements {
  readonly #db: DatabaseSync;
  readonly #sql: Readonly<Record<string, string>>;
  readonly #prepared = new Map<string, StatementSync>();

  constructor(db: DatabaseSync, sql: Readonly<Record<string, string>>) {
    this.#db = db;
    this.#sql = sql;
  }

  /** The statement `name`, prepared once. */
  statement(name: string): StatementSync {
    let statement = this.#prepared.get(name);
    if (statement === undefined) {
      statement = this.#db.prepare(namedSql(this.#sql, name));
      this.#prepared.set(name, statement);
    }
    return statement;
  }

  /** Runs the statement `name` as `mode` (`run`, `get` or `all`) with `params`. */
  run(name: string, mode: "run" | "get" | "all", ...params: SQLInputValue[]): unknown {
    return this.statement(name)[mode](...params);
  }
}
