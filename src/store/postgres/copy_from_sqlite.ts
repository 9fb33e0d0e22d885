/**
 * Copies a data directory's SQLite stores (`keys.db`, `telemetry.db`) into a
 * PostgreSQL database (docs/design.md §8), for `migrate-to-postgres`.
 *
 * Each table is copied in primary-key order, in batches; a batch and the
 * record of how far the copy got commit in one PostgreSQL transaction
 * (`migration_progress`), so a run that stops anywhere continues where it
 * stopped. Rows keep their ids, values and `seq`; their `txid` is the copying
 * transaction's, so replicas of the new database copy them like any write.
 *
 * The source is read in one snapshot per run, through read-only connections,
 * so the copy works while a server runs on the directory. Whatever that server
 * writes meanwhile is caught up by the next run: telemetry rows by `seq`
 * (inserted, or replacing an older version of the row), deletions from the
 * source's tombstones, key-store rows and decisions by comparing them all
 * again (new rows, revocations), members removed by the list of those the
 * last run saw (`migration_members`: a member added in PostgreSQL itself is
 * never removed). The installation's cursor secret comes along, so page
 * cursors stay valid across the move. Stopping the server and running once more
 * thus leaves the database equal to the directory; a run with nothing new
 * writes nothing.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { DatabaseSync, SQLOutputValue, StatementSync } from "node:sqlite";
import copySql from "../../../sql/postgres/copy.sql" with { type: "text" };
import sourceSql from "../../../sql/sqlite/copy_source.sql" with { type: "text" };
import { UserInputError } from "../../errors.ts";
import { dataPaths } from "../sqlite/data_dir.ts";
import { keyStoreMigrations, telemetryMigrations } from "../sqlite/migrations.ts";
import { namedSql, parseNamedSql } from "../named_sql.ts";
import type { Migration } from "../migration.ts";
import { openDatabase, requireMigrated } from "../sqlite/database.ts";
import {
  connectPostgres,
  isUnavailable,
  numberPlaceholders,
  type PgParam,
  type Sql,
} from "./client.ts";
import { migratePostgres } from "./migrate.ts";

/**
 * What an existing row of the target gets from the source's version of it:
 * `keep` nothing; `revocation` the source's `revoked_at` when the target's
 * key is not revoked (never un-revokes); `newer` every column when the
 * source's `seq` is higher; `changed` every column when any differs.
 */
type ConflictRule = "keep" | "revocation" | "newer" | "changed";

interface TableSpec {
  name: string;
  file: "keys" | "telemetry";
  key: readonly string[];
  onConflict: ConflictRule;
  /** Columns read as decimal text: 64-bit integers past 2^53 (nanosecond times), kept exact. */
  text?: readonly string[];
}

/** The tables copied, parents before children. */
const TABLES: readonly TableSpec[] = [
  { name: "orgs", file: "keys", key: ["id"], onConflict: "keep" },
  { name: "members", file: "keys", key: ["id"], onConflict: "keep" },
  { name: "api_keys", file: "keys", key: ["id"], onConflict: "revocation" },
  { name: "actors", file: "keys", key: ["id"], onConflict: "revocation" },
  { name: "sessions", file: "telemetry", key: ["org_id", "session_id"], onConflict: "newer" },
  { name: "tool_calls", file: "telemetry", key: ["id"], onConflict: "newer" },
  {
    name: "decisions",
    file: "telemetry",
    key: ["org_id", "session_id", "tool_call_id"],
    onConflict: "changed",
  },
  { name: "model_calls", file: "telemetry", key: ["id"], onConflict: "newer" },
  { name: "risk_flags", file: "telemetry", key: ["call_id", "flag"], onConflict: "newer" },
  {
    name: "domain_hits",
    file: "telemetry",
    key: ["call_id", "domain", "scheme"],
    onConflict: "newer",
  },
  {
    name: "metric_points",
    file: "telemetry",
    key: ["id"],
    onConflict: "newer",
    text: ["start_time_ns", "time_ns"],
  },
];

/** Names of the copied tables, in copy order. */
export const COPIED_TABLES: readonly string[] = TABLES.map((t) => t.name);

/** Progress row of the deletions pass. */
const TOMBSTONES = "tombstones";
/** Progress row of the session rollup: not done from a run's start until it is rebuilt. */
const SESSION_ACTORS = "session_actors";

/** Statements run once per batch are parsed once per connection. */
const PREPARED = { prepare: true } as const;

