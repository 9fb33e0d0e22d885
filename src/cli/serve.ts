/**
 * `serve`: validated configuration, both listeners, graceful shutdown on
 * SIGINT/SIGTERM.
 *
 * @module
 */
import { resolveServeConfig, type ServeFlags } from "../config.ts";
import { startServer } from "../http/server.ts";
import { log } from "../log.ts";
import { parseFlags } from "./usage.ts";

const text = { type: "string" } as const;

/** Flags of `serve`, mapped to configuration keys. */
export const serveFlagSpec = {
  database: text,
  listen: text,
  "ingest-listen": text,
  "grpc-listen": text,
  "metrics-token": text,
  "tls-cert": text,
  "tls-key": text,
  "query-timeout-ms": text,
  "ingest-max-bytes": text,
  "reader-threads": text,
  "max-queued-queries": text,
  "keep-secrets": { type: "boolean" },
  readonly: { type: "boolean" },
  "log-level": text,
  "retention-days": text,
  "max-disk-bytes": text,
} as const;

/** Configuration flags out of parsed `serve` flags. */
export function serveFlags(values: Record<string, string | boolean | undefined>): ServeFlags {
  const flags: ServeFlags = {};
  const map: Record<string, keyof ServeFlags> = {
    data: "data",
    database: "database",
    listen: "listen",
    "ingest-listen": "ingestListen",
    "grpc-listen": "grpcListen",
    "metrics-token": "metricsToken",
    "tls-cert": "tlsCert",
    "tls-key": "tlsKey",
    "query-timeout-ms": "queryTimeoutMs",
    "ingest-max-bytes": "ingestMaxBytes",
    "reader-threads": "readerThreads",
    "max-queued-queries": "maxQueuedQueries",
    "keep-secrets": "keepSecrets",
    readonly: "readOnly",
    "log-level": "logLevel",
    "retention-days": "retentionDays",
    "max-disk-bytes": "maxDiskBytes",
  };
  for (const [flag, key] of Object.entries(map)) {
    const value = values[flag];
    if (value !== undefined) flags[key] = value;
  }
  return flags;
}

/** Runs the server until SIGINT or SIGTERM. */
export async function runServe(args: string[]): Promise<void> {
  const values = parseFlags(args, serveFlagSpec);
  const config = resolveServeConfig(serveFlags(values));
  const server = await startServer(config);
  await waitForSignal();
  log("info", "shutting down: finishing in-flight requests");
  await server.close();
  log("info", "stopped");
}

/** Resolves on the first SIGINT or SIGTERM. */
export function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      Deno.removeSignalListener("SIGINT", stop);
      Deno.removeSignalListener("SIGTERM", stop);
      resolve();
    };
    Deno.addSignalListener("SIGINT", stop);
    Deno.addSignalListener("SIGTERM", stop);
  });
}
