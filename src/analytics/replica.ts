/**
 * The analytics replica (`analytics.duckdb`): columnar copies of the telemetry
 * rows the insights read, copied from `telemetry.db` in `seq` order.
 *
 * A catch-up copies the rows from the last copied seq up to the store's
 * `counters.seq` read at its start, in chunks of at most 50k tool calls and
 * 50k model calls, each read in one short SQLite read transaction (none is
 * held across an await). Chunks go through DuckDB's appender into staging
 * tables and are merged by key (tool and model calls by id, flags by
 * (call_id, flag), domain hits by (call_id, domain, scheme)); then tombstones
 * are applied. Each group of chunks commits in one DuckDB transaction with
 * the seq it reached, so a crash loses nothing. The first build of an empty
 * replica appends straight into the tables. A missing, unopenable,
 * older-schema or foreign replica is deleted and rebuilt.
 *
 * @module
 */
import {
  BIGINT,
  type DuckDBAppender,
  type DuckDBConnection,
  DuckDBInstance,
  type DuckDBType,
  VARCHAR,
} from "@duckdb/node-api";
import type { DatabaseSync, SQLOutputValue, StatementSync } from "node:sqlite";
import schemaSql from "../../sql/duckdb/replica_schema.sql" with { type: "text" };
import sourceSql from "../../sql/duckdb/replica_source.sql" with { type: "text" };
import { log } from "../log.ts";
import { QueryTimeoutError } from "../store/reader.ts";
import { namedSql, parseNamedSql } from "../store/named_sql.ts";
import { openDatabase } from "../store/sqlite.ts";

/** Raised whenever the replica's tables or meta rows change shape. */
/**
 * DuckDB's defaults take 80% of the machine's memory and every core; the
 * replica shares a small VM with SQLite and the HTTP server.
 */
const DUCKDB_SETTINGS = { "memory_limit": "384MB", threads: "2" };

export const REPLICA_SCHEMA_VERSION = 1;

/** Most tool calls (and most model calls) copied per chunk. */
const CHUNK_ROWS = 50_000;
/** Rows copied per DuckDB transaction: fewer, larger commits write the file faster. */
const GROUP_ROWS = 500_000;
/** Catch-ups spanning more seqs than this (and every initial build) log their progress. */
const LOUD_CATCH_UP_SEQS = 500_000;

const schema = parseNamedSql(schemaSql);
const source = parseNamedSql(sourceSql);

/** How a source column is appended: its kind and whether it may be null. */
type ColumnKind = "text" | "text?" | "int" | "int?" | "real?";

interface CopiedTable {
  name: "tool_calls" | "model_calls" | "risk_flags" | "domain_hits";
  columns: ColumnKind[];
}

/** Column kinds in the order of the replica tables (and of the source reads). */
const COPIED_TABLES: CopiedTable[] = [
  {
    name: "tool_calls",
    // id, org_id, session_id, ts, tool_name, tool_type, outcome, duration_ms,
    // agent_system, model, seq
    columns: [
      "text",
      "text",
      "text",
      "int",
      "text",
      "text",
      "text",
      "int?",
      "text",
      "text?",
      "int",
    ],
  },
  {
    name: "model_calls",
    // id, org_id, session_id, ts, provider_name, model, input_tokens,
    // output_tokens, cache_read_tokens, cache_creation_tokens, cost_usd, seq
    columns: [
      "text",
      "text",
      "text",
      "int",
      "text",
      "text",
      "int",
      "int",
      "int",
      "int",
      "real?",
      "int",
    ],
  },
  {
    name: "risk_flags",
    // call_id, flag, org_id, session_id, ts, tool_name, seq
    columns: ["text", "text", "text", "text", "int", "text", "int"],
  },
  {
    name: "domain_hits",
    // call_id, domain, scheme, org_id, session_id, ts, seq
    columns: ["text", "text", "text", "text", "text", "int", "int"],
  },
];
/** seq, tbl, row_key */
const TOMBSTONE_COLUMNS: ColumnKind[] = ["int", "text", "text"];

/** A row as DuckDB returns it, with every BIGINT/HUGEINT turned into a number. */
export type ReplicaRow = Record<string, unknown>;

