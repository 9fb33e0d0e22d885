/**
 * How an insight runs on the DuckDB replica: wait until the replica holds
 * everything acknowledged before the request (a retryable `503` while it is
 * being built), read the insight's statements in one snapshot, shape the
 * envelope; and the cached path the routes take, which reuses an answer while
 * the replica and the window's rows are unchanged (`insight_cache.ts`), and
 * under continuous ingest answers from a replica state no older than the
 * freshness bound without waiting for a catch-up (`InsightReader.staleFloor`).
 * Insights routed to SQLite (`sqlite_insights.ts`) skip the replica: they run
 * on the store's reader threads, read after write, cached under the store's
 * seq; under continuous ingest an answer computed within the freshness bound
 * is served without reading the store (`InsightReader.receivingFloor`).
 *
 * @module
 */
import { InsightCache, type WindowEdges, windowEdgesSql } from "./insight_cache.ts";
import {
  DUCKDB_INSIGHT_SQL,
  type InsightBody,
  type InsightGrouping,
  type InsightName,
  type InsightRequest,
  type InsightStatement,
  replicaInsightQuery,
} from "./insights.ts";
import type { ReplicaRow, ReplicaStatement } from "./read_pool.ts";
import { REPLICA_TABLES } from "./replica_source.ts";
import { QueryTimeoutError, ReplicaBuildingError } from "../errors.ts";
import {
  routedToSqlite,
  sqliteAnswers,
  sqliteInsightAnswer,
  sqliteInsightBatch,
  STORE_POSITION_STATEMENT,
  storePosition,
} from "./sqlite_insights.ts";
import type { ReadStatement } from "../store/telemetry_queries.ts";
import type { InsightWindow } from "./window.ts";

/** What running insights needs from the replica. */
export interface InsightReader {
  /**
   * Resolves once the replica holds everything acknowledged before the call;
   * fails with `ReplicaBuildingError` while it is being built, or
   * `QueryTimeoutError` at `deadline` (epoch ms).
   */
  caughtUp(deadline: number): Promise<void>;
  /** Runs statements in one snapshot, interrupted at `deadline` (epoch ms). */
  read(statements: readonly ReplicaStatement[], deadline: number): Promise<ReplicaRow[][]>;
  /** The replica's position: changes whenever its rows change. */
  readonly version: number;
  /**
   * How far the replica's per-day rollups reach (`Replica.daysThrough`),
   * read before a read starts: its snapshot's rollups reach at least as far.
   */
  readonly daysThrough: number;
  /**
   * When the catch-up the replica's rows are complete up to started (epoch
   * ms); null before the first one ended.
   */
  readonly takenAt: number | null;
  /**
   * The oldest replica state (catch-up start, epoch ms) a request arriving now
   * may be answered from without waiting for a catch-up, or null when it must
   * wait for {@link caughtUp}: null unless telemetry is being received now.
   */
  staleFloor(): number | null;
  /**
   * While telemetry is being received now, the oldest time an answer's reads
   * may have started for a request arriving now (now − the freshness bound);
   * else null. Unlike {@link staleFloor}, whatever the replica's state.
   */
  receivingFloor(): number | null;
  /** Calls `listener` whenever the node starts receiving an export, until the returned function is called. */
  onReceiving(listener: () => void): () => void;
  /** Whether, in the last `ms` milliseconds, an export started while another was in flight. */
  concurrentIngestWithin(ms: number): boolean;
}

/**
 * A request that finds no export in flight while exports were overlapping a
 * moment ago waits this long for the next before it asks for a catch-up:
 * under continuous ingest from several senders the next export nearly always
 * comes first, and the catch-up (a scan of the replica's keys) is spared. A
 * client that sends one export at a time never waits.
 */
const INGEST_GAP_MS = 50;

/**
 * How far past each edge of a window its edges are read (insight_edges.sql):
 * an organization quiet for longer gets its cached answer recomputed once
 * per horizon instead of never; reading one hour costs what reading a minute
 * does (a row group either way), where reading to the window's end cost 30 ms
 * of a 90-day insight at 1M calls.
 */
export const EDGE_HORIZON_MS = 3_600_000;

/**
 * Insights SQLite computes at once while the replica is built; the others
 * answer the retryable 503. The reader threads are the lists' too: at 1M
 * calls under the benchmark's mixed load, unbounded, 90-day insights held
 * both threads and lists waited 60 s (p50); one leaves the other to them.
 */
const MAX_BUILD_FALLBACKS = 1;

/** The replica tables an insight's SQL reads. */
function tablesRead(sql: Readonly<Record<string, string>>): string[] {
  const replicated: readonly string[] = REPLICA_TABLES;
  const tables = new Set<string>();
  for (const text of Object.values(sql)) {
    for (const [, table] of text.matchAll(/\b(?:FROM|JOIN)\s+(\w+)/gi)) {
      if (replicated.includes(table!)) tables.add(table!);
    }
  }
  return [...tables];
}

