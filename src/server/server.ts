/**
 * `serve`: opens the data directory and runs the query and ingest listeners
 * until closed. The only place that calls `Deno.serve`.
 *
 * @module
 */
import { ActorNames } from "../api/actor_names.ts";
import type { ApiRoute } from "../api/context.ts";
import { isLoopback, type ListenAddress, type ServeConfig } from "../config.ts";
import { ServerStoppingError } from "../errors.ts";
import { announce, log, logError, setLogLevel } from "../log.ts";
import { dataPaths } from "../store/sqlite/data_dir.ts";
import { openStores } from "../store/open_stores.ts";
import { type DataDirLock, lockDataDir } from "../store/data_dir_lock.ts";
import type { KeyVerifier, TelemetryReader } from "../store/stores.ts";
import { type Analytics, openAnalytics } from "../analytics/mod.ts";
import { insightRoutes } from "../api/insights.ts";
import type { RetentionResult } from "../store/stores.ts";
import { type Clock, systemClock } from "../time.ts";
import { VERSION } from "../version.ts";
import { type GrpcListener, startGrpcListener } from "./grpc_listener.ts";
import { createIngestApp } from "./ingest_app.ts";
import { IngestActivity } from "./ingest_activity.ts";
import { openOrganizationSeries } from "./organization_metrics.ts";
import { ServiceMetrics } from "../http/metrics.ts";
import {
  DEFAULT_READ_DEADLINES,
  type HttpListener,
  type ReadDeadlines,
  serveWithDeadlines,
} from "./read_deadlines.ts";
import { createQueryApp, queryRoutes } from "./query_app.ts";

/** A running server. */
export interface RunningServer {
  queryUrl: string;
  ingestUrl: string;
  /** The OTLP/gRPC listener's `http://` (h2c) or `https://` URL; null when turned off. */
  grpcUrl: string | null;
  /** The route patterns the query listener's router serves (`/v1/sessions/:id`), in its order. */
  queryRoutes: readonly string[];
  /**
   * Runs one retention pass now, after any pass in flight (it also runs in the
   * background). `now` fixes the clock the cutoff is taken from (tests).
   */
  runRetention(now?: number): Promise<RetentionResult>;
  /** Stops accepting, finishes in-flight requests, closes the stores. */
  close(): Promise<void>;
}

const NOTHING_PRUNED: RetentionResult = { toolCalls: 0, modelCalls: 0, reclaimedBytes: 0 };
const RETENTION_FIRST_MS = 10_000;
const RETENTION_EVERY_MS = 3_600_000;

/** Replacements for tests: e.g. a key store that fails. */
export interface ServeOverrides {
  keys?: (real: KeyVerifier) => KeyVerifier;
  /** The query API's reads through a wrapper (e.g. one that counts them). */
  reader?: (real: TelemetryReader) => TelemetryReader;
  routes?: ApiRoute[];
  /** No listener lines on stdout. */
  quiet?: boolean;
  /** Shorter read deadlines than {@link DEFAULT_READ_DEADLINES}, to test them. */
  readDeadlines?: Partial<ReadDeadlines>;
  /** Another insight freshness bound under ingest than `INSIGHT_FRESHNESS_MS`, to test it. */
  insightFreshnessMs?: number;
  /** Another delay of the replica's background catch-up after writes than `FOLLOW_MS` (null: none). */
  replicaFollowMs?: number | null;
  /**
   * Another "now" than the system's for insight windows and retention cutoffs:
   * tests whose data sits at fixed dates fix the server's clock with it.
   */
  clock?: Clock;
}

type Handler = (request: Request) => Promise<Response>;