/** One read statement against the replica, with named (`$name`) parameters. */
export interface ReplicaStatement {
  sql: string;
  params: Record<string, string | bigint>;
}

/** Options of {@link Replica.open}. */
export interface ReplicaOptions {
  /** Path of `analytics.duckdb`. */
  path: string;
  /** Path of `telemetry.db`, the source. */
  telemetryPath: string;
  /** Log nothing (tests). */
  quiet?: boolean;
}

/** Progress figures of one catch-up. */
export interface CatchUpStats {
  fromSeq: number;
  toSeq: number;
  rows: number;
  ms: number;
}

/** The replica is closed (or closing): no more catch-ups or reads. */
export class ReplicaClosedError extends Error {
  override name = "ReplicaClosedError";
}

/** The DuckDB replica and its read-only connection to the source. */
export class Replica {
  readonly #options: ReplicaOptions;
  readonly #source: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();
  readonly #instance: DuckDBInstance;
  readonly #sync: DuckDBConnection;
  readonly #reads = new Set<DuckDBConnection>();
  readonly #pendingReads = new Set<Promise<unknown>>();
  #lastSeq: number;
  #running: Promise<void> | null = null;
  #queued: Promise<void> | null = null;
  #closed = false;
  /** Why the file was (re)built at open, or null when it was reused. */
  readonly rebuildReason: string | null;
  /** Figures of the last catch-up that copied anything. */
  lastCatchUp: CatchUpStats | null = null;

  private constructor(
    options: ReplicaOptions,
    sourceDb: DatabaseSync,
    instance: DuckDBInstance,
    sync: DuckDBConnection,
    lastSeq: number,
    rebuildReason: string | null,
  ) {
    this.#options = options;
    this.#source = sourceDb;
    this.#instance = instance;
    this.#sync = sync;
    this.#lastSeq = lastSeq;
    this.rebuildReason = rebuildReason;
  }

  /**
   * Opens the replica, deleting and recreating the file when it is missing,
   * unopenable, of another schema version, or ahead of the source (a
   * replaced `telemetry.db`). Copies nothing: call {@link catchUp}.
   */
  static async open(options: ReplicaOptions): Promise<Replica> {
    const sourceDb = openDatabase(options.telemetryPath, { readOnly: true });
    try {
      const sourceSeq = readCurrentSeq(sourceDb);
      const existing = await openExisting(options.path, sourceSeq);
      if (existing.state === "ok") {
        return new Replica(
          options,
          sourceDb,
          existing.instance,
          existing.connection,
          existing.lastSeq,
          null,
        );
      }
      if (!options.quiet) {
        log("info", "analytics replica: rebuilding", {
          path: options.path,
          reason: existing.reason,
        });
      }
      await removeReplicaFiles(options.path);
      const instance = await DuckDBInstance.create(options.path, DUCKDB_SETTINGS);
      let connection: DuckDBConnection | null = null;
      try {
        connection = await instance.connect();
        await connection.run(namedSql(schema, "create_tables"));
        await connection.run(namedSql(schema, "init_meta"), {
          version: BigInt(REPLICA_SCHEMA_VERSION),
        });
        await connection.run(namedSql(schema, "create_staging"));
        return new Replica(options, sourceDb, instance, connection, 0, existing.reason);
      } catch (error) {
        connection?.closeSync();
        instance.closeSync();
        throw error;
      }
    } catch (error) {
      sourceDb.close();
      throw error;
    }
  }

