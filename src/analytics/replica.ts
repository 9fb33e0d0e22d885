/**
 * The analytics replica (`analytics.duckdb`): columnar copies of the telemetry
 * rows the insights read, fed from `telemetry.db` or PostgreSQL in commit
 * order (see sqlite_source.ts and postgres_source.ts for how each source finds
 * what changed).
 *
 * A catch-up writes groups of chunks, each in one DuckDB transaction: rows go
 * through DuckDB's appender into staging tables and are merged by key, and
 * tombstones mirror deletions. The meta table records the source, and the
 * progress reached (a seq, and for PostgreSQL a snapshot) in the same
 * transaction as the rows that reach it. A missing, unopenable, older-schema
 * or foreign replica, or one ahead of its source, is deleted and rebuilt; so
 * is one that fails to read while serving (a corrupted block), in place.
 *
 * @module
 */
import {
  type DuckDBAppender,
  type DuckDBConnection,
  DuckDBInstance,
  VARCHAR,
} from "@duckdb/node-api";
import daysSql from "../../sql/duckdb/replica_days.sql" with { type: "text" };
import schemaSql from "../../sql/duckdb/replica_schema.sql" with { type: "text" };
import sortSql from "../../sql/duckdb/replica_sort.sql" with { type: "text" };
import { log } from "../log.ts";
import { MEMORY_BUDGET } from "../memory_budget.ts";
import { QueryTimeoutError, ReplicaBuildingError, ReplicaUnwritableError } from "../errors.ts";
import { namedSql, parseNamedSql } from "../store/named_sql.ts";
import {
  type ColumnKind as StoreColumnKind,
  type ColumnSpec,
  DOMAIN_HITS,
  METRIC_POINTS,
  MODEL_CALLS,
  RISK_FLAGS,
  type TableColumns,
  TOOL_CALLS,
} from "../store/table_columns.ts";
import { PostgresReplicaSource } from "./postgres_source.ts";
import { ReadPool, type ReplicaRow, type ReplicaStatement } from "./read_pool.ts";
import {
  BUILDING_ROWS,
  NO_PROGRESS,
  REPLICA_TABLES,
  type ReplicaBatch,
  ReplicaClosedError,
  type ReplicaProgress,
  type ReplicaSource,
  type ReplicaSourceSpec,
  type ReplicaTable,
  type ReplicaTarget,
  type SourceRow,
} from "./replica_source.ts";
import { SqliteReplicaSource } from "./sqlite_source.ts";
import { LateRollups } from "./late_rollups.ts";

export { ReplicaClosedError, type ReplicaSourceSpec } from "./replica_source.ts";
export type { ReplicaRow, ReplicaStatement } from "./read_pool.ts";

/**
 * DuckDB's defaults take 80% of the machine's memory and every core; the
 * replica shares a small VM with SQLite and the HTTP server: its share of
 * the server's memory budget (128 MiB on a machine of 2 GiB or more).
 * Late materialization is off: in DuckDB 1.5.5 a Top-N over raw rows
 * prepared before rows were appended (the read pool keeps statements
 * prepared) returns the new rows' strings and numbers from stale buffers
 * (tests/read_pool_test.ts). DuckDB's allocator (its own jemalloc) kept
 * 18-38 MiB more resident than it had allocated (its statistics at 100k
 * calls): it now returns freed memory after any task that peaked above
 * 8 MiB instead of 128, and purges on a background thread.
 */
export const DUCKDB_SETTINGS: Readonly<Record<string, string>> = {
  "memory_limit": `${MEMORY_BUDGET.duckdbMiB}MiB`,
  "threads": "2",
  "late_materialization_max_rows": "0",
  "allocator_flush_threshold": "8MiB",
  "allocator_background_threads": "true",
};

/** Raised whenever the replica's tables or meta rows change shape. */
export const REPLICA_SCHEMA_VERSION = 6;

/** Catch-ups spanning more seqs than this (and every initial build) log their progress. */
const LOUD_CATCH_UP_SEQS = 500_000;

/** How long a read waits for a build before it answers {@link ReplicaBuildingError}. */
export const BUILD_WAIT_MS = 250;

const schema = parseNamedSql(schemaSql);
const days = parseNamedSql(daysSql);

/** One UTC day in ms: the rollups' unit (replica_days.sql). */
const DAY_MS = 86_400_000;

/** `days_through` of a replica with no day rolled up yet (replica_days.sql). */
const NO_DAYS = -Number.MAX_SAFE_INTEGER;

/** The UTC midnight that starts the day holding `ts` (epoch ms). */
function dayOf(ts: number): number {
  return ts - (((ts % DAY_MS) + DAY_MS) % DAY_MS);
}
const SORT_TABLE = namedSql(parseNamedSql(sortSql), "sort_table");
const SET_PROGRESS = namedSql(schema, "set_progress");

/**
 * How a source column is appended: its kind and whether it may be null.
 * `int64` arrives as decimal text (nanosecond times past 2^53) and is
 * appended exactly, not through a double. The kinds of the store's own column
 * lists (`store/table_columns.ts`), plus `real` (never null).
 */
type ColumnKind = StoreColumnKind | "real";

/**
 * The replica's copy of a store table: the columns `names`, in the replica's
 * order, each of the kind the store's column list gives it unless `kinds`
 * gives another (a column the store does not have, or one never null here).
 */