/** Most bound parameters in one statement (the protocol's limit, as `npm:postgres` counts it). */
const MAX_PARAMETERS = 65_534;

const target = parseNamedSql(copySql);
const pg = (name: string) => numberPlaceholders(namedSql(target, name));
const CREATE_PROGRESS = namedSql(target, "create_progress");
const START_TABLE = pg("start_table");
const PROGRESS = pg("progress");
const COPY_BATCH = namedSql(target, "copy_batch");
const COPY_AGAIN = namedSql(target, "copy_again");
const RECORD_DONE = pg("record_done");
const RECORD_SYNCED = pg("record_synced");
const RECORD_PENDING = pg("record_pending");
const CLEAR_ALL_SESSION_ACTORS = pg("clear_all_session_actors");
const REBUILD_SESSION_ACTORS = pg("rebuild_session_actors");
/** Deletions of calls (returning their sessions), then of flags and hits. */
const APPLY_CALL_TOMBSTONES = [pg("apply_tool_call_tombstones"), pg("apply_model_call_tombstones")];
const APPLY_DETECTION_TOMBSTONES = [
  pg("apply_risk_flag_tombstones"),
  pg("apply_domain_hit_tombstones"),
];
const APPLY_METRIC_POINT_TOMBSTONES = pg("apply_metric_point_tombstones");
const DELETE_SESSION = pg("delete_session");
const COPIED_MEMBERS_PRESENT = namedSql(target, "copied_members_present");
const CREATE_COPIED_MEMBERS = namedSql(target, "create_copied_members");
const SEED_COPIED_MEMBERS = namedSql(target, "seed_copied_members");
const REVOKE_REMOVED_MEMBER_KEYS = pg("revoke_removed_member_keys");
const DELETE_REMOVED_MEMBERS = pg("delete_removed_members");
const RECORD_COPIED_MEMBERS = pg("record_copied_members");
const CARRY_CURSOR_SECRET = pg("carry_cursor_secret");
const RAISE_SEQ = pg("raise_seq");

const source = parseNamedSql(sourceSql);
const KEY_STORE_SNAPSHOT = namedSql(source, "key_store_snapshot");
const CURRENT_SEQ = namedSql(source, "current_seq");
const TABLE_COLUMNS = namedSql(source, "table_columns");
const TOMBSTONES_SINCE = namedSql(source, "tombstones_since");
const SESSION_EXISTS = namedSql(source, "session_exists");
const MEMBER_IDS = namedSql(source, "member_ids");
const CURSOR_SECRET = namedSql(source, "cursor_secret");

/** One batch committed. */
export interface CopyProgress {
  table: string;
  /** Rows written to this table so far in this run. */
  rows: number;
  /** Seconds since this table's copy started in this run. */
  seconds: number;
}

/** Options of {@link copyDataDirToPostgres}. */
export interface CopyOptions {
  /** The data directory holding `keys.db` and `telemetry.db`. */
  dataDir: string;
  /** `postgres://` URL of the target database. */
  url: string;
  /** Rows per batch (one transaction each). */
  batchSize: number;
  /** Stops the copy before the next batch; the next run continues from there. */
  signal?: AbortSignal;
  /** Called after every committed batch. */
  onProgress?: (progress: CopyProgress) => void;
  /** Called when a table is finished in this run. */
  onTable?: (progress: CopyProgress) => void;
}

/** What one run did. */
export interface CopyResult {
  /** Rows written per table in this run (inserted, or replacing an older version). */
  tables: Record<string, number>;
  /** Rows deleted because the source deleted them since the last run. */
  deleted: number;
  /** Members removed because the source removed them since the last run. */
  "removed_members": number;
  total: number;
  seconds: number;
  /** The source's `seq` at this run's snapshot (the target's sequence is raised past it). */
  seq: number;
  /** False when stopped by the signal before the end; run again to continue. */
  complete: boolean;
}

interface TableProgress {
  lastKey: string | null;
  done: boolean;
  syncedSeq: number | null;
}

/**
 * Copies the stores of `dataDir` into the database at `url`, migrating its
 * schema first; resumable and idempotent (see the module documentation).
 */