  /** The seq the replica holds everything up to. */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /**
   * Brings the replica up to the source's current seq. Callers arriving while
   * a catch-up runs share one follow-up run, which starts when the current one
   * ends and so sees everything committed before they called.
   */
  catchUp(): Promise<void> {
    if (this.#closed) return Promise.reject(new ReplicaClosedError("Analytics replica is closed"));
    if (this.#running === null) {
      this.#running = this.#runCatchUp().finally(() => {
        this.#running = null;
      });
      return this.#running;
    }
    this.#queued ??= this.#running.then(noop, noop).then(() => {
      this.#queued = null;
      return this.catchUp();
    });
    return this.#queued;
  }

  /**
   * Runs read statements on a fresh connection in one snapshot and returns
   * their rows. At `deadline` (epoch ms) the running query is interrupted and
   * the read fails with {@link QueryTimeoutError}.
   */
  async read(statements: readonly ReplicaStatement[], deadline: number): Promise<ReplicaRow[][]> {
    if (this.#closed) throw new ReplicaClosedError("Analytics replica is closed");
    const work = this.#read(statements, deadline);
    this.#pendingReads.add(work);
    try {
      return await work;
    } finally {
      this.#pendingReads.delete(work);
    }
  }

  /** Stops catch-ups between chunks, interrupts reads and closes every handle. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const connection of this.#reads) connection.interrupt();
    await Promise.allSettled([this.#queued, this.#running, ...this.#pendingReads]);
    this.#sync.closeSync();
    this.#instance.closeSync();
    this.#statements.clear();
    if (this.#source.isOpen) this.#source.close();
  }

  async #read(statements: readonly ReplicaStatement[], deadline: number): Promise<ReplicaRow[][]> {
    const connection = await this.#instance.connect();
    this.#reads.add(connection);
    let timedOut = false;
    const interrupt = () => {
      timedOut = true;
      connection.interrupt();
    };
    const timer = setTimeout(interrupt, Math.max(0, deadline - Date.now()));
    const check = () => {
      if (timedOut) throw new QueryTimeoutError("Query time limit exceeded");
      if (this.#closed) throw new ReplicaClosedError("Analytics replica is closed");
    };
    try {
      check();
      await connection.run("BEGIN TRANSACTION");
      const results: ReplicaRow[][] = [];
      for (const statement of statements) {
        check();
        const reader = await connection.runAndReadAll(
          statement.sql,
          statement.params,
          bindTypes(statement.params),
        );
        check();
        results.push(reader.getRowObjectsJS().map(plainRow));
      }
      await connection.run("COMMIT");
      return results;
    } catch (error) {
      if (timedOut) throw new QueryTimeoutError("Query time limit exceeded");
      throw error;
    } finally {
      clearTimeout(timer);
      this.#reads.delete(connection);
      connection.closeSync();
    }
  }

  async #runCatchUp(): Promise<void> {
    const target = Number((this.#statement("current_seq").get() as { value: number }).value);
    const from = this.#lastSeq;
    if (target <= from) return;
    const started = performance.now();
    const verbose = !this.#options.quiet && (from === 0 || target - from > LOUD_CATCH_UP_SEQS);
    if (verbose) {
      log("info", "analytics replica: catching up", { from_seq: from, to_seq: target });
    }
    // Rows changed after `target` was read carry seqs above it, so one catch-up
    // meets each key at most once: an empty replica needs no deletes, and its
    // rows can go straight into the tables instead of through staging.
    const fresh = from === 0;
    let rows = 0;
    let lastLog = started;
    let lo = from;
    while (lo < target) {
      if (this.#closed) throw new ReplicaClosedError("Analytics replica is closed");
      const copied = await this.#copyGroup(lo, target, fresh);
      rows += copied.rows;
      lo = copied.hi;
      this.#lastSeq = lo;
      const now = performance.now();
      if (verbose && now - lastLog >= 1000 && lo < target) {
        lastLog = now;
        log("info", "analytics replica: progress", {
          seq: lo,
          to_seq: target,
          rows,
          rows_per_second: Math.round(rows / ((now - started) / 1000)),
        });
      }
    }
    const ms = performance.now() - started;
    this.lastCatchUp = { fromSeq: from, toSeq: target, rows, ms };
    if (verbose) {
      log("info", "analytics replica: up to date", {
        seq: target,
        rows,
        ms: Math.round(ms),
        rows_per_second: ms > 0 ? Math.round(rows / (ms / 1000)) : rows,
      });
    }
  }

  /**
   * Copies chunks of at most CHUNK_ROWS tool calls and CHUNK_ROWS model calls
   * from `lo` on, until GROUP_ROWS rows are copied or `target` is reached, in
   * one DuckDB transaction that also records the seq reached; returns it.
   */
  async #copyGroup(
    lo: number,
    target: number,
    fresh: boolean,
  ): Promise<{ hi: number; rows: number }> {
    const connection = this.#sync;
    const appenders = new Map<string, DuckDBAppender>();
    const appenderFor = async (table: string, staging: boolean) => {
      const name = staging ? `stage_${table}` : table;
      let appender = appenders.get(name);
      if (!appender) {
        appender = await connection.createAppender(name, null, staging ? "temp" : null);
        appenders.set(name, appender);
      }
      return appender;
    };
    let hi = lo;
    let rows = 0;
    let tombstones = 0;
    const staged = new Set<string>();
    await connection.run("BEGIN TRANSACTION");
    try {
      while (hi < target && rows < GROUP_ROWS) {
        if (this.#closed) throw new ReplicaClosedError("Analytics replica is closed");
        const chunk = this.#readChunk(hi, target);
        for (const table of COPIED_TABLES) {
          const tableRows = chunk.rows.get(table.name)!;
          if (tableRows.length === 0) continue;
          rows += tableRows.length;
          if (!fresh) staged.add(table.name);
          append(await appenderFor(table.name, !fresh), table.columns, tableRows);
        }
        if (chunk.tombstones.length > 0) {
          rows += chunk.tombstones.length;
          tombstones += chunk.tombstones.length;
          append(await appenderFor("tombstones", true), TOMBSTONE_COLUMNS, chunk.tombstones);
        }
        hi = chunk.hi;
      }
      for (const appender of appenders.values()) appender.closeSync();
      appenders.clear();
      for (const table of COPIED_TABLES) {
        if (!staged.has(table.name)) continue;
        await connection.run(namedSql(schema, `delete_${table.name}`));
        await connection.run(namedSql(schema, `insert_${table.name}`));
      }
      if (tombstones > 0) await connection.run(namedSql(schema, "apply_tombstones"));
      if (staged.size > 0 || tombstones > 0) {
        await connection.run(namedSql(schema, "clear_staging"));
      }
      await connection.run(namedSql(schema, "set_last_seq"), { seq: BigInt(hi) }, {
        seq: BIGINT,
      });
      await connection.run("COMMIT");
      return { hi, rows };
    } catch (error) {
      for (const appender of appenders.values()) {
        try {
          appender.closeSync();
        } catch {
          // The rollback discards whatever it held.
        }
      }
      await connection.run("ROLLBACK").catch(noop);
      throw error;
    }
  }

  /**
   * Reads the next chunk after `lo`: at most CHUNK_ROWS tool calls and as many
   * model calls, up to `target`, in one short read transaction. No SQLite
   * transaction stays open across an await: a checkpoint on the write
   * connection (same thread) would otherwise wait on it in vain.
   */
  #readChunk(lo: number, target: number): {
    hi: number;
    rows: Map<string, SQLOutputValue[][]>;
    tombstones: SQLOutputValue[][];
  } {
    const db = this.#source;
    db.exec("BEGIN");
    try {
      const hi = Math.min(
        target,
        this.#nthSeq("nth_tool_call_seq", lo) ?? target,
        this.#nthSeq("nth_model_call_seq", lo) ?? target,
      );
      const rows = new Map<string, SQLOutputValue[][]>();
      for (const table of COPIED_TABLES) {
        rows.set(table.name, this.#rangeRows(`${table.name}_range`, lo, hi));
      }
      return { hi, rows, tombstones: this.#rangeRows("tombstones_range", lo, hi) };
    } finally {
      db.exec("COMMIT");
    }
  }

  /** The seq of the CHUNK_ROWS-th row after `lo` in one table, or null when fewer remain. */
  #nthSeq(name: string, lo: number): number | null {
    const row = this.#statement(name).get(lo, CHUNK_ROWS - 1) as { seq: number } | undefined;
    return row === undefined ? null : Number(row.seq);
  }

  /** Source rows (as arrays) of one table with seq in (lo, hi]. */
  #rangeRows(name: string, lo: number, hi: number): SQLOutputValue[][] {
    return this.#statement(name, true).all(lo, hi) as unknown as SQLOutputValue[][];
  }

  #statement(name: string, arrays = false): StatementSync {
    let statement = this.#statements.get(name);
    if (!statement) {
      statement = this.#source.prepare(namedSql(source, name));
      // Rows as arrays: about twice as fast to read as objects (not yet in the types).
      if (arrays) (statement as ArrayStatement).setReturnArrays(true);
      this.#statements.set(name, statement);
    }
    return statement;
  }
}