function copiedColumns<S extends ColumnSpec>(
  store: TableColumns<S>,
  names: readonly string[],
  kinds: Readonly<Record<string, ColumnKind>> = {},
): Readonly<Record<string, ColumnKind>> {
  return Object.fromEntries(names.map((name) => {
    const kind = kinds[name] ?? store.kinds[store.names.indexOf(name)];
    if (kind === undefined) throw new Error(`Replica column "${store.table}.${name}" has no kind`);
    return [name, kind];
  }));
}

/**
 * The replica's columns by table, by name and in column order: the one list
 * that the DuckDB schema (`sql/duckdb/replica_schema.sql`: names, order,
 * `NOT NULL` exactly where a kind has no `?`), both sources' range reads
 * (`sql/sqlite/replica_source.sql`, `sql/postgres/replica_source.sql`: the
 * same names in the same order) and the appender follow. Their kinds are the
 * store's (`store/table_columns.ts`). `tests/replica_columns_test.ts` holds
 * the SQL to it.
 */
export const REPLICA_COLUMNS: Readonly<Record<ReplicaTable, Readonly<Record<string, ColumnKind>>>> =
  {
    "tool_calls": copiedColumns(TOOL_CALLS, [
      "id",
      "org_id",
      "session_id",
      "ts",
      "tool_name",
      "tool_type",
      "outcome",
      "duration_ms",
      "agent_system",
      "model",
      "seq",
      "actor_id",
      "lines_added",
      "lines_removed",
    ], { "lines_added": "int?", "lines_removed": "int?" }),
    "model_calls": copiedColumns(MODEL_CALLS, [
      "id",
      "org_id",
      "session_id",
      "ts",
      "provider_name",
      "model",
      "input_tokens",
      "output_tokens",
      "cache_read_tokens",
      "cache_creation_tokens",
      "cost_usd",
      "seq",
      "actor_id",
      "agent_system",
      "estimated_cost_usd",
    ]),
    "risk_flags": copiedColumns(RISK_FLAGS, [
      "call_id",
      "flag",
      "org_id",
      "session_id",
      "ts",
      "tool_name",
      "seq",
    ]),
    "domain_hits": copiedColumns(DOMAIN_HITS, [
      "call_id",
      "domain",
      "scheme",
      "org_id",
      "session_id",
      "ts",
      "seq",
    ]),
    "metric_points": copiedColumns(METRIC_POINTS, [
      "id",
      "org_id",
      "actor_id",
      "agent",
      "agent_system",
      "session_id",
      "measure",
      "type",
      "model",
      "tool",
      "decision",
      "language",
      "temporality",
      "monotonic",
      "series_id",
      "start_time_ns",
      "time_ns",
      "ts",
      "value",
      "seq",
    ], { value: "real" }),
  };

/** Column kinds in column order (the appender's). */
const COLUMNS = Object.fromEntries(
  Object.entries(REPLICA_COLUMNS).map(([table, spec]) => [table, Object.values(spec)]),
) as unknown as Record<ReplicaTable, readonly ColumnKind[]>;
/** seq, tbl, row_key */
const TOMBSTONE_COLUMNS: readonly ColumnKind[] = ["int", "text", "text"];
/** org_id, day: the (organization, UTC day) pairs a catch-up touched (replica_days.sql). */
const DAY_COLUMNS: readonly ColumnKind[] = ["text", "int"];

/** The tables the per-day rollups count, and where a row, as appended, holds its organization and time. */
const ROLLED_UP: Partial<Record<ReplicaTable, { org: number; ts: number }>> = Object.fromEntries(
  (["tool_calls", "model_calls"] as const).map((table) => {
    const names = Object.keys(REPLICA_COLUMNS[table]);
    return [table, { org: names.indexOf("org_id"), ts: names.indexOf("ts") }];
  }),
);

/** Options of {@link Replica.open}. */
export interface ReplicaOptions {
  /** Path of `analytics.duckdb`. */
  path: string;
  /** Where the telemetry is copied from (already created and migrated). */
  source: ReplicaSourceSpec;
  /** Log nothing (tests). */
  quiet?: boolean;
  /**
   * The clock that says which UTC day is today: the per-day rollups reach up
   * to the day holding a catch-up's start (tests move it past midnight).
   */
  now?: () => number;
}

/** Progress figures of one catch-up. */
export interface CatchUpStats {
  fromSeq: number;
  toSeq: number;
  rows: number;
  ms: number;
}

/** The DuckDB replica and its read-only connection to the source. */
export class Replica {
  readonly #options: ReplicaOptions;
  readonly #source: ReplicaSource;
  #instance: DuckDBInstance;
  #sync: DuckDBConnection;
  #pool: ReadPool;
  readonly #pendingReads = new Set<Promise<unknown>>();
  #progress: ReplicaProgress;
  #running: Promise<void> | null = null;
  #queued: Promise<void> | null = null;
  #closed = false;
  /** A rebuild after damage, while it runs. */
  #healing: Promise<void> | null = null;
  /** Set while a heal stops catch-ups and reads of the damaged file. */
  #draining = false;
  /** Why the replica cannot answer (damaged, rebuilding), or null. */
  #damage: string | null = null;
  /** Why the last catch-up could not write (no space, read-only), until one succeeds. */
  #unwritable: string | null = null;
  /** Why the file was (re)built at open, or null when it was reused. */
  readonly rebuildReason: string | null;
  /** Figures of the last catch-up that copied anything. */
  lastCatchUp: CatchUpStats | null = null;
  /** Whether the catch-up running now is a build (see {@link building}). */
  #bulk = false;
  /** The seq a build started from, published as {@link lastSeq} while it runs. */
  #bulkFromSeq = 0;
  /** Counts the commits that changed the replica's rows (see {@link version}). */
  #version = 0;
  /** When the last catch-up that ended started (epoch ms), or null. */
  #takenAt: number | null = null;
  /** The committed `days_through` (replica_days.sql); only ever grows within one file. */
  #daysThrough: number;

