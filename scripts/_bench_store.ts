/**
 * The telemetry store under benchmark as the benchmark reads it beside the
 * server — counts, the `seq`, sample ids, sizes, the store's own CPU and the
 * in-process insight baselines — so the phases do not care which engine
 * runs: the data directory's `telemetry.db`, or a PostgreSQL database the
 * benchmark creates for its run (`--database`).
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import type { InsightName, InsightWindow, ReplicaSourceSpec } from "../src/analytics/mod.ts";
import { connectPostgres, type Sql } from "../src/store/postgres/client.ts";
import { bytes, int } from "./_bench_measure.ts";
import { BaselineTimeoutError, runPostgresInsight } from "./_bench_pg_insights.ts";
import { procCpuMs } from "./_bench_server.ts";
import type { SqliteInsightRequest } from "./_bench_sqlite_worker.ts";

/** The storage engines `serve` runs on. */
export type Engine = "sqlite" | "postgres";

/** A tool call to look up, and its session. */
export interface SampledCall {
  id: string;
  sessionId: string;
}

/** A footprint figure of the report. */
export interface FootprintFigure {
  figure: string;
  value: string;
}

/** Insights computed directly on the store: the baseline the DuckDB replica is measured against. */
export interface InsightBaseline {
  /** One run: elapsed ms (and the body when asked), or null when it ran past the cap. */
  run(
    name: InsightName,
    orgId: string,
    window: InsightWindow,
    withBody: boolean,
  ): Promise<{ ms: number; body?: unknown } | null>;
  stop(): Promise<void>;
}

/** The store under benchmark, read directly (not through the server). */
export interface BenchStore {
  readonly engine: Engine;
  /** "SQLite" or "PostgreSQL", for the report. */
  readonly label: string;
  /** The URL `serve --database` and the key store get; null for the data directory. */
  readonly databaseUrl: string | null;
  /** `serve` flags that select this store (beside `--data`). */
  readonly serveArgs: readonly string[];
  /** What a DuckDB replica copies from. */
  readonly replicaSource: ReplicaSourceSpec;
  /** One line for the report's header. */
  describe(): Promise<string>;
  /** `SELECT count(*) FROM tool_calls`. */
  toolCalls(): Promise<number>;
  /** The oldest tool call's time (ms), or null when there is none. */
  oldestCallTs(): Promise<number | null>;
  /** `SELECT count(*) FROM metric_points`. */
  metricPoints(): Promise<number>;
  /** The last telemetry `seq` handed out. */
  seq(): Promise<number>;
  /** Rows a catch-up copies for seqs in (lo, hi]: the four replicated tables and tombstones. */
  rowsInSeqRange(lo: number, hi: number): Promise<number>;
  /** Up to `count` tool calls spread over the whole data set, in a fixed pseudo-random order. */
  sampleCalls(count: number): Promise<SampledCall[]>;
  /** Bytes per tool call of the telemetry store. */
  footprint(calls: number): Promise<FootprintFigure[]>;
  /**
   * CPU ms the engine has used for this store when it runs outside the
   * server process (PostgreSQL on this machine), cumulative; null when it
   * runs inside the server or cannot be read.
   */
  cpuMs(): Promise<number | null>;
  /** The in-process baseline; each run is stopped after `capMs`. */
  insightBaseline(capMs: number): InsightBaseline;
  /** Closes the benchmark's own connections (reopened on next use). */
  release(): Promise<void>;
  /** Releases, and drops a database this run created unless it is kept. */
  dispose(): Promise<void>;
}

/** A linear congruential generator with a fixed seed: the same picks on every run. */
function seededRandom(): () => number {
  let state = 12345;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
}

/** Bytes of a file and its WAL, 0 when absent. */
export function fileBytes(path: string): number {
  let total = 0;
  for (const suffix of ["", "-wal", ".wal"]) {
    try {
      total += Deno.statSync(path + suffix).size;
    } catch {
      // absent
    }
  }
  return total;
}

// ------------------------------------------------------------------------------ SQLite

/** `telemetry.db` in the data directory, read-only beside the server. */
export class SqliteBenchStore implements BenchStore {
  readonly engine = "sqlite";
  readonly label = "SQLite";
  readonly databaseUrl = null;
  readonly serveArgs: readonly string[] = [];
  readonly replicaSource: ReplicaSourceSpec;
  readonly #path: string;
  #db: DatabaseSync | null = null;

  constructor(dir: string) {
    this.#path = `${dir}/telemetry.db`;
    this.replicaSource = { engine: "sqlite", path: this.#path };
  }

  #open(): DatabaseSync {
    return this.#db ??= new DatabaseSync(this.#path, { readOnly: true });
  }