/** Opens the stores in `config.dataDir` and starts both listeners. */
export async function startServer(
  config: ServeConfig,
  overrides: ServeOverrides = {},
): Promise<RunningServer> {
  setLogLevel(config.logLevel);
  const stores = await openStores(config);
  // A read-only node writes nothing here (its directory may be read-only media).
  let dataDirLock: DataDirLock | null = null;
  if (!config.readOnly) {
    try {
      dataDirLock = await lockDataDir(config.dataDir);
    } catch (error) {
      await stores.close();
      throw error;
    }
  }
  const keys = overrides.keys ? overrides.keys(stores.keys) : stores.keys;
  const { reader } = stores;
  const ingestActivity = new IngestActivity();
  const writer = stores.writer && ingestActivity.countWrites(stores.writer);
  const clock = overrides.clock ?? systemClock;
  let analytics: Analytics;
  let cursorSecret: Uint8Array;
  let orgIds: string[];
  try {
    cursorSecret = await stores.keys.cursorSecret();
    // A read-only node accepts no export: it has no per-organization series.
    orgIds = writer ? (await stores.keys.listOrgs()).orgs.map((org) => org.id) : [];
    analytics = await openAnalytics({
      path: dataPaths(config.dataDir).analytics,
      source: stores.replicaSource,
      timeoutMs: config.queryTimeoutMs,
      ingest: ingestActivity,
      freshnessMs: overrides.insightFreshnessMs,
      ...(overrides.replicaFollowMs === undefined ? {} : { followMs: overrides.replicaFollowMs }),
      store: stores.engine === "sqlite" ? reader : undefined,
    });
  } catch (error) {
    await stores.close();
    dataDirLock?.release();
    throw error;
  }
  const metrics = new ServiceMetrics();
  for (const orgId of orgIds) openOrganizationSeries(metrics, orgId);
  metrics.addGauge({
    name: "agent_telemetry_database_bytes",
    help: "Size of each data file in bytes (with PostgreSQL: the node's replica file).",
    read: () => fileSizes(config.dataDir, stores.engine === "sqlite"),
  });
  if (config.maxDiskBytes !== null && writer) {
    const cap = config.maxDiskBytes;
    metrics.addGauge({
      name: "agent_telemetry_max_disk_bytes",
      help:
        "The --max-disk-bytes cap on telemetry.db: above it, retention deletes the oldest days (absent without a cap).",
      read: () => [{ labels: {}, value: cap }],
    });
  }
  metrics.addGauge({
    name: "agent_telemetry_replica_lag_seq",
    help: "Telemetry sequence numbers acknowledged but not yet in the DuckDB replica.",
    read: () =>
      writer ? [{ labels: {}, value: Math.max(0, writer.lastSeq - analytics.lastSeq) }] : [],
  });
  metrics.addGauge({
    name: "agent_telemetry_ingest_in_flight",
    help:
      "OTLP/HTTP exports being answered plus telemetry writes in progress (an HTTP export being written counts twice); above zero, insights may answer from a replica state within the freshness bound.",
    read: () => [{ labels: {}, value: ingestActivity.inFlight }],
  });
  const readiness = async () => {
    await stores.readiness();
    await analytics.checkReady();
  };
  const routes = [
    ...insightRoutes(analytics, clock, config.dimensionKeys),
    ...(overrides.routes ?? []),
  ];
  const stopping = new AbortController();
  const queryApp = createQueryApp({
    stopping: stopping.signal,
    keys,
    reader: overrides.reader ? overrides.reader(reader) : reader,
    version: VERSION,
    cursorSecret,
    actorNames: new ActorNames(stores.keys),
    clock,
    metrics,
    readiness,
    logError,
    routes,
  });
  const ingestApp = ingestActivity.countRequests(createIngestApp({
    keys,
    writer,
    maxBytes: config.ingestMaxBytes,
    metrics,
    dimensionKeys: config.dimensionKeys,
    readiness,
    logError,
    metricsAccess: config.metricsAccess,
  }));
  if (config.metricsAccess.kind === "refused") {
    log(
      "warn",
      "/metrics is refused: the ingest listener is not on loopback; set --metrics-token to serve it",
    );
  }
  const listeners: HttpListener[] = [];
  const deadlines = { ...DEFAULT_READ_DEADLINES, ...overrides.readDeadlines };
  let grpcListener: GrpcListener | null = null;
  let retentionTimer: ReturnType<typeof setTimeout> | undefined;
  let retentionRun: Promise<RetentionResult> | null = null;
  // Passes run one after another, so a pass at a fixed `now` never returns the result of another.
  const runRetention = (now?: number): Promise<RetentionResult> => {
    let started = 0;
    const pass = (retentionRun ?? Promise.resolve(NOTHING_PRUNED)).catch(() => NOTHING_PRUNED)
      .then(() => {
        started = performance.now();
        return writer?.runRetention(now ?? clock()) ?? NOTHING_PRUNED;
      })
      .then((result) => {
        if (result.toolCalls + result.modelCalls > 0) {
          log("info", "retention pass", {
            deleted_tool_calls: result.toolCalls,
            deleted_model_calls: result.modelCalls,
            reclaimed_bytes: result.reclaimedBytes,
            duration_ms: Math.round(performance.now() - started),
          });
        }
        return result;
      });
    retentionRun = pass;
    void pass.catch(() => {}).finally(() => {
      if (retentionRun === pass) retentionRun = null;
    });
    return pass;
  };
  let stopped = false;
  const scheduleRetention = (delay: number) => {
    // A pass that ends while closing schedules no other.
    if (stopped) return;
    retentionTimer = setTimeout(() => {
      runRetention().catch(logError).finally(() => scheduleRetention(RETENTION_EVERY_MS));
    }, delay);
  };
  const closeAll = async () => {
    stopped = true;
    // Exports in progress end now: a client that stopped reading must not hold the shutdown.
    stopping.abort();
    clearTimeout(retentionTimer);
    await Promise.all([
      ...listeners.map((server) => server.shutdown()),
      grpcListener?.close(),
    ]);
    await retentionRun?.catch(() => {});
    await analytics.close();
    await stores.close();
    dataDirLock?.release();
  };
  let urls: string[];
  try {
    urls = [];
    for (
      const [address, handler] of [[config.listen, queryApp], [
        config.ingestListen,
        ingestApp,
      ]] as const
    ) {
      const { server, url } = listen(address, handler, config.tls, deadlines, metrics);
      listeners.push(server);
      urls.push(url);
    }
    if (config.grpcListen) {
      grpcListener = await startGrpcListener(config.grpcListen, config.tls, {
        keys,
        writer,
        maxBytes: config.ingestMaxBytes,
        metrics,
        dimensionKeys: config.dimensionKeys,
        logError,
      });
    }
  } catch (error) {
    await closeAll();
    throw error;
  }
  const [queryUrl, ingestUrl] = urls as [string, string];
  // Plain HTTP that only this machine can reach (the default listeners) is no risk worth a warning.
  const exposed = [config.listen, config.ingestListen, config.grpcListen]
    .some((address) => address !== null && !isLoopback(address.hostname));
  if (!config.tls && exposed) {
    log("warn", "TLS is off: serving plain HTTP; pass --tls-cert and --tls-key in production");
  }
  if (!overrides.quiet) {
    announce(`query API listening on ${queryUrl}`);
    // Before the OTLP/HTTP line, which scripts wait for as the last one.
    if (grpcListener) announce(`OTLP/gRPC ingest listening on ${grpcListener.url}`);
    announce(`OTLP ingest listening on ${ingestUrl}`);
  }
  if (writer) scheduleRetention(RETENTION_FIRST_MS);
  let closing: Promise<void> | null = null;
  return {
    queryUrl,
    ingestUrl,
    grpcUrl: grpcListener?.url ?? null,
    queryRoutes: queryRoutes(routes).map((route) => route.pattern),
    runRetention,
    close: () => closing ??= closeAll(),
  };
}