/** Runs one insight on the replica, uncached (the benchmark measures this one). */
export async function runInsight(
  reader: InsightReader,
  request: InsightRequest,
  deadline: number,
): Promise<InsightBody> {
  await reader.caughtUp(deadline);
  return (await readInsight(reader, request, deadline, null)).body;
}

/** The SQLite store's reader threads, for insights routed there. */
export interface StoreReader {
  /** Runs the statements in one snapshot, off the event loop. */
  read(statements: ReadStatement[]): Promise<unknown[][]>;
}

/** How the cache served its requests so far. */
export interface InsightCacheStats {
  hits: number;
  misses: number;
  /** Bytes of answers held (as JSON). */
  bytes: number;
}

/**
 * Insights answered from a cache keyed by the replica's position, for the
 * routes. Concurrent requests for the same insight share one computation when
 * its answer holds for their windows too.
 */
export class CachedInsights {
  readonly #reader: InsightReader;
  readonly #store: StoreReader | null;
  readonly #cache: InsightCache;
  readonly #pending = new Map<string, Promise<unknown>>();
  readonly #edgeHorizonMs: number;
  /** Insights SQLite is computing while the replica is built ({@link MAX_BUILD_FALLBACKS}). */
  #fallbacks = 0;
  #hits = 0;
  #misses = 0;

  /**
   * `store`: the SQLite store's readers, which answer the insights routed to
   * SQLite; `edgeHorizonMs`: see {@link EDGE_HORIZON_MS}.
   */
  constructor(
    reader: InsightReader,
    cache = new InsightCache(),
    store: StoreReader | null = null,
    edgeHorizonMs = EDGE_HORIZON_MS,
  ) {
    this.#reader = reader;
    this.#store = store;
    this.#cache = cache;
    this.#edgeHorizonMs = edgeHorizonMs;
  }