  describe(): Promise<string> {
    return Promise.resolve("SQLite, `telemetry.db` in the data directory (inside the server)");
  }

  toolCalls(): Promise<number> {
    const row = this.#open().prepare("SELECT count(*) AS n FROM tool_calls").get() as { n: number };
    return Promise.resolve(Number(row.n));
  }

  oldestCallTs(): Promise<number | null> {
    const row = this.#open().prepare("SELECT min(ts) AS ts FROM tool_calls").get() as {
      ts: number | null;
    };
    return Promise.resolve(row.ts === null ? null : Number(row.ts));
  }

  metricPoints(): Promise<number> {
    const row = this.#open().prepare("SELECT count(*) AS n FROM metric_points").get() as {
      n: number;
    };
    return Promise.resolve(Number(row.n));
  }

  seq(): Promise<number> {
    const row = this.#open().prepare("SELECT value FROM counters WHERE name = 'seq'").get() as {
      value: number;
    };
    return Promise.resolve(Number(row.value));
  }

  rowsInSeqRange(lo: number, hi: number): Promise<number> {
    let rows = 0;
    for (const table of ["tool_calls", "model_calls", "risk_flags", "domain_hits", "tombstones"]) {
      const row = this.#open().prepare(
        `SELECT count(*) AS n FROM ${table} WHERE seq > ? AND seq <= ?`,
      ).get(lo, hi) as { n: number };
      rows += Number(row.n);
    }
    return Promise.resolve(rows);
  }

  async sampleCalls(count: number): Promise<SampledCall[]> {
    // Rows at random seqs (tool_calls is indexed by seq).
    const maxSeq = await this.seq();
    const pick = this.#open().prepare(
      "SELECT id, session_id FROM tool_calls WHERE seq >= ? ORDER BY seq LIMIT 1",
    );
    const random = seededRandom();
    const calls: SampledCall[] = [];
    for (let i = 0; i < count; i++) {
      const row = pick.get(Math.floor(random() * maxSeq)) as Record<string, string> | undefined;
      if (row) calls.push({ id: row.id!, sessionId: row.session_id! });
    }
    return calls;
  }

  footprint(calls: number): Promise<FootprintFigure[]> {
    const size = fileBytes(this.#path);
    // Every table and index, from SQLite's dbstat: where the bytes of a call go (issue #30).
    const objects = this.#open().prepare(
      "SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC",
    ).all() as { name: string; bytes: number }[];
    const perCall = (n: number) => `${int(n / calls)} B`;
    const shown = objects.filter((o) => o.bytes / calls >= 1);
    const rest = objects.filter((o) => o.bytes / calls < 1).reduce((sum, o) => sum + o.bytes, 0);
    return Promise.resolve([
      {
        figure: "telemetry.db bytes per tool call (SQLite)",
        value: `${int(size / calls)} B (${bytes(size)} for ${int(calls)} calls)`,
      },
      {
        figure: "telemetry.db bytes per tool call by table and index (dbstat, largest first)",
        value: [
          ...shown.map((o) => `${o.name} ${perCall(o.bytes)}`),
          ...(rest > 0 ? [`the other ${objects.length - shown.length} under 1 B each`] : []),
        ].join("; "),
      },
    ]);
  }

  cpuMs(): Promise<number | null> {
    return Promise.resolve(null);
  }

  /** On a worker with its own read-only connection, terminated at the cap. */
  insightBaseline(capMs: number): InsightBaseline {
    const path = this.#path;
    let worker: Worker | null = null;
    const stop = () => {
      worker?.terminate();
      worker = null;
    };
    return {
      async run(name, orgId, window, withBody) {
        worker ??= new Worker(new URL("./_bench_sqlite_worker.ts", import.meta.url), {
          type: "module",
        });
        const running = worker;
        const request: SqliteInsightRequest = { path, name, orgId, window, withBody };
        let timer: ReturnType<typeof setTimeout> | undefined;
        try {
          const answer = await new Promise<{ ms: number; body?: unknown } | null>(
            (resolve, reject) => {
              timer = setTimeout(() => resolve(null), capMs);
              running.onmessage = (
                message: MessageEvent<{ ms?: number; body?: unknown; error?: string }>,
              ) => {
                if (message.data.error !== undefined) reject(new Error(message.data.error));
                else resolve({ ms: message.data.ms!, body: message.data.body });
              };
              running.onerror = (event) => {
                event.preventDefault();
                reject(new Error(event.message));
              };
              running.postMessage(request);
            },
          );
          // Past the cap: the worker is still busy, so it goes.
          if (answer === null) stop();
          return answer;
        } finally {
          clearTimeout(timer);
        }
      },
      stop() {
        stop();
        return Promise.resolve();
      },
    };
  }

  release(): Promise<void> {
    this.#db?.close();
    this.#db = null;
    return Promise.resolve();
  }

  dispose(): Promise<void> {
    return this.release();
  }
}