export async function copyDataDirToPostgres(options: CopyOptions): Promise<CopyResult> {
  const started = performance.now();
  const sources = openSources(options.dataDir);
  let sql: Sql;
  try {
    sql = connectPostgres(options.url, { max: 1, applicationName: "agent-telemetry migrate" });
  } catch (error) {
    sources.close();
    throw new UserInputError(`Invalid database URL: ${messageOf(error)}`);
  }
  try {
    await reach(options.url, () => migratePostgres(sql));
    await reach(options.url, () => sql.unsafe(CREATE_PROGRESS));
    const seq = sources.beginSnapshot();
    try {
      const copier = new Copier(sql, sources, seq, options);
      const complete = await reach(options.url, () => copier.run());
      const total = Object.values(copier.tables).reduce((sum, n) => sum + n, 0);
      return {
        tables: copier.tables,
        deleted: copier.deleted,
        removed_members: copier.removedMembers,
        total,
        seconds: round((performance.now() - started) / 1000),
        seq,
        complete,
      };
    } finally {
      sources.endSnapshot();
    }
  } finally {
    sources.close();
    await sql.end();
  }
}

/** The two SQLite files, read-only. */
interface Sources {
  keys: DatabaseSync;
  telemetry: DatabaseSync;
  /** Starts a read transaction on both; resolves with the telemetry `seq` it sees. */
  beginSnapshot(): number;
  endSnapshot(): void;
  close(): void;
}

function openSources(dir: string): Sources {
  let stat: Deno.FileInfo;
  try {
    stat = Deno.statSync(dir);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new UserInputError(`Data directory not found: "${dir}"`);
    }
    throw error;
  }
  if (!stat.isDirectory) throw new UserInputError(`Not a directory: "${dir}"`);
  const paths = dataPaths(dir);
  for (const path of [paths.keys, paths.telemetry]) {
    if (!isFile(path)) {
      throw new UserInputError(
        `Not a data directory: "${dir}" (missing ${path.slice(dir.length + 1)})`,
      );
    }
  }
  const keys = openSource(paths.keys, keyStoreMigrations);
  let telemetry: DatabaseSync;
  try {
    telemetry = openSource(paths.telemetry, telemetryMigrations);
  } catch (error) {
    keys.close();
    throw error;
  }
  const both = [keys, telemetry];
  return {
    keys,
    telemetry,
    beginSnapshot() {
      for (const db of both) db.exec("BEGIN");
      keys.prepare(KEY_STORE_SNAPSHOT).get();
      return Number((telemetry.prepare(CURRENT_SEQ).get() as { value: number }).value);
    },
    endSnapshot() {
      for (const db of both) if (db.isTransaction) db.exec("COMMIT");
    },
    close() {
      for (const db of both) if (db.isOpen) db.close();
    },
  };
}

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

function openSource(path: string, migrations: readonly Migration[]): DatabaseSync {
  let db: DatabaseSync;
  try {
    db = openDatabase(path, { readOnly: true, cacheMiB: 64 });
  } catch (error) {
    throw new UserInputError(`Cannot read "${path}": ${messageOf(error)}`);
  }
  try {
    requireMigrated(db, migrations, path);
  } catch (error) {
    db.close();
    if (error instanceof UserInputError) throw error;
    throw new UserInputError(`Cannot read "${path}": ${messageOf(error)}`);
  }
  return db;
}

/** Runs `fn`, turning "cannot reach / log in to PostgreSQL" into a one-line input error. */
async function reach<T>(url: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    const code = (error as { code?: string } | null)?.code ?? "";
    // 28…: authentication; 3D000: no such database.
    if (isUnavailable(error) || code.startsWith("28") || code === "3D000") {
      throw new UserInputError(
        `Cannot connect to PostgreSQL at "${hostOf(url)}": ${messageOf(error)}`,
      );
    }
    throw error;
  }
}

/** One run of the copy over one snapshot of the source. */
class Copier {
  readonly tables: Record<string, number> = {};
  deleted = 0;
  removedMembers = 0;
  readonly #sql: Sql;
  readonly #sources: Sources;
  readonly #seq: number;
  readonly #options: CopyOptions;

  constructor(sql: Sql, sources: Sources, seq: number, options: CopyOptions) {
    this.#sql = sql;
    this.#sources = sources;
    this.#seq = seq;
    this.#options = options;
  }

