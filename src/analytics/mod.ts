/**
 * Insights on DuckDB: the analytics replica of the telemetry store
 * (`telemetry.db` or PostgreSQL) and the insights it answers (served by
 * `src/api/insights.ts`). The replica's initial build runs in the background,
 * so the server answers list endpoints meanwhile; insight requests get a
 * retryable `503` while it runs (after waiting a quarter of a second for it),
 * and repeated requests are answered from a cache keyed by the replica's
 * position (`insight_cache.ts`).
 *
 * Freshness: an answer holds every write acknowledged before its request,
 * unless telemetry is being received (an export in flight on this node when
 * the request arrives, or one starting while it waits for a catch-up): the
 * answer may then come from the replica as of a catch-up that started at most
 * {@link INSIGHT_FRESHNESS_MS} before the request, for a window that ended at
 * most that long before it (the answer names its window), and such requests
 * start a background catch-up once the last one is {@link REFRESH_MS} old.
 * Under continuous ingest, insights stop queueing behind catch-ups and the
 * cache is not emptied by each one.
 *
 * The replica follows the store: {@link FOLLOW_MS} after a write it catches
 * up in the background, so the first insight after a burst of ingest finds
 * it current instead of a backlog to copy (a backlog of more than 100,000
 * rows counts as a build and answers `503`: 201 of them at 1M calls under
 * the benchmark's mixed load, after its metrics phase).
 *
 * @module
 */
import { log } from "../log.ts";
import { directoryWritable } from "../store/sqlite/database.ts";
import type { AnyInsightName, InsightBody, InsightFilters, InsightGrouping } from "./insights.ts";
import {
  CachedInsights,
  type InsightCacheStats,
  type InsightReader,
  runInsight,
  type StoreReader,
} from "./insight_runner.ts";
import {
  type CatchUpStats,
  Replica,
  ReplicaClosedError,
  type ReplicaSourceSpec,
} from "./replica.ts";
import type { InsightWindow } from "./window.ts";

export {
  type AnyInsightName,
  type GroupBy,
  INSIGHT_NAMES,
  type InsightBody,
  type InsightFilters,
  type InsightGroup,
  type InsightGrouping,
  type InsightName,
  INSIGHTS,
  MAX_GROUPS,
} from "./insights.ts";
export type { InsightCacheStats, StoreReader } from "./insight_runner.ts";
export { routedToSqlite, runSqliteInsight, SQLITE_ROUTES } from "./sqlite_insights.ts";
export {
  GRANULARITIES,
  type Granularity,
  type InsightWindow,
  insightWindow,
  isWindowName,
  WINDOW_NAMES,
  type WindowName,
} from "./window.ts";
export { type CatchUpStats, REPLICA_SCHEMA_VERSION, type ReplicaSourceSpec } from "./replica.ts";

/**
 * How old the replica state an insight answers from may be while telemetry is
 * being received. Each hot insight is recomputed about once per bound: under
 * the benchmark's mixed load at 1.5M calls, 2 s meant 9–14 recomputations a
 * second (≈ 50 ms of DuckDB each), 5 s 3.8.
 */
export const INSIGHT_FRESHNESS_MS = 5_000;

/**
 * Under continuous ingest, how often insight requests start a background
 * catch-up: half the bound. Each catch-up's merge scans the replica's keys
 * (about 70 ms of CPU for tool calls alone at 1.5M rows), so not more often.
 */
const REFRESH_MS = INSIGHT_FRESHNESS_MS / 2;
/** How long `/readyz` waits for a catch-up that may write again before it answers not ready. */
export const READY_CATCH_UP_MS = 2_000;

/**
 * How soon after a write the replica catches up in the background: under
 * continuous ingest about one catch-up per interval, each of what the
 * interval wrote.
 */
export const FOLLOW_MS = REFRESH_MS;

function noop(): void {}