// -------------------------------------------------------------------------- PostgreSQL

/** The telemetry tables (their sizes are the store's footprint). */
const PG_TELEMETRY_TABLES = [
  "tool_calls",
  "model_calls",
  "risk_flags",
  "domain_hits",
  "sessions",
  "decisions",
  "tombstones",
] as const;

/** A database of its own on a PostgreSQL server, created for the run (or kept by an earlier one). */
export class PostgresBenchStore implements BenchStore {
  readonly engine = "postgres";
  readonly label = "PostgreSQL";
  readonly databaseUrl: string;
  readonly serveArgs: readonly string[];
  readonly replicaSource: ReplicaSourceSpec;
  /** The server's URL (for the drop), or null when this run did not create the database. */
  readonly #serverUrl: string | null;
  readonly #name: string;
  readonly #keep: boolean;
  #sql: Sql | null = null;
  /** Last CPU ms read per backend pid: backends that went away keep their last reading. */
  readonly #backendCpu = new Map<number, number>();
  #cpuReadable = true;
  #disposed = false;

  private constructor(databaseUrl: string, serverUrl: string | null, keep: boolean) {
    this.databaseUrl = databaseUrl;
    this.#serverUrl = serverUrl;
    this.#keep = keep;
    this.#name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
    this.serveArgs = ["--database", databaseUrl];
    this.replicaSource = { engine: "postgres", url: databaseUrl };
  }

  /**
   * Creates an empty database `bench_<random>` on the server `serverUrl`
   * names; `dispose` drops it unless `keep`.
   */
  static async create(serverUrl: string, options: { keep: boolean }): Promise<PostgresBenchStore> {
    const name = `bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const admin = connectPostgres(serverUrl, { max: 1, applicationName: "agent-telemetry bench" });
    try {
      await admin.unsafe(`CREATE DATABASE ${name}`);
    } finally {
      await admin.end();
    }
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    return new PostgresBenchStore(url.toString(), serverUrl, options.keep);
  }

  /** A database an earlier `--keep` run created: measured, never dropped. */
  static attach(databaseUrl: string): PostgresBenchStore {
    return new PostgresBenchStore(databaseUrl, null, true);
  }

  #open(): Sql {
    return this.#sql ??= connectPostgres(this.databaseUrl, {
      max: 1,
      applicationName: "agent-telemetry bench",
    });
  }

  async #one<T>(text: string, params: (string | number)[] = []): Promise<T> {
    const rows = await this.#open().unsafe(text, params);
    return rows[0] as T;
  }

  async describe(): Promise<string> {
    const row = await this.#one<Record<string, string>>(
      `SELECT current_setting('server_version') AS version,
        current_setting('shared_buffers') AS shared_buffers,
        current_setting('fsync') AS fsync,
        current_setting('synchronous_commit') AS synchronous_commit`,
    );
    const url = new URL(this.databaseUrl);
    const fate = this.#serverUrl === null
      ? "kept by an earlier run"
      : this.#keep
      ? "created for this run, kept"
      : "created for this run, dropped after";
    return `PostgreSQL ${row.version} at ${url.host}, database \`${this.#name}\` (${fate}); ` +
      `shared_buffers ${row.shared_buffers}, fsync ${row.fsync}, ` +
      `synchronous_commit ${row.synchronous_commit}`;
  }