type ArrayStatement = StatementSync & { setReturnArrays(enabled: boolean): void };

type Existing =
  | { state: "ok"; instance: DuckDBInstance; connection: DuckDBConnection; lastSeq: number }
  | { state: "rebuild"; reason: string };

/** Opens a replica file when it exists and is usable as it is. */
async function openExisting(path: string, sourceSeq: number): Promise<Existing> {
  try {
    await Deno.stat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { state: "rebuild", reason: "missing" };
    throw error;
  }
  let instance: DuckDBInstance;
  try {
    instance = await DuckDBInstance.create(path, DUCKDB_SETTINGS);
  } catch (error) {
    // Another process (a second server on the same data directory) holds it:
    // deleting the file would pull it from under that process.
    if (/could not set lock|conflicting lock/i.test(errorText(error))) {
      throw new Error(`Analytics replica is in use by another process: ${errorText(error)}`);
    }
    return { state: "rebuild", reason: `unopenable: ${errorText(error)}` };
  }
  let connection: DuckDBConnection | null = null;
  let reason: string;
  try {
    connection = await instance.connect();
    const meta = new Map<string, number>();
    try {
      const reader = await connection.runAndReadAll(namedSql(schema, "read_meta"));
      for (const row of reader.getRowObjectsJS()) meta.set(String(row.key), Number(row.value));
    } catch {
      // No meta table: not a replica this code wrote.
    }
    const version = meta.get("schema_version");
    const lastSeq = meta.get("last_seq");
    if (version === undefined || lastSeq === undefined) {
      reason = "no replica metadata";
    } else if (version !== REPLICA_SCHEMA_VERSION) {
      reason = `schema version ${version}, expected ${REPLICA_SCHEMA_VERSION}`;
    } else if (lastSeq > sourceSeq) {
      reason = `replica at seq ${lastSeq} is ahead of the telemetry store at seq ${sourceSeq}`;
    } else {
      await connection.run(namedSql(schema, "create_staging"));
      return { state: "ok", instance, connection, lastSeq };
    }
  } catch (error) {
    reason = `unreadable: ${errorText(error)}`;
  }
  connection?.closeSync();
  instance.closeSync();
  return { state: "rebuild", reason };
}