  /** Copies every table, then the deletions; false when stopped by the signal. */
  async run(): Promise<boolean> {
    await this.#sql.begin(async (tx) => {
      for (const spec of TABLES) {
        await tx.unsafe(START_TABLE, [spec.name, spec.onConflict === "newer" ? this.#seq : null]);
      }
      await tx.unsafe(START_TABLE, [TOMBSTONES, this.#seq]);
      await tx.unsafe(START_TABLE, [SESSION_ACTORS, null]);
    });
    const rows = await this.#sql.unsafe<
      { tbl: string; last_key: string | null; done: boolean; synced_seq: number | null }[]
    >(PROGRESS);
    const progress = new Map<string, TableProgress>(
      rows.map((r) => [r.tbl, { lastKey: r.last_key, done: r.done, syncedSeq: r.synced_seq }]),
    );
    await this.#carryMemberRemovals();
    await this.#carryCursorSecret();
    // A run stopped before the rollup's rebuild leaves it pending for the next one.
    const rollupPending = !progress.get(SESSION_ACTORS)!.done;
    await this.#sql.unsafe(RECORD_PENDING, [SESSION_ACTORS]);
    for (const spec of TABLES) {
      if (!await this.#copyTable(spec, progress.get(spec.name)!)) return false;
    }
    await this.#copyDeletions(progress.get(TOMBSTONES)!.syncedSeq ?? this.#seq);
    if (rollupPending || this.tables.tool_calls! > 0 || this.deleted > 0) {
      await this.#sql.begin(async (tx) => {
        await tx.unsafe(CLEAR_ALL_SESSION_ACTORS);
        await tx.unsafe(REBUILD_SESSION_ACTORS);
      });
    }
    await this.#sql.unsafe(RECORD_DONE, [SESSION_ACTORS]);
    if (this.#seq > 0) await this.#sql.unsafe(RAISE_SEQ, [this.#seq]);
    return true;
  }

  /**
   * Removes the members the source removed since the last run (revoking their
   * keys), before members are copied: a member added again with the same
   * email, under a new id, then takes its place.
   */
  async #carryMemberRemovals(): Promise<void> {
    const ids = JSON.stringify(
      (this.#sources.keys.prepare(MEMBER_IDS).all() as { id: string }[]).map((r) => r.id),
    );
    this.removedMembers = await this.#sql.begin(async (tx) => {
      const [{ present }] = await tx.unsafe<[{ present: boolean }]>(COPIED_MEMBERS_PRESENT);
      if (!present) {
        await tx.unsafe(CREATE_COPIED_MEMBERS);
        await tx.unsafe(SEED_COPIED_MEMBERS);
      }
      await tx.unsafe(REVOKE_REMOVED_MEMBER_KEYS, [Date.now(), ids]);
      const removed = (await tx.unsafe(DELETE_REMOVED_MEMBERS, [ids])).count;
      await tx.unsafe(RECORD_COPIED_MEMBERS, [ids]);
      return removed;
    });
  }