  private constructor(
    options: ReplicaOptions,
    source: ReplicaSource,
    instance: DuckDBInstance,
    sync: DuckDBConnection,
    progress: ReplicaProgress,
    rebuildReason: string | null,
    daysThrough: number,
  ) {
    this.#options = options;
    this.#daysThrough = daysThrough;
    this.#source = source;
    this.#instance = instance;
    this.#sync = sync;
    this.#pool = new ReadPool(instance);
    this.#progress = progress;
    this.rebuildReason = rebuildReason;
  }

  /**
   * Opens the replica, deleting and recreating the file when it is missing,
   * unopenable, of another schema version or source, or ahead of the source
   * (a replaced `telemetry.db`, a restored database). Copies nothing: call
   * {@link catchUp}.
   */
  static async open(options: ReplicaOptions): Promise<Replica> {
    const source = await openReplicaSource(options.source);
    try {
      const existing = await openExisting(options.path, source);
      if (existing.state === "ok") {
        return new Replica(
          options,
          source,
          existing.instance,
          existing.connection,
          existing.progress,
          null,
          existing.daysThrough,
        );
      }
      // A replica that was never there (a new data directory) is built, not rebuilt: not news.
      if (!options.quiet && existing.reason !== "missing") {
        log("info", "analytics replica: rebuilding", {
          path: options.path,
          reason: existing.reason,
        });
      }
      await removeReplicaFiles(options.path);
      const { instance, connection } = await createReplicaFile(options.path, source);
      return new Replica(
        options,
        source,
        instance,
        connection,
        NO_PROGRESS,
        existing.reason,
        NO_DAYS,
      );
    } catch (error) {
      await source.close();
      throw error;
    }
  }

  /**
   * The seq the replica holds everything up to. PostgreSQL: the sequence's
   * value just before the last catch-up's snapshot (rows of transactions
   * still open then come with the next catch-up).
   */
  get lastSeq(): number {
    // A build is published whole, sort included: until then the lag shows it.
    return this.#bulk ? this.#bulkFromSeq : this.#progress.seq;
  }

  /**
   * The replica's position for caches: changes with every commit that copied
   * rows or tombstones, and with every rebuild; a catch-up that copied nothing
   * leaves it. (Not the seq: on PostgreSQL rows of late commits arrive below it.)
   */
  get version(): number {
    return this.#version;
  }

  /**
   * When the last catch-up that ended started (epoch ms): the replica holds
   * everything the source had committed then. Null before the first one ended.
   */
  get takenAt(): number | null {
    return this.#takenAt;
  }

  /**
   * How far the per-day rollups reach (a UTC midnight, epoch ms): every whole
   * day before it may be read from them (replica_days.sql says why that is
   * exact). A read that starts after this was read sees a snapshot whose mark
   * is at least this one: it only grows, with the commit that moves it.
   */
  get daysThrough(): number {
    return this.#daysThrough;
  }

