/**
 * `serve`: validated configuration, both listeners, graceful shutdown on
 * SIGINT/SIGTERM.
 *
 * @module
 */
import { type ListenAddress, resolveServeConfig, type ServeFlags } from "../config.ts";
import { UserInputError } from "../errors.ts";
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
  "allow-empty-store": { type: "boolean" },
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
    "allow-empty-store": "allowEmptyStore",
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
  requirePortFree(config.listen, "--listen");
  requirePortFree(config.ingestListen, "--ingest-listen");
  const server = await startServer(config);
  await waitForSignal();
  log("info", "shutting down: finishing in-flight requests");
  await server.close();
  log("info", "stopped");
}

/**
 * Fails with one line when a fixed port cannot be bound (in use, not
 * permitted), before anything is opened or created.
 */
function requirePortFree(address: ListenAddress, flag: string): void {
  if (address.port === 0) return;
  let listener: Deno.Listener;
  try {
    listener = Deno.listen({ hostname: address.hostname, port: address.port });
  } catch (error) {
    const shown = address.hostname.includes(":")
      ? `[${address.hostname}]:${address.port}`
      : `${address.hostname}:${address.port}`;
    const reason = error instanceof Deno.errors.AddrInUse
      ? "already in use; stop the other process or choose another port"
      : `${error instanceof Error ? error.message : String(error)}; choose another address`;
    throw new UserInputError(`Cannot listen on "${shown}" (${flag}): ${reason}`);
  }
  listener.close();
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