  async toolCalls(): Promise<number> {
    return Number((await this.#one<{ n: number }>("SELECT count(*) AS n FROM tool_calls")).n);
  }

  async oldestCallTs(): Promise<number | null> {
    const row = await this.#one<{ ts: number | null }>("SELECT min(ts) AS ts FROM tool_calls");
    return row.ts === null ? null : Number(row.ts);
  }

  async metricPoints(): Promise<number> {
    return Number((await this.#one<{ n: number }>("SELECT count(*) AS n FROM metric_points")).n);
  }

  async seq(): Promise<number> {
    const row = await this.#one<{ seq: number }>(
      "SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS seq FROM telemetry_seq",
    );
    return Number(row.seq);
  }

  async rowsInSeqRange(lo: number, hi: number): Promise<number> {
    const counts = ["tool_calls", "model_calls", "risk_flags", "domain_hits", "tombstones"].map(
      (table) => `(SELECT count(*) FROM ${table} WHERE seq > $1 AND seq <= $2)`,
    );
    const row = await this.#one<{ n: number }>(`SELECT ${counts.join(" + ")} AS n`, [lo, hi]);
    return Number(row.n);
  }

  async sampleCalls(count: number): Promise<SampledCall[]> {
    // No index on seq here: one pass of BERNOULLI sampling, with a fixed seed, then shuffled.
    const total = await this.toolCalls();
    if (total === 0) return [];
    const percent = Math.min(100, ((count * 1.5) / total) * 100);
    const rows = await this.#open().unsafe(
      `SELECT id, session_id FROM tool_calls TABLESAMPLE BERNOULLI (${percent}) REPEATABLE (12345)`,
    ) as unknown as Record<string, string>[];
    const calls: SampledCall[] = rows.map((r) => ({ id: r.id!, sessionId: r.session_id! }));
    const random = seededRandom();
    for (let i = calls.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [calls[i], calls[j]] = [calls[j]!, calls[i]!];
    }
    return calls.slice(0, count);
  }

  async footprint(calls: number): Promise<FootprintFigure[]> {
    const database = await this.#one<{ bytes: number }>(
      "SELECT pg_database_size(current_database()) AS bytes",
    );
    const tables = await this.#open().unsafe(
      `SELECT c.relname AS name, pg_total_relation_size(c.oid) AS total,
          pg_indexes_size(c.oid) AS indexes
        FROM pg_class AS c
        WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace
          AND c.relname IN (${PG_TELEMETRY_TABLES.map((t) => `'${t}'`).join(", ")})`,
    ) as unknown as { name: string; total: number; indexes: number }[];
    const sum = tables.reduce((s, t) => s + Number(t.total), 0);
    const indexes = tables.reduce((s, t) => s + Number(t.indexes), 0);
    const toolCalls = tables.find((t) => t.name === "tool_calls");
    return [
      {
        figure: "PostgreSQL database bytes per tool call (pg_database_size)",
        value: `${int(Number(database.bytes) / calls)} B (${bytes(Number(database.bytes))} for ${
          int(calls)
        } calls; WAL not included)`,
      },
      {
        figure:
          "PostgreSQL telemetry tables bytes per tool call (pg_total_relation_size: heap, TOAST, indexes)",
        value: `${int(sum / calls)} B (${bytes(sum)}, of which indexes ${bytes(indexes)}; ` +
          `tool_calls ${bytes(Number(toolCalls?.total ?? 0))} with indexes ${
            bytes(Number(toolCalls?.indexes ?? 0))
          })`,
      },
    ];
  }

  /** Sums the CPU of this database's backends, when they run on this machine. */
  async cpuMs(): Promise<number | null> {
    if (!this.#cpuReadable || this.#disposed) return null;
    const rows = await this.#open().unsafe(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database()",
    ) as unknown as { pid: number }[];
    for (const { pid } of rows) {
      try {
        const comm = (await Deno.readTextFile(`/proc/${pid}/comm`)).trim();
        if (comm !== "postgres") throw new Error(`Not a PostgreSQL backend: ${comm}`);
        this.#backendCpu.set(pid, await procCpuMs(String(pid)));
      } catch {
        // The server runs elsewhere (or in another PID namespace).
        this.#cpuReadable = false;
        return null;
      }
    }
    let total = 0;
    for (const value of this.#backendCpu.values()) total += value;
    return total;
  }

  /** On its own connection, each run in one snapshot, stopped by `statement_timeout`. */
  insightBaseline(capMs: number): InsightBaseline {
    let sql: Sql | null = null;
    const url = this.databaseUrl;
    return {
      async run(name, orgId, window, withBody) {
        if (sql === null) {
          sql = connectPostgres(url, { max: 1, applicationName: "agent-telemetry bench baseline" });
          await sql.unsafe("SELECT 1");
        }
        const started = performance.now();
        try {
          const body = await runPostgresInsight(sql, name, orgId, window, capMs);
          return { ms: performance.now() - started, ...(withBody ? { body } : {}) };
        } catch (error) {
          if (error instanceof BaselineTimeoutError) return null;
          throw error;
        }
      },
      async stop() {
        await sql?.end({ timeout: 5 });
        sql = null;
      },
    };
  }

  async release(): Promise<void> {
    const sql = this.#sql;
    this.#sql = null;
    await sql?.end({ timeout: 5 });
  }

  async dispose(): Promise<void> {
    if (this.#disposed) return;
    await this.release();
    this.#disposed = true;
    if (this.#keep || this.#serverUrl === null) return;
    const admin = connectPostgres(this.#serverUrl, {
      max: 1,
      applicationName: "agent-telemetry bench",
    });
    try {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${this.#name} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  }
}