  /**
   * Starts a catch-up in the background unless one is running or the last
   * one started less than `ms` ago; its failure surfaces on the next caller
   * that waits for a catch-up.
   */
  refresh(ms: number): void {
    if (this.#closed || this.#running !== null || this.#healing !== null) return;
    if (this.#takenAt !== null && Date.now() - this.#takenAt < ms) return;
    this.catchUp().catch(noop);
  }

  /**
   * Whether the replica is being built: a rebuild after damage, or a
   * catch-up copying more than BUILDING_ROWS rows (a first build, a backlog).
   */
  get building(): boolean {
    return this.#healing !== null || this.#bulk;
  }

  /**
   * Brings the replica up to what the source holds now. Callers arriving while
   * a catch-up runs share one follow-up run, which starts when the current one
   * ends and so sees everything committed before they called.
   */
  catchUp(): Promise<void> {
    if (this.#closed) return Promise.reject(new ReplicaClosedError("Analytics replica is closed"));
    if (this.#healing !== null) return this.#healing;
    if (this.#damage !== null) return this.#heal(new Error(this.#damage));
    // Callers sharing a run share its answer too (one promise, one handler).
    const shared = this.#sharedCatchUp();
    let answer = this.#answers.get(shared);
    if (answer === undefined) {
      answer = shared.then(() => {
        this.#unwritable = null;
      }, (error) => {
        // The file cannot take writes (no space, read-only): nothing is damaged; the
        // next catch-up retries what this one rolled back.
        if (isUnwritable(error)) {
          this.#unwritable = `analytics replica cannot be written: ${errorText(error)}`;
          throw new ReplicaUnwritableError(this.#unwritable);
        }
        // Damage, or a catch-up a heal stopped: the heal brings the replica up to date.
        if (!isDamage(error) && this.#healing === null) throw error;
        return this.#heal(error);
      });
      this.#answers.set(shared, answer);
    }
    return answer;
  }

  /** The answer callers get for each shared catch-up run. */
  readonly #answers = new WeakMap<Promise<void>, Promise<void>>();

  /**
   * Why the replica cannot answer insights now (damaged, being rebuilt), or
   * null; for readiness.
   */
  get damage(): string | null {
    return this.#damage ?? this.#unwritable;
  }

  /** Why the last catch-up could not write (no space, read-only), until one succeeds; or null. */
  get unwritable(): string | null {
    return this.#unwritable;
  }

  #sharedCatchUp(): Promise<void> {
    if (this.#running === null) {
      this.#running = this.#runCatchUp().finally(() => {
        this.#running = null;
      });
      return this.#running;
    }
    this.#queued ??= this.#running.then(noop, noop).then(() => {
      this.#queued = null;
      return this.#sharedCatchUp();
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
    if (this.#healing !== null || this.#damage !== null) {
      await this.whileBuilding(this.#heal(new Error(this.#damage ?? "rebuilding")), deadline);
    }
    try {
      return await this.#trackedRead(statements, deadline);
    } catch (error) {
      // Damage, or a read a heal interrupted: read again once the file is rebuilt.
      if (!isDamage(error) && this.#healing === null) throw error;
      await this.whileBuilding(this.#heal(error), deadline);
      return await this.#trackedRead(statements, deadline);
    }
  }

  /**
   * Waits for `work` (a catch-up or a heal) until `deadline` (epoch ms), but
   * no longer than BUILD_WAIT_MS while the replica is being built: then it
   * fails with {@link ReplicaBuildingError}, retryable, and `work` goes on.
   */
  async whileBuilding<T>(work: Promise<T>, deadline: number): Promise<T> {
    work.catch(noop);
    const settled = work.then(() => true, () => true);
    for (;;) {
      const slice = Math.min(deadline, Date.now() + BUILD_WAIT_MS);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const sliceEnded = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), Math.max(0, slice - Date.now()));
      });
      const done = await Promise.race([settled, sliceEnded]);
      clearTimeout(timer);
      if (done) return await work;
      if (this.building) throw new ReplicaBuildingError("Analytics replica is being built");
      if (Date.now() >= deadline) throw new QueryTimeoutError("Query time limit exceeded");
    }
  }

  async #trackedRead(
    statements: readonly ReplicaStatement[],
    deadline: number,
  ): Promise<ReplicaRow[][]> {
    const work = this.#pool.read(statements, deadline);
    this.#pendingReads.add(work);
    try {
      return await work;
    } finally {
      this.#pendingReads.delete(work);
    }
  }

  /**
   * Deletes a damaged replica file and builds it again from the source, once
   * for every caller that meets the damage meanwhile; logged once per heal.
   * When the rebuild fails (a full disk), the damage stays and the next
   * catch-up or read tries again.
   */
  #heal(cause: unknown): Promise<void> {
    if (this.#closed) return Promise.reject(new ReplicaClosedError("Analytics replica is closed"));
    this.#healing ??= this.#rebuild(cause).finally(() => {
      this.#healing = null;
    });
    return this.#healing;
  }

