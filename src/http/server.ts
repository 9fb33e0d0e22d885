/**
 * `serve`: opens the data directory and runs the query and ingest listeners
 * until closed. The only place that calls `Deno.serve`.
 *
 * @module
 */
import type { ApiHandler } from "../api/context.ts";
import type { ListenAddress, ServeConfig } from "../config.ts";
import { announce, log, logError } from "../log.ts";
import { type KeyVerifier } from "../store/keys.ts";
import { openDataDir } from "../store/data_dir.ts";
import { ReaderPool } from "../store/reader.ts";
import { VERSION } from "../version.ts";
import { createIngestApp } from "./ingest_app.ts";
import { createQueryApp } from "./query_app.ts";
import type { Route } from "./router.ts";

/** A running server. */
export interface RunningServer {
  queryUrl: string;
  ingestUrl: string;
  /** Stops accepting, finishes in-flight requests, closes the stores. */
  close(): Promise<void>;
  finished: Promise<void>;
}

/** Replacements for tests: e.g. a key store that fails. */
export interface ServeOverrides {
  keys?: (real: KeyVerifier) => KeyVerifier;
  routes?: Route<ApiHandler>[];
  quiet?: boolean;
}

/** Opens the stores in `config.dataDir` and starts both listeners. */
export async function startServer(
  config: ServeConfig,
  overrides: ServeOverrides = {},
): Promise<RunningServer> {
  const dataDir = openDataDir(config.dataDir, { redactSecrets: !config.keepSecrets });
  const keys = overrides.keys ? overrides.keys(dataDir.keys) : dataDir.keys;
  const reader = new ReaderPool({
    path: dataDir.telemetryPath,
    threads: config.readerThreads,
    timeoutMs: config.queryTimeoutMs,
  });
  const queryApp = createQueryApp({
    keys,
    reader,
    version: VERSION,
    logError,
    ...(overrides.routes ? { routes: overrides.routes } : {}),
  });
  const ingestApp = createIngestApp({
    keys,
    writer: dataDir.writer,
    maxBytes: config.ingestMaxBytes,
    logError,
  });
  const tls = config.tls ? { cert: config.tls.cert, key: config.tls.key } : {};
  const scheme = config.tls ? "https" : "http";
  const listen = (address: ListenAddress, handler: (r: Request) => Promise<Response>) => {
    const { promise, resolve } = Promise.withResolvers<Deno.NetAddr>();
    const server = Deno.serve({
      hostname: address.hostname,
      port: address.port,
      ...tls,
      onListen: (addr) => resolve(addr as Deno.NetAddr),
      onError: (error) => {
        logError(error);
        return new Response("internal error", { status: 500 });
      },
    }, handler);
    return { server, ready: promise };
  };
  const query = listen(config.listen, queryApp);
  let ingest: ReturnType<typeof listen>;
  try {
    ingest = listen(config.ingestListen, ingestApp);
  } catch (error) {
    await query.server.shutdown();
    reader.close();
    dataDir.close();
    throw error;
  }
  const [queryAddr, ingestAddr] = await Promise.all([query.ready, ingest.ready]);
  const urlOf = (addr: Deno.NetAddr) => {
    const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
    return `${scheme}://${host}:${addr.port}`;
  };
  const queryUrl = urlOf(queryAddr);
  const ingestUrl = urlOf(ingestAddr);
  if (!overrides.quiet) {
    if (!config.tls) {
      log("warn", "TLS is off: serving plain HTTP; pass --tls-cert and --tls-key in production");
    }
    announce(`query API listening on ${queryUrl}`);
    announce(`OTLP ingest listening on ${ingestUrl}`);
  }
  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      await Promise.all([query.server.shutdown(), ingest.server.shutdown()]);
      reader.close();
      dataDir.close();
    })();
    return closing;
  };
  const finished = Promise.all([query.server.finished, ingest.server.finished]).then(() => {});
  return { queryUrl, ingestUrl, close, finished };
}