  get stats(): InsightCacheStats {
    return { hits: this.#hits, misses: this.#misses, bytes: this.#cache.bytes };
  }

  async answer(request: InsightRequest, deadline: number): Promise<InsightBody> {
    const { name, orgId, window, filters = {}, grouping } = request;
    const store = this.#store;
    if (store !== null && name !== "productivity" && routedToSqlite(name, window, filters)) {
      return this.#answerFromStore(store, name, orgId, window, grouping);
    }
    try {
      return await this.#answerFromReplica(request, deadline);
    } catch (error) {
      // While the replica is built (at first start, after it was lost, or a
      // schema change: minutes at 10M calls), SQLite answers what it can
      // within the query time limit; past it, the retryable 503 stands.
      if (!(error instanceof ReplicaBuildingError) || store === null) throw error;
      if (name === "productivity" || !sqliteAnswers(name, filters)) throw error;
      if (this.#fallbacks >= MAX_BUILD_FALLBACKS) throw error;
      this.#fallbacks++;
      try {
        return await this.#answerFromStore(store, name, orgId, window, grouping);
      } catch (fallback) {
        throw fallback instanceof QueryTimeoutError ? error : fallback;
      } finally {
        this.#fallbacks--;
      }
    }
  }

  async #answerFromReplica(request: InsightRequest, deadline: number): Promise<InsightBody> {
    const { name, window } = request;
    const arrived = Date.now();
    let floor = this.#reader.staleFloor();
    if (floor === null) {
      // Waits for the writes acknowledged before the request, unless an
      // export starts meanwhile: the node is then under ingest again.
      let stop = () => {};
      const receiving = new Promise<"receiving">((resolve) => {
        stop = this.#reader.onReceiving(() => resolve("receiving"));
      });
      try {
        if (this.#reader.concurrentIngestWithin(INGEST_GAP_MS)) {
          let timer: ReturnType<typeof setTimeout> | undefined;
          const gap = new Promise<"gap">((resolve) => {
            timer = setTimeout(() => resolve("gap"), INGEST_GAP_MS);
          });
          if (await Promise.race([receiving, gap]) === "receiving") {
            floor = this.#reader.staleFloor();
          }
          clearTimeout(timer);
        }
        if (floor === null) {
          const caught = this.#reader.caughtUp(deadline);
          caught.catch(() => {});
          if (await Promise.race([caught, receiving]) === "receiving") {
            floor = this.#reader.staleFloor();
          }
          if (floor === null) {
            await caught;
            // Any answer of a state caught up since the request arrived holds its writes.
            floor = arrived;
          }
        }
      } finally {
        stop();
      }
    }
    const key = cacheKey(request);
    const version = this.#reader.version;
    const takenAt = this.#reader.takenAt ?? -Infinity;
    const cached = this.#cache.get(key, version, window, floor);
    if (cached !== null) {
      this.#hits++;
      return cached;
    }
    const pending = this.#pending.get(key);
    if (pending !== undefined) {
      await pending.catch(() => {});
      const shared = this.#cache.get(key, this.#reader.version, window, floor);
      if (shared !== null) {
        this.#hits++;
        return shared;
      }
    }
    this.#misses++;
    const tables = tablesRead(DUCKDB_INSIGHT_SQL[name]);
    const edges = { tables, horizonMs: this.#edgeHorizonMs };
    const work = readInsight(this.#reader, request, deadline, edges);
    this.#pending.set(key, work);
    try {
      const { body, edges } = await work;
      // Rows copied meanwhile may be in the snapshot read: kept under the
      // position and catch-up read before it, which it holds at least.
      if (edges !== null) this.#cache.set(key, version, window, edges, body, takenAt);
      return body;
    } finally {
      if (this.#pending.get(key) === work) this.#pending.delete(key);
    }
  }

  /**
   * An insight routed to SQLite: the store's seq first (one short read), the
   * cached answer when it was computed at that seq and the window's rows are
   * unchanged, else the insight, the seq and the window's edges in one
   * snapshot. Every write and retention delete advances the seq, so the
   * answer holds every write acknowledged before the request. Under ingest,
   * an answer whose reads started within the freshness bound is served
   * first, without a read: the reader threads, which the lists share, are
   * then kept for the lists (at 1M calls under the benchmark's mixed load,
   * risk 7d waited 600 ms for its seq read behind them).
   */
  async #answerFromStore(
    store: StoreReader,
    name: InsightName,
    orgId: string,
    window: InsightWindow,
    grouping: InsightGrouping | undefined,
  ): Promise<InsightBody> {
    const key = `sqlite\u0000${InsightCache.key(name, orgId, window)}\u0000${grouping?.by ?? ""}`;
    const floor = this.#reader.receivingFloor();
    if (floor !== null) {
      // NaN: no position is known, only an answer recent enough is taken.
      const recent = this.#cache.get(key, NaN, window, floor);
      if (recent !== null) {
        this.#hits++;
        return recent;
      }
    }
    // The snapshot read below starts after this: it holds every write acknowledged before.
    const readsStarted = Date.now();
    const [position] = await store.read([STORE_POSITION_STATEMENT]);
    const seq = storePosition(position);
    const cached = this.#cache.get(key, seq, window);
    if (cached !== null) {
      this.#hits++;
      return cached;
    }
    this.#misses++;
    const [table = "tool_calls"] = tablesRead(DUCKDB_INSIGHT_SQL[name]);
    const batch = sqliteInsightBatch(name, orgId, window, table, this.#edgeHorizonMs, grouping);
    const results = await store.read(batch);
    const answer = sqliteInsightAnswer(name, window, results, grouping);
    this.#cache.set(key, answer.seq, window, answer.edges, answer.body, readsStarted);
    return answer.body;
  }
}

/** Which tables' window edges to read with an insight, and how far past each edge. */
interface EdgeReads {
  tables: readonly string[];
  horizonMs: number;
}

/**
 * Reads an insight's sections and, for each table `edges` names, its
 * window's edges, in one snapshot. No tables: no edges (null).
 */
async function readInsight(
  reader: InsightReader,
  request: InsightRequest,
  deadline: number,
  edges: EdgeReads | null,
): Promise<{ body: InsightBody; edges: WindowEdges | null }> {
  const { orgId, window } = request;
  const edgeTables = edges?.tables ?? [];
  // Over the per-day rollups where they serve the request (the answer is the raw rows').
  const query = replicaInsightQuery(request, reader.daysThrough);
  const statements = query.statements;
  const edgeParams = {
    org: orgId,
    start: BigInt(window.start),
    end: BigInt(window.end),
    horizon: BigInt(edges?.horizonMs ?? 0),
  };
  const results = await reader.read([
    ...statements.map(({ sql, params }) => ({ sql, params: duckdbParams(params) })),
    ...edgeTables.map((table) => ({
      sql: windowEdgesSql(table),
      params: edgeParams,
    })),
  ], deadline);
  const body = query.body(results);
  if (edgeTables.length === 0) return { body, edges: null };
  const read: WindowEdges = { lo: null, hi: null };
  for (const [row] of results.slice(statements.length)) {
    read.lo = earliest(read.lo, row?.lo);
    read.hi = earliest(read.hi, row?.hi);
  }
  return { body, edges: read };
}

function earliest(a: number | null, b: unknown): number | null {
  if (b === null || b === undefined) return a;
  return a === null ? Number(b) : Math.min(a, Number(b));
}

/**
 * What a cached answer is keyed on: the insight, organization and window,
 * every filter, the dimension filters with how many sessions they selected
 * (a session that gained the dimension since is a new answer), and the
 * grouping, `dim.<key>` with how many sessions hold the key (a session's
 * value never changes once stored: more sessions is the only change).
 */
function cacheKey({ name, orgId, window, filters = {}, grouping }: InsightRequest): string {
  return JSON.stringify([
    InsightCache.key(name, orgId, window),
    filters.actor ?? "",
    filters.team ?? [],
    filters.dims ?? [],
    filters.sessions?.length ?? null,
    grouping?.by ?? null,
    grouping?.sessions?.length ?? null,
  ]);
}

/** Integers bind as BIGINT, so `ts` comparisons stay integer comparisons. */
function duckdbParams(params: InsightStatement["params"]): ReplicaStatement["params"] {
  const out: ReplicaStatement["params"] = {};
  for (const [name, value] of Object.entries(params)) {
    out[name] = typeof value === "number" ? BigInt(value) : value;
  }
  return out;
}