function listen(
  address: ListenAddress,
  handler: Handler,
  tls: ServeConfig["tls"],
  deadlines: ReadDeadlines,
  metrics: ServiceMetrics,
): { server: HttpListener; url: string } {
  const server = serveWithDeadlines({
    hostname: address.hostname,
    port: address.port,
    tls,
    deadlines,
    onError: (error) => {
      // Also what an answer's stream fails with once its head is sent (an export).
      if (error instanceof ServerStoppingError) log("info", error.message);
      else logError(error);
      return new Response("internal error", { status: 500 });
    },
    onCut: (phase) => metrics.connectionsCut.inc({ phase }),
  }, handler);
  const addr = server.addr;
  const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
  return { server, url: `${tls ? "https" : "http"}://${host}:${addr.port}` };
}

function fileSizes(
  dir: string,
  embedded: boolean,
): { labels: Record<string, string>; value: number }[] {
  const files = Object.entries(dataPaths(dir)).filter(([name]) => embedded || name === "analytics");
  return files.flatMap(([name, path]) => {
    let size = 0;
    for (const suffix of ["", "-wal"]) {
      try {
        size += Deno.statSync(path + suffix).size;
      } catch {
        // A file that does not exist yet weighs nothing.
      }
    }
    return [{ labels: { file: name }, value: size }];
  });
}