  /** The directory's cursor secret, so cursors served before the move stay valid after it. */
  async #carryCursorSecret(): Promise<void> {
    const row = this.#sources.keys.prepare(CURSOR_SECRET).get() as
      | { value: Uint8Array }
      | undefined;
    if (row === undefined) return;
    const secret = Buffer.from(row.value) as unknown as PgParam;
    await this.#sql.unsafe(CARRY_CURSOR_SECRET, [secret, secret]);
  }

  async #copyTable(spec: TableSpec, progress: TableProgress): Promise<boolean> {
    const db = spec.file === "keys" ? this.#sources.keys : this.#sources.telemetry;
    const table = new TableStatements(spec, columnsOf(db, spec.name));
    const started = performance.now();
    this.tables[spec.name] = 0;
    const report = () => ({
      table: spec.name,
      rows: this.tables[spec.name]!,
      seconds: (performance.now() - started) / 1000,
    });
    const batchDone = (count: number) => {
      this.tables[spec.name]! += count;
      this.#options.onProgress?.(report());
    };

    // The first pass, in key order, resumable; for rows without a seq, the
    // same pass again on every later run, to pick up what changed.
    const again = progress.done && spec.onConflict !== "newer";
    if (!progress.done || again) {
      const after = again || progress.lastKey === null
        ? null
        : JSON.parse(progress.lastKey) as SQLOutputValue[];
      const read = arrays(db, after === null ? table.selectAll : table.selectAfter);
      const rows = (after === null ? read.iterate() : read.iterate(...after)) as Iterator<
        SQLOutputValue[]
      >;
      if (!await this.#send(table, rows, again ? "again" : "first", batchDone)) return false;
    }

    // Telemetry written since the snapshot the first pass began in.
    const since = progress.syncedSeq ?? this.#seq;
    if (spec.onConflict === "newer" && since < this.#seq) {
      const rows = arrays(db, table.selectSince).iterate(since) as Iterator<SQLOutputValue[]>;
      if (!await this.#send(table, rows, "again", batchDone)) return false;
      await this.#sql.unsafe(RECORD_SYNCED, [this.#seq, spec.name]);
    }
    this.#options.onTable?.(report());
    return true;
  }

  /**
   * Writes `rows` in batches, each one statement that also records the
   * progress; the next batch is read while PostgreSQL writes the last one.
   * Resolves false when stopped by the signal.
   */
  async #send(
    table: TableStatements,
    rows: Iterator<SQLOutputValue[]>,
    pass: "first" | "again",
    batchDone: (count: number) => void,
  ): Promise<boolean> {
    const size = Math.min(this.#options.batchSize, table.maxRows);
    let inFlight: Promise<number> | null = null;
    try {
      let batch = take(rows, size);
      if (batch.length === 0 && pass === "first") {
        await this.#sql.unsafe(RECORD_DONE, [table.name]);
      }
      while (batch.length > 0) {
        const next = take(rows, size);
        if (inFlight) batchDone(await inFlight);
        inFlight = null;
        if (this.#options.signal?.aborted) return false;
        const last = batch.at(-1)!;
        const record: PgParam[] = pass === "first"
          ? [JSON.stringify(table.keyIndexes.map((i) => last[i])), next.length === 0, table.name]
          : [table.name];
        inFlight = table.copy(this.#sql, batch, pass, record);
        // Handled when awaited; meanwhile a failure must not count as unhandled.
        inFlight.catch(() => {});
        // Let the statement go out before reading the next batch.
        await new Promise((resolve) => setTimeout(resolve, 0));
        batch = next;
      }
      if (inFlight) batchDone(await inFlight);
      return true;
    } finally {
      rows.return?.();
    }
  }

  /** Copies the source's tombstones since `since` and applies them. */
  async #copyDeletions(since: number): Promise<void> {
    if (since >= this.#seq) return;
    const table = new TableStatements(
      { name: TOMBSTONES, file: "telemetry", key: ["seq"], onConflict: "keep" },
      ["seq", "tbl", "row_key"],
    );
    const read = arrays(this.#sources.telemetry, TOMBSTONES_SINCE);
    const rows = read.iterate(since) as Iterator<SQLOutputValue[]>;
    for (;;) {
      const batch = take(rows, Math.min(this.#options.batchSize, table.maxRows));
      if (batch.length === 0) break;
      await table.insert(this.#sql, batch);
    }
    const sessionExists = this.#sources.telemetry.prepare(SESSION_EXISTS);
    this.deleted = await this.#sql.begin(async (tx) => {
      let deleted = 0;
      const sessions = new Map<string, [string, string]>();
      for (const statement of APPLY_CALL_TOMBSTONES) {
        const rows = await tx.unsafe<{ org_id: string; session_id: string }[]>(statement, [
          since,
          this.#seq,
        ]);
        deleted += rows.count;
        for (const r of rows) {
          sessions.set(`${r.org_id}\u0000${r.session_id}`, [r.org_id, r.session_id]);
        }
      }
      for (const statement of [...APPLY_DETECTION_TOMBSTONES, APPLY_METRIC_POINT_TOMBSTONES]) {
        deleted += (await tx.unsafe(statement, [since, this.#seq])).count;
      }
      // Sessions left without calls, which the source dropped (no tombstone of their own).
      for (const key of sessions.values()) {
        if (sessionExists.get(...key) === undefined) {
          deleted += (await tx.unsafe(DELETE_SESSION, key)).count;
        }
      }
      await tx.unsafe(RECORD_SYNCED, [this.#seq, TOMBSTONES]);
      return deleted;
    });
  }
}

/** The generated statements of one table, on both sides. */
class TableStatements {
  readonly name: string;
  readonly selectAll: string;
  readonly selectAfter: string;
  readonly selectSince: string;
  readonly keyIndexes: number[];
  /** Most rows one statement can carry. */
  readonly maxRows: number;
  readonly #spec: TableSpec;
  readonly #columns: readonly string[];
  readonly #statements = new Map<string, string>();

  constructor(spec: TableSpec, columns: readonly string[]) {
    this.#spec = spec;
    this.#columns = columns;
    this.name = spec.name;
    const list = columns.map((c) => spec.text?.includes(c) ? `CAST(${c} AS TEXT) AS ${c}` : c)
      .join(", ");
    const key = spec.key.join(", ");
    const keyPlaceholders = spec.key.map(() => "?").join(", ");
    const after = spec.key.length === 1 ? `${key} > ?` : `(${key}) > (${keyPlaceholders})`;
    this.selectAll = `SELECT ${list} FROM ${spec.name} ORDER BY ${key}`;
    this.selectAfter = `SELECT ${list} FROM ${spec.name} WHERE ${after} ORDER BY ${key}`;
    this.selectSince = `SELECT ${list} FROM ${spec.name} WHERE seq > ? ORDER BY seq`;
    this.keyIndexes = spec.key.map((k) => columns.indexOf(k));
    // Room for the progress record's parameters.
    this.maxRows = Math.floor((MAX_PARAMETERS - 3) / columns.length);
  }

  /** Writes `rows` and records them (`record`: the parameters of `copy_batch` / `copy_again`). */
  async copy(
    sql: Sql,
    rows: readonly SQLOutputValue[][],
    pass: "first" | "again",
    record: PgParam[],
  ): Promise<number> {
    const statement = this.#statement(
      `${pass} ${rows.length}`,
      () =>
        (pass === "first" ? COPY_BATCH : COPY_AGAIN).replace(
          "/*insert*/",
          this.#insert(rows.length),
        ),
    );
    const params = [...rows.flat() as PgParam[], ...record];
    const [row] = await sql.unsafe<{ copied: number }[]>(statement, params, PREPARED);
    return row!.copied;
  }

  /** Writes `rows` (at most {@link maxRows}); resolves with the rows written. */
  async insert(sql: Sql, rows: readonly SQLOutputValue[][]): Promise<number> {
    const statement = this.#statement(`insert ${rows.length}`, () => this.#insert(rows.length));
    return (await sql.unsafe(statement, rows.flat() as PgParam[], PREPARED)).count;
  }

  #statement(name: string, build: () => string): string {
    let statement = this.#statements.get(name);
    if (statement === undefined) {
      statement = numberPlaceholders(build());
      this.#statements.set(name, statement);
    }
    return statement;
  }

  #insert(rowCount: number): string {
    const row = `(${this.#columns.map(() => "?").join(", ")})`;
    return `INSERT INTO ${this.#spec.name} (${this.#columns.join(", ")}) VALUES ${
      Array(rowCount).fill(row).join(", ")
    } ${this.#onConflict()}`;
  }

  #onConflict(): string {
    const { name, key, onConflict } = this.#spec;
    const values = this.#columns.filter((c) => !key.includes(c));
    const set = values.map((c) => `${c} = excluded.${c}`).join(", ");
    const target = `ON CONFLICT (${key.join(", ")}) DO UPDATE SET`;
    switch (onConflict) {
      case "keep":
        return "ON CONFLICT DO NOTHING";
      case "revocation":
        return `${target} revoked_at = excluded.revoked_at
          WHERE ${name}.revoked_at IS NULL AND excluded.revoked_at IS NOT NULL`;
      case "newer":
        return `${target} ${set} WHERE ${name}.seq < excluded.seq`;
      case "changed":
        return `${target} ${set} WHERE (${values.map((c) => `${name}.${c}`).join(", ")})
          IS DISTINCT FROM (${values.map((c) => `excluded.${c}`).join(", ")})`;
    }
  }
}

/** `StatementSync.setReturnArrays` is missing from the node:sqlite types Deno ships. */
type ArrayStatement = StatementSync & { setReturnArrays(enabled: boolean): void };

/** A statement whose rows come as arrays, in column order. */
function arrays(db: DatabaseSync, sql: string): StatementSync {
  const statement = db.prepare(sql) as ArrayStatement;
  statement.setReturnArrays(true);
  return statement;
}

/** A source table's columns, in order. */
function columnsOf(db: DatabaseSync, table: string): string[] {
  const columns = (db.prepare(TABLE_COLUMNS).all(table) as { name: string }[]).map((r) => r.name);
  if (columns.length === 0) throw new Error(`Source table not found: "${table}"`);
  for (const column of columns) {
    if (!/^[a-z_][a-z0-9_]*$/.test(column)) throw new Error(`Unexpected column: "${column}"`);
  }
  return columns;
}

/** Up to `n` more items of an iterator. */
function take<T>(iterator: Iterator<T>, n: number): T[] {
  const out: T[] = [];
  while (out.length < n) {
    const next = iterator.next();
    if (next.done) break;
    out.push(next.value);
  }
  return out;
}

/** Host and port of a URL, without its credentials. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "?";
  }
}

function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
}