  async #rebuild(cause: unknown): Promise<void> {
    const first = this.#damage === null;
    this.#damage = `analytics replica is being rebuilt after a read failure: ${errorText(cause)}`;
    if (first && !this.#options.quiet) {
      log("warn", "analytics replica: damaged; rebuilding it from the telemetry store", {
        path: this.#options.path,
        error: errorText(cause),
      });
    }
    this.#draining = true;
    this.#pool.interrupt();
    await Promise.allSettled([this.#running, this.#queued, ...this.#pendingReads]);
    this.#draining = false;
    this.#pool.close();
    closeQuietly(this.#sync);
    closeQuietly(this.#instance);
    if (this.#closed) throw new ReplicaClosedError("Analytics replica is closed");
    await removeReplicaFiles(this.#options.path);
    const fresh = await createReplicaFile(this.#options.path, this.#source);
    this.#instance = fresh.instance;
    this.#sync = fresh.connection;
    this.#pool = new ReadPool(fresh.instance);
    this.#progress = NO_PROGRESS;
    this.#takenAt = null;
    this.#daysThrough = NO_DAYS;
    this.#version++;
    await this.#runCatchUp();
    this.#damage = null;
    if (!this.#options.quiet) {
      log("info", "analytics replica: rebuilt", { seq: this.#progress.seq });
    }
  }

  /** Stops catch-ups between chunks, interrupts reads and closes every handle. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#pool.interrupt();
    await Promise.allSettled([this.#queued, this.#running, this.#healing, ...this.#pendingReads]);
    this.#pool.close();
    closeQuietly(this.#sync);
    closeQuietly(this.#instance);
    await this.#source.close();
  }

  async #runCatchUp(): Promise<void> {
    const startedAt = Date.now();
    // Only a first build is sorted: a backlog's rows arrive in about time order, and
    // re-sorting 10M rows after it held insights at 503 for minutes (bench, 10M).
    const empty = this.#progress.seq === NO_PROGRESS.seq &&
      this.#progress.mark === NO_PROGRESS.mark;
    const run = new CatchUpRun(this.#sync, this.#source, this.#progress, {
      quiet: this.#options.quiet ?? false,
      daysThrough: this.#daysThrough,
      isClosed: () => this.#closed || this.#draining,
      started: (bulk) => {
        this.#bulkFromSeq = this.#progress.seq;
        this.#bulk = bulk;
      },
      committed: (progress, rows) => {
        if (progress) this.#progress = progress;
        if (rows > 0) this.#version++;
      },
    });
    try {
      await this.#source.catchUp(this.#progress, run);
      if (this.#bulk && empty) await this.#sortTables();
      // Within a build (still answering 503): its first rollup of every day is part of it.
      await this.#advanceDays(dayOf(this.#options.now?.() ?? startedAt), this.#bulk);
    } finally {
      this.#bulk = false;
    }
    this.#takenAt = startedAt;
    const stats = run.finish();
    if (stats) this.lastCatchUp = stats;
  }

  /**
   * Rolls up the days from `days_through` to `today` (exclusive) for every
   * organization and moves the mark there, and recomputes the days late rows
   * added aggregates to (one row per key again), in one transaction: once a
   * day (the first build: every day at once), and the recomputation alone
   * after a build or backlog (`compact`), whose late rows may have added many.
   * Later catch-ups keep the days exact as rows arrive (replica_days.sql).
   */
  async #advanceDays(today: number, compact: boolean): Promise<void> {
    const from = this.#daysThrough;
    const advance = today > from;
    if ((!advance && !compact) || this.#closed || this.#draining) return;
    const params = { from: BigInt(from), to: BigInt(today) };
    const sync = this.#sync;
    await sync.run("BEGIN TRANSACTION");
    try {
      if (advance) {
        for (const name of ["advance_drop_activity", "advance_drop_tools", "advance_drop_models"]) {
          await sync.run(namedSql(days, name), { from: params.from });
        }
        for (const name of ["advance_activity", "advance_tools", "advance_models"]) {
          await sync.run(namedSql(days, name), params);
        }
      }
      await sync.run(namedSql(days, "compact_days"));
      await sync.run(namedSql(days, "refresh_days"));
      if (advance) await sync.run(namedSql(days, "advance_mark"), { to: params.to });
      await sync.run("COMMIT");
    } catch (error) {
      await sync.run("ROLLBACK").catch(noop);
      throw error;
    }
    if (advance) this.#daysThrough = today;
  }

  /**
   * Rewrites every table in (org_id, ts) order (see replica_sort.sql), each
   * in one transaction; readers see the old table until it commits. The read
   * connections are replaced: their prepared statements named the old tables.
   */
  async #sortTables(): Promise<void> {
    const started = performance.now();
    const unsorted: string[] = [];
    // One thread sorts within the memory limit where two ran out of it (10M calls, 128 MiB).
    await this.#sync.run("SET threads = 1");
    try {
      for (const table of REPLICA_TABLES) {
        if (this.#closed || this.#draining) {
          throw new ReplicaClosedError("Analytics replica is closed");
        }
        await this.#sync.run("BEGIN TRANSACTION");
        try {
          await this.#sync.run(SORT_TABLE.replaceAll("{table}", table));
          await this.#sync.run("COMMIT");
        } catch (error) {
          await this.#sync.run("ROLLBACK").catch(noop);
          // Sorting only speeds reads up: a table too large to sort stays as copied.
          if (!/Out of Memory/i.test(errorText(error))) throw error;
          unsorted.push(table);
        }
      }
    } finally {
      await this.#sync.run(`SET threads = ${DUCKDB_SETTINGS.threads}`).catch(noop);
    }
    const old = this.#pool;
    this.#pool = new ReadPool(this.#instance);
    old.retire();
    if (unsorted.length > 0) {
      log("warn", "analytics replica: left unsorted, out of memory", { tables: unsorted });
    }
    if (!this.#options.quiet) {
      log("info", "analytics replica: sorted by time", {
        ms: Math.round(performance.now() - started),
      });
    }
  }
}

/** What {@link CatchUpRun} needs from its replica. */
interface RunHooks {
  quiet: boolean;
  /** `days_through` for the whole run (it moves only after the run's copies, in {@link Replica}). */
  daysThrough: number;
  isClosed(): boolean;
  /** Called when the catch-up starts copying; `bulk`: it counts as a build. */
  started(bulk: boolean): void;
  /**
   * Called after each DuckDB commit that reached `progress` (recorded, or kept
   * in memory) with the rows and tombstones it copied.
   */
  committed(progress: ReplicaProgress | null, rows: number): void;
}

/**
 * The DuckDB side of one catch-up: one transaction per group of chunks, rows
 * appended through DuckDB's appender into staging tables and merged by key
 * (tool and model calls by id, flags by (call_id, flag), domain hits by
 * (call_id, domain, scheme); with the key, by ts when the source's old copies
 * keep it). Into an empty replica rows go straight into the tables: one
 * catch-up reads one state of the source, where every key occurs once; so do
 * rows the source marks fresh (no copy of their key in the replica).
 */
class CatchUpRun implements ReplicaTarget {
  readonly #connection: DuckDBConnection;
  readonly #merge: MergeRules;
  readonly #hooks: RunHooks;
  readonly #fresh: boolean;
  readonly #recordedSeq: number;
  /** A first build that failed midway may have left rows (nothing recorded them). */
  #clear: boolean;
  #started = 0;
  #fromSeq = 0;
  #toSeq = 0;
  #rows = 0;
  #verbose = false;
  #lastLog = 0;

  constructor(
    connection: DuckDBConnection,
    merge: MergeRules,
    progress: ReplicaProgress,
    hooks: RunHooks,
  ) {
    this.#connection = connection;
    this.#merge = merge;
    this.#hooks = hooks;
    this.#fresh = progress.seq === NO_PROGRESS.seq && progress.mark === NO_PROGRESS.mark;
    this.#clear = this.#fresh;
    this.#recordedSeq = progress.seq;
  }

  start(from: number, to: number, rows: number): void {
    this.#started = this.#lastLog = performance.now();
    // Its own hold on the thread counts from here: a small catch-up never yields.
    lastYield = this.#started;
    this.#fromSeq = from;
    this.#toSeq = to;
    this.#verbose = !this.#hooks.quiet && (this.#fresh || to - from > LOUD_CATCH_UP_SEQS);
    this.#hooks.started(rows > BUILDING_ROWS);
    if (this.#verbose) {
      log("info", "analytics replica: catching up", { from_seq: from, to_seq: to, rows });
    }
  }

  async write(fill: (batch: ReplicaBatch) => Promise<ReplicaProgress | null>): Promise<void> {
    this.#checkOpen();
    const connection = this.#connection;
    const batch = new Batch(
      connection,
      this.#fresh,
      this.#hooks.daysThrough,
      () => this.#checkOpen(),
    );
    await connection.run("BEGIN TRANSACTION");
    try {
      if (this.#clear) {
        await connection.run(namedSql(schema, "clear_tables"));
        await connection.run(namedSql(days, "clear_day_tables"));
      }
      const progress = await fill(batch);
      const script = await batch.merge(this.#merge);
      // Progress that copied nothing and left the seq where it was moves on in
      // memory only: what is recorded stays valid, and a synced commit is
      // saved (PostgreSQL's snapshot moves with every unrelated transaction).
      const moved = this.#rows + batch.rows > 0 || progress?.seq !== this.#recordedSeq;
      if (progress && moved) script.push(progressSql(progress));
      // One run: each is a trip to DuckDB's thread and back, which under load costs more
      // than a small catch-up's statements.
      await connection.run([...script, "COMMIT"].join("\n"));
      this.#clear = false;
      this.#rows += batch.rows;
      this.#hooks.committed(progress, batch.rows);
      this.#logProgress(progress);
    } catch (error) {
      batch.discard();
      await connection.run("ROLLBACK").catch(noop);
      throw error;
    }
  }

  /**
   * The figures of the catch-up, or null when it copied nothing (the source
   * found nothing, or, on PostgreSQL, a run started because the cluster's
   * transaction ids moved on, which other databases do, and copied no row).
   */
  finish(): CatchUpStats | null {
    if (this.#started === 0) return null;
    if (this.#rows === 0 && this.#fromSeq === this.#toSeq) return null;
    const ms = performance.now() - this.#started;
    const rows = this.#rows;
    if (this.#verbose) {
      log("info", "analytics replica: up to date", {
        seq: this.#toSeq,
        rows,
        ms: Math.round(ms),
        rows_per_second: ms > 0 ? Math.round(rows / (ms / 1000)) : rows,
      });
    }
    return { fromSeq: this.#fromSeq, toSeq: this.#toSeq, rows, ms };
  }

  #logProgress(progress: ReplicaProgress | null): void {
    const now = performance.now();
    if (!this.#verbose || now - this.#lastLog < 1000 || progress?.seq === this.#toSeq) return;
    this.#lastLog = now;
    log("info", "analytics replica: progress", {
      seq: progress?.seq ?? this.#fromSeq,
      to_seq: this.#toSeq,
      rows: this.#rows,
      rows_per_second: Math.round(this.#rows / ((now - this.#started) / 1000)),
    });
  }

  #checkOpen(): void {
    if (this.#hooks.isClosed()) throw new ReplicaClosedError("Analytics replica is closed");
  }
}

/** How a source's rows meet the replica's (see {@link ReplicaSource}). */
type MergeRules = Pick<ReplicaSource, "tombstones" | "oldCopiesKeepTs">;

/** The appenders of one DuckDB transaction of a catch-up. */
class Batch implements ReplicaBatch {
  readonly #connection: DuckDBConnection;
  readonly #direct: boolean;
  readonly #checkOpen: () => void;
  readonly #appenders = new Map<string, DuckDBAppender>();
  readonly #staged = new Set<string>();
  /**
   * The (organization, UTC day) pairs of the tool and model calls appended
   * that may replace an old copy, as `org\u0000day`; only days the rollups
   * hold (before `days_through`): they are recomputed.
   */
  readonly #touchedDays = new Set<string>();
  readonly #daysThrough: number;
  #rows = 0;
  #tombstones = 0;
  /** Tombstones of tool calls (retention, a reject replaced): their rows' days are touched. */
  #callTombstones = 0;
  /** Tombstones of model calls (retention). */
  #modelTombstones = 0;
  /** What fresh calls of days the rollups hold (late calls) add to them. */
  readonly #late = new LateRollups((table) => Object.keys(REPLICA_COLUMNS[table]));

  constructor(
    connection: DuckDBConnection,
    direct: boolean,
    daysThrough: number,
    checkOpen: () => void,
  ) {
    this.#connection = connection;
    this.#daysThrough = daysThrough;
    this.#direct = direct;
    this.#checkOpen = checkOpen;
  }

  get rows(): number {
    return this.#rows;
  }

  async append(
    table: ReplicaTable | "tombstones",
    rows: readonly SourceRow[],
    fresh = false,
  ): Promise<void> {
    await yieldNow();
    this.#checkOpen();
    if (rows.length === 0) return;
    this.#rows += rows.length;
    if (table === "tombstones") {
      this.#tombstones += rows.length;
      for (const row of rows) {
        if (row[1] === "tool_calls") this.#callTombstones++;
        if (row[1] === "model_calls") this.#modelTombstones++;
      }
      append(await this.#appender(table, true), TOMBSTONE_COLUMNS, rows);
      return;
    }
    // Fresh rows go straight into the table: no staged key can match them
    // (one catch-up copies each key once), so the merge's delete cannot meet them.
    const staged = !this.#direct && !fresh;
    if (staged) this.#staged.add(table);
    const at = ROLLED_UP[table];
    if (at !== undefined) {
      for (const row of rows) {
        const day = dayOf(Number(row[at.ts]));
        // A day at or after the mark has no rollup yet: nothing to add or recompute.
        if (day >= this.#daysThrough) continue;
        if (staged) this.#touchedDays.add(`${row[at.org]}\u0000${day}`);
        else this.#late.add(table as "tool_calls" | "model_calls", row, day);
      }
    }
    append(await this.#appender(table, staged), COLUMNS[table], rows);
  }

  /**
   * Flushes the appenders and returns the statements that merge the staged
   * rows and tombstones into the tables (run with the commit).
   */
  async merge({ tombstones, oldCopiesKeepTs }: MergeRules): Promise<string[]> {
    if (this.#touchedDays.size > 0) {
      const rows = [...this.#touchedDays].map((key) => key.split("\u0000"));
      append(await this.#appender("days", true), DAY_COLUMNS, rows);
    }
    for (const { table, kinds, rows } of this.#late.rows()) {
      append(await this.#appender(table, false), kinds, rows);
    }
    this.#closeAppenders();
    const script: string[] = [];
    // The days of the rows about to be replaced or dropped, noted before they go.
    if (this.#callTombstones > 0) script.push(namedSql(days, "mark_tombstoned_days"));
    if (this.#modelTombstones > 0) script.push(namedSql(days, "mark_tombstoned_model_days"));
    if (!oldCopiesKeepTs) {
      if (this.#staged.has("tool_calls")) script.push(namedSql(days, "mark_replaced_days"));
      if (this.#staged.has("model_calls")) {
        script.push(namedSql(days, "mark_replaced_model_days"));
      }
    }
    const marked = this.#callTombstones + this.#modelTombstones > 0 ||
      (!oldCopiesKeepTs && (this.#staged.has("tool_calls") || this.#staged.has("model_calls")));
    if (this.#tombstones > 0 && tombstones === "key") {
      script.push(namedSql(schema, "apply_tombstones_by_key"));
    }
    for (const table of REPLICA_TABLES) {
      if (!this.#staged.has(table)) continue;
      const remove = oldCopiesKeepTs ? `delete_same_ts_${table}` : `delete_${table}`;
      script.push(namedSql(schema, remove), namedSql(schema, `insert_${table}`));
    }
    if (this.#tombstones > 0 && tombstones === "seq") {
      script.push(namedSql(schema, "apply_tombstones"));
    }
    if (this.#touchedDays.size > 0 || marked) script.push(namedSql(days, "refresh_days"));
    if (script.length > 0) script.push(namedSql(schema, "clear_staging"));
    return script;
  }

  /** Closes the appenders of a batch being rolled back. */
  discard(): void {
    try {
      this.#closeAppenders();
    } catch {
      // The rollback discards whatever they held.
    }
  }

  #closeAppenders(): void {
    const appenders = [...this.#appenders.values()];
    this.#appenders.clear();
    let failure: unknown = null;
    for (const appender of appenders) {
      try {
        appender.closeSync();
      } catch (error) {
        failure ??= error;
      }
    }
    if (failure !== null) throw failure;
  }

  /** The appender of `table`, or when `temp` of its staging copy `stage_<table>`. */
  async #appender(table: string, temp: boolean): Promise<DuckDBAppender> {
    const name = temp ? `stage_${table}` : table;
    let appender = this.#appenders.get(name);
    if (!appender) {
      appender = await this.#connection.createAppender(name, null, temp ? "temp" : null);
      this.#appenders.set(name, appender);
    }
    return appender;
  }
}

/** The statement that records `progress`, its values inlined (it runs with the commit). */
function progressSql(progress: ReplicaProgress): string {
  if (!Number.isSafeInteger(progress.seq)) throw new Error(`Replica progress seq ${progress.seq}`);
  const mark = progress.mark === null ? "NULL" : `'${progress.mark.replaceAll("'", "''")}'`;
  return SET_PROGRESS.replace("{seq}", () => String(progress.seq)).replace("{mark}", () => mark);
}

type Existing =
  | {
    state: "ok";
    instance: DuckDBInstance;
    connection: DuckDBConnection;
    progress: ReplicaProgress;
    daysThrough: number;
  }
  | { state: "rebuild"; reason: string };

/** Opens a replica file when it exists and is usable as it is. */
async function openExisting(path: string, source: ReplicaSource): Promise<Existing> {
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
  let recorded: ReplicaProgress | { reason: string };
  try {
    connection = await instance.connect();
    recorded = await readProgress(connection, source);
  } catch (error) {
    recorded = { reason: `unreadable: ${errorText(error)}` };
  }
  try {
    // Not above: a source that cannot answer now is no reason to rebuild.
    const reason = "reason" in recorded ? recorded.reason : await source.aheadReason(recorded);
    if (reason === null && connection !== null) {
      await connection.run(namedSql(schema, "create_staging"));
      await connection.run(namedSql(days, "create_day_staging"));
      const marks = await connection.runAndReadAll(namedSql(days, "read_days_through"));
      const [mark] = marks.getRowObjectsJS();
      return {
        state: "ok",
        instance,
        connection,
        progress: recorded as ReplicaProgress,
        daysThrough: Number(mark?.days_through ?? NO_DAYS),
      };
    }
    connection?.closeSync();
    instance.closeSync();
    return { state: "rebuild", reason: reason ?? "unreadable" };
  } catch (error) {
    connection?.closeSync();
    instance.closeSync();
    throw error;
  }
}

/** The progress a replica file recorded, or why it cannot be used. */
async function readProgress(
  connection: DuckDBConnection,
  source: ReplicaSource,
): Promise<ReplicaProgress | { reason: string }> {
  const meta = new Map<string, string | null>();
  try {
    const reader = await connection.runAndReadAll(namedSql(schema, "read_meta"));
    for (const row of reader.getRowObjectsJS()) {
      meta.set(String(row.key), row.value === null ? null : String(row.value));
    }
  } catch {
    // No meta table: not a replica this code wrote.
    return { reason: "no replica metadata" };
  }
  const version = meta.get("schema_version");
  const seq = meta.get("last_seq");
  const recordedSource = meta.get("source");
  if (version == null || seq == null || recordedSource === undefined || !meta.has("mark")) {
    return { reason: "no replica metadata" };
  }
  if (Number(version) !== REPLICA_SCHEMA_VERSION) {
    return { reason: `schema version ${version}, expected ${REPLICA_SCHEMA_VERSION}` };
  }
  if (recordedSource !== source.identity) {
    return { reason: `replica of "${recordedSource}", not of "${source.identity}"` };
  }
  return { seq: Number(seq), mark: meta.get("mark") ?? null };
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

/** Appends source rows (arrays) with DuckDB's appender. */
function append(
  appender: DuckDBAppender,
  columns: readonly ColumnKind[],
  rows: readonly SourceRow[],
): void {
  for (const row of rows) {
    for (let i = 0; i < columns.length; i++) {
      const value = row[i];
      if (value === null || value === undefined) {
        appender.appendNull();
      } else if (columns[i] === "text" || columns[i] === "text?") {
        appender.appendVarchar(String(value));
      } else if (columns[i] === "int64" || columns[i] === "int64?") {
        appender.appendBigInt(BigInt(String(value)));
      } else {
        // Integers arrive as numbers; DuckDB casts the double to BIGINT exactly.
        appender.appendDouble(Number(value));
      }
    }
    appender.endRow();
  }
}

/** Creates an empty replica file with its tables and meta rows. */
async function createReplicaFile(
  path: string,
  source: ReplicaSource,
): Promise<{ instance: DuckDBInstance; connection: DuckDBConnection }> {
  const instance = await DuckDBInstance.create(path, DUCKDB_SETTINGS);
  let connection: DuckDBConnection | null = null;
  try {
    connection = await instance.connect();
    await connection.run(namedSql(schema, "create_tables"));
    await connection.run(namedSql(schema, "init_meta"), {
      version: String(REPLICA_SCHEMA_VERSION),
      source: source.identity,
    }, { version: VARCHAR, source: VARCHAR });
    await connection.run(namedSql(days, "create_day_tables"));
    await connection.run(namedSql(schema, "create_staging"));
    await connection.run(namedSql(days, "create_day_staging"));
    return { instance, connection };
  } catch (error) {
    connection?.closeSync();
    instance.closeSync();
    throw error;
  }
}

/**
 * DuckDB's words for a file it cannot trust any more: a block whose checksum
 * fails, a database invalidated by an earlier fatal error, a block it cannot
 * read or decode. A query's own mistakes (binder, conversion) are not damage.
 */
const DAMAGE =
  /corrupt|checksum|invalidated|FATAL Error|INTERNAL Error|Serialization Error|IO Error: Could not read|failed to read|invalid block/i;

/** DuckDB's words for a write the file system refused: it passes when space or permission returns. */
const UNWRITABLE =
  /No space left on device|Read-only file system|Disk quota exceeded|Permission denied/i;

function isUnwritable(error: unknown): boolean {
  return UNWRITABLE.test(error instanceof Error ? error.message : String(error));
}

function isDamage(error: unknown): boolean {
  if (error instanceof ReplicaClosedError || error instanceof QueryTimeoutError) return false;
  return DAMAGE.test(error instanceof Error ? error.message : String(error));
}

function closeQuietly(handle: { closeSync(): void }): void {
  try {
    handle.closeSync();
  } catch {
    // Already closed, or invalidated by the damage being healed.
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message.split("\n")[0]! : String(error);
}

function noop(): void {}

/** When the event loop last ran other work during a catch-up (performance.now()). */
let lastYield = 0;

/**
 * Lets timers and requests run when the catch-up has held the thread for
 * YIELD_MS: reading a chunk and appending it are synchronous, and a group of
 * chunks would otherwise hold the server for most of a second.
 */
async function yieldNow(): Promise<void> {
  const now = performance.now();
  if (now - lastYield < YIELD_MS) return;
  await new Promise((resolve) => setTimeout(resolve, 0));
  lastYield = performance.now();
}

const YIELD_MS = 20;

/** Opens the source `spec` names. */
function openReplicaSource(spec: ReplicaSourceSpec): Promise<ReplicaSource> {
  return spec.engine === "sqlite"
    ? Promise.resolve(SqliteReplicaSource.open(spec.path))
    : PostgresReplicaSource.open(spec.url);
}