/** Options of {@link openAnalytics}. */
export interface AnalyticsOptions {
  /** Path of `analytics.duckdb` (created, or deleted and rebuilt, as needed). */
  path: string;
  /** The telemetry store to copy from (`telemetry.db` or PostgreSQL), already migrated. */
  source: ReplicaSourceSpec;
  /** Query time limit in milliseconds (docs/api.md §8: 30 s); covers catch-up wait and queries. */
  timeoutMs: number;
  /** Log nothing (tests). */
  quiet?: boolean;
  /**
   * The exports this node is receiving. While one is in flight, insights may
   * answer from a replica state up to `freshnessMs` old. Without it every
   * answer waits for the writes acknowledged before its request.
   */
  ingest?: IngestSignal;
  /** The freshness bound under continuous ingest, ms; {@link INSIGHT_FRESHNESS_MS} by default. */
  freshnessMs?: number;
  /**
   * How soon after a write of `ingest` the replica catches up in the
   * background, ms ({@link FOLLOW_MS} by default); null: only when an
   * insight asks.
   */
  followMs?: number | null;
  /**
   * The SQLite store's reader threads: given, the insights that measure
   * faster on SQLite (`SQLITE_ROUTES`) are answered there, read after write,
   * cached under the store's seq. Not given (PostgreSQL): every insight runs
   * on the replica.
   */
  store?: StoreReader;
  /** How far past a window's edges the cache reads them, ms (insight_runner.ts EDGE_HORIZON_MS; tests). */
  edgeHorizonMs?: number;
}

/** What insights learn of the exports a node is receiving. */
export interface IngestSignal {
  /** Exports (or their writes) in progress now. */
  readonly inFlight: number;
  /** When an export last started while another was in flight (`Date.now()` ms). */
  readonly lastOverlap: number;
  /** Calls `listener` whenever an export starts, until the returned function is called. */
  onStart(listener: () => void): () => void;
  /** Calls `listener` whenever a write settles, until the returned function is called. */
  onWritten(listener: () => void): () => void;
}

/** One insight for one organization and window, with its filters and grouping: the response body. */
export type InsightCall = (
  name: AnyInsightName,
  orgId: string,
  window: InsightWindow,
  filters?: InsightFilters,
  grouping?: InsightGrouping,
) => Promise<InsightBody>;

/** The open analytics service. */
export interface Analytics {
  /** Brings the replica up to what the telemetry store holds now (shared by concurrent callers). */
  catchUp(): Promise<void>;
  /** Settles when the initial build (or catch-up) at open is done; rejects if it failed. */
  ready: Promise<void>;
  /**
   * Runs one insight for one organization and window (catch-up first, within
   * the query time limit) and returns the response body, computed afresh:
   * what the benchmark measures beside `runSqliteInsight`. Fails with
   * `ReplicaBuildingError` while the replica is being built.
   */
  insight: InsightCall;
  /**
   * The same body as {@link insight}, from the cache when the replica and the
   * window's rows are unchanged since an earlier request: what the endpoints
   * serve. An insight routed to SQLite (`options.store`) is read there instead.
   */
  cachedInsight: InsightCall;
  /** Hits and misses of {@link cachedInsight} so far, and the bytes it holds. */
  readonly cacheStats: InsightCacheStats;
  /** Figures of the last catch-up that copied rows (for logs and the benchmark). */
  readonly lastCatchUp: CatchUpStats | null;
  /**
   * The telemetry `seq` the replica holds everything up to. PostgreSQL: the
   * sequence's value just before the last catch-up's snapshot.
   */
  readonly lastSeq: number;
  /**
   * Rejects while the replica cannot answer insights: it is being built (a
   * first build, a backlog, a rebuild after a read failure, or a rebuild that
   * failed and is retried), or its last
   * catch-up could not write (then a catch-up is tried first, for up to
   * {@link READY_CATCH_UP_MS}: space may have returned). For `/readyz`.
   */
  checkReady(): Promise<void>;
  /** Waits for a running catch-up to stop, interrupts queries, releases every DuckDB handle. */
  close(): Promise<void>;
}

/**
 * Opens (or rebuilds) the replica and starts its catch-up in the background.
 * Resolves once the file is open; `ready` tells when the replica has caught up.
 */