async function removeReplicaFiles(path: string): Promise<void> {
  for (const file of [path, `${path}.wal`]) {
    try {
      await Deno.remove(file);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
}

function readCurrentSeq(db: DatabaseSync): number {
  const row = db.prepare(namedSql(source, "current_seq")).get() as { value: number } | undefined;
  return row === undefined ? 0 : Number(row.value);
}

/** Appends SQLite rows (arrays) with DuckDB's appender. */
function append(
  appender: DuckDBAppender,
  columns: readonly ColumnKind[],
  rows: readonly SQLOutputValue[][],
): void {
  for (const row of rows) {
    for (let i = 0; i < columns.length; i++) {
      const value = row[i];
      if (value === null || value === undefined) {
        appender.appendNull();
      } else if (columns[i] === "text" || columns[i] === "text?") {
        appender.appendVarchar(String(value));
      } else {
        // Integers arrive as numbers; DuckDB casts the double to BIGINT exactly.
        appender.appendDouble(Number(value));
      }
    }
    appender.endRow();
  }
}

/**
 * Binds bigints as BIGINT: the client would infer HUGEINT, and bucket
 * arithmetic on HUGEINT runs an order of magnitude slower.
 */
function bindTypes(params: ReplicaStatement["params"]): Record<string, DuckDBType> {
  const types: Record<string, DuckDBType> = {};
  for (const [name, value] of Object.entries(params)) {
    types[name] = typeof value === "string" ? VARCHAR : BIGINT;
  }
  return types;
}

/** A DuckDB row with BIGINT/HUGEINT values as numbers (JSON-ready). */
function plainRow(row: Record<string, unknown>): ReplicaRow {
  const out: ReplicaRow = {};
  for (const [key, value] of Object.entries(row)) {
    out[key] = typeof value === "bigint" ? Number(value) : value;
  }
  return out;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message.split("\n")[0]! : String(error);
}

function noop(): void {}