export async function openAnalytics(options: AnalyticsOptions): Promise<Analytics> {
  const path = replicaPath(options.path, options.quiet ?? false);
  const replica = await Replica.open({
    path,
    source: options.source,
    quiet: options.quiet,
  });
  const catchUp = () => replica.catchUp();
  const ready = catchUp();
  ready.catch((error) => {
    // Closed before the first build ended (a server stopped right after start): nothing failed.
    if (!options.quiet && !(error instanceof ReplicaClosedError)) {
      log("error", "analytics replica: initial catch-up failed; insight requests will retry", {
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
    }
  });
  const freshnessMs = options.freshnessMs ?? INSIGHT_FRESHNESS_MS;
  const refreshMs = Math.min(REFRESH_MS, freshnessMs / 2);
  const reader: InsightReader = {
    caughtUp: (deadline) => replica.whileBuilding(catchUp(), deadline),
    read: (statements, deadline) => replica.read(statements, deadline),
    get version() {
      return replica.version;
    },
    get daysThrough() {
      return replica.daysThrough;
    },
    get takenAt() {
      return replica.takenAt;
    },
    receivingFloor: () => (options.ingest?.inFlight ?? 0) > 0 ? Date.now() - freshnessMs : null,
    staleFloor() {
      const floor = reader.receivingFloor();
      if (floor === null) return null;
      const takenAt = replica.takenAt;
      if (takenAt === null || takenAt < floor) return null;
      replica.refresh(refreshMs);
      return floor;
    },
    onReceiving: (listener) => options.ingest?.onStart(listener) ?? noop,
    concurrentIngestWithin: (ms) => Date.now() - (options.ingest?.lastOverlap ?? -Infinity) <= ms,
  };
  const cached = new CachedInsights(
    reader,
    undefined,
    options.store ?? null,
    options.edgeHorizonMs,
  );
  const follower = follow(replica, options.ingest, options.followMs);
  return {
    catchUp,
    ready,
    insight: (name, orgId, window, filters, grouping) =>
      runInsight(
        reader,
        { name, orgId, window, filters, grouping },
        Date.now() + options.timeoutMs,
      ),
    cachedInsight: (name, orgId, window, filters, grouping) =>
      cached.answer({ name, orgId, window, filters, grouping }, Date.now() + options.timeoutMs),
    get lastSeq() {
      return replica.lastSeq;
    },
    get cacheStats() {
      return cached.stats;
    },
    get lastCatchUp() {
      return replica.lastCatchUp;
    },
    async checkReady() {
      if (replica.unwritable !== null) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          replica.catchUp().catch(noop),
          new Promise((resolve) => timer = setTimeout(resolve, READY_CATCH_UP_MS)),
        ]);
        clearTimeout(timer);
      }
      const damage = replica.damage;
      if (damage !== null) throw new Error(damage);
      // Insights answer 503 `insights_unavailable` meanwhile: not ready for them either.
      if (replica.building) throw new Error("analytics replica is being built");
    },
    close: () => {
      follower.stop();
      return replica.close();
    },
  };
}

/**
 * Catches the replica up `followMs` after the first write that follows its
 * last catch-up request (a failure surfaces on the next insight that waits).
 */
function follow(
  replica: Replica,
  ingest: IngestSignal | undefined,
  followMs: number | null = FOLLOW_MS,
): { stop(): void } {
  if (ingest === undefined || followMs === null) return { stop: noop };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stopListening = ingest.onWritten(() => {
    if (timer !== undefined) return;
    const armed = setTimeout(() => {
      timer = undefined;
      replica.catchUp().catch(noop);
    }, followMs);
    Deno.unrefTimer(armed);
    timer = armed;
  });
  return {
    stop() {
      stopListening();
      clearTimeout(timer);
    },
  };
}

/**
 * The replica's file, or DuckDB's memory when its directory cannot be written
 * (a read-only node on read-only media): the replica is then built at each
 * start, as a missing file would be.
 */
function replicaPath(path: string, quiet: boolean): string {
  const slash = path.lastIndexOf("/");
  const dir = slash < 0 ? "." : slash === 0 ? "/" : path.slice(0, slash);
  if (directoryWritable(dir)) return path;
  if (!quiet) {
    log("info", "analytics replica: its directory is read-only; building it in memory", { path });
  }
  return ":memory:";
}
