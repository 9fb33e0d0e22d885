/**
 * `serve` configuration from flags and `AGENT_TELEMETRY_*` environment
 * variables, validated with zod before anything is created.
 *
 * @module
 */
import { z } from "zod";
import { UserInputError } from "./errors.ts";
import type { LogLevel } from "./log.ts";

/** A configuration problem: one clear line, exit code 2. */
export class ConfigError extends UserInputError {
  override name = "ConfigError";
}

const hostPort = z.string().transform((value, ctx) => {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(value);
  const port = match ? Number(match[2]) : NaN;
  if (!match || !Number.isInteger(port) || port < 0 || port > 65535) {
    ctx.addIssue({
      code: "custom",
      message:
        `Invalid listen address: "${value}" (expected HOST:PORT with a port from 0 to 65535)`,
    });
    return z.NEVER;
  }
  return { hostname: match[1]!.replace(/^\[|\]$/g, ""), port };
});

/** A listen address, or `off` for a listener that may be turned off. */
const hostPortOrOff = z.string().transform((value, ctx) => {
  if (value.trim().toLowerCase() === "off") return "off" as const;
  const parsed = hostPort.safeParse(value);
  if (!parsed.success) {
    ctx.addIssue({
      code: "custom",
      message:
        `Invalid listen address: "${value}" (expected HOST:PORT with a port from 0 to 65535, or off)`,
    });
    return z.NEVER;
  }
  return parsed.data;
});

const positiveInt = (name: string) =>
  z.union([z.string(), z.number()]).transform((value, ctx) => {
    const number = Number(value);
    if (!Number.isSafeInteger(number) || number < 1) {
      ctx.addIssue({
        code: "custom",
        message: `Invalid ${name}: "${value}" (expected an integer ≥ 1)`,
      });
      return z.NEVER;
    }
    return number;
  });

const databaseUrl = z.string().refine((value) => /^postgres(ql)?:\/\/\S+$/.test(value), {
  error: (issue) =>
    `Invalid database URL: ${JSON.stringify(issue.input)} (expected postgres://USER@HOST:PORT/DB)`,
});

const rawConfig = z.object({
  data: z.string().min(1),
  database: databaseUrl.optional(),
  listen: hostPort.optional(),
  ingestListen: hostPort.optional(),
  grpcListen: hostPortOrOff.optional(),
  metricsToken: z.string().min(16, {
    error: "Invalid metrics token: at least 16 characters, so that it cannot be guessed",
  }).optional(),
  tlsCert: z.string().optional(),
  tlsKey: z.string().optional(),
  queryTimeoutMs: positiveInt("query timeout").default(30000),
  ingestMaxBytes: positiveInt("ingest size cap").default(16 * 1024 * 1024),
  readerThreads: positiveInt("reader thread count").default(2),
  maxQueuedQueries: positiveInt("query queue length").default(256),
  keepSecrets: z.boolean().default(false),
  readOnly: z.boolean().default(false),
  allowEmptyStore: z.boolean().default(false),
  retentionDays: positiveInt("retention").default(400).refine((days) => days >= 90, {
    error: "Invalid retention: at least 90 days, so that every insight window stays whole",
  }),
  maxDiskBytes: positiveInt("disk cap").optional(),
  logLevel: z.enum(["debug", "info", "warn", "error", "silent"], {
    error: (issue) =>
      `Invalid log level: ${
        JSON.stringify(issue.input)
      } (allowed: debug, info, warn, error, silent)`,
  }).default("info"),
});

/** A listen address. */
export interface ListenAddress {
  hostname: string;
  port: number;
}

/** The validated configuration of `serve`. */
export interface ServeConfig {
  dataDir: string;
  /** PostgreSQL URL of the shared store (DESIGN §8), or null for the embedded SQLite files. */
  database: string | null;
  listen: ListenAddress;
  ingestListen: ListenAddress;
  /** The OTLP/gRPC listener, or null when turned off (`--grpc-listen off`). */
  grpcListen: ListenAddress | null;
  /** Who may read the ingest listener's `/metrics` (`--metrics-token`). */
  metricsAccess: MetricsAccess;
  tls: { cert: string; key: string } | null;
  queryTimeoutMs: number;
  ingestMaxBytes: number;
  readerThreads: number;
  maxQueuedQueries: number;
  keepSecrets: boolean;
  readOnly: boolean;
  /** Start although the key store is empty or `telemetry.db` missing while data existed. */
  allowEmptyStore: boolean;
  logLevel: LogLevel;
  retentionDays: number;
  maxDiskBytes: number | null;
}

/** Flag values as parsed from the command line (strings, booleans). */
export type ServeFlags = Partial<Record<keyof z.input<typeof rawConfig>, string | boolean>>;

const ENV: Record<keyof z.input<typeof rawConfig>, string> = {
  data: "AGENT_TELEMETRY_DATA",
  database: "AGENT_TELEMETRY_DATABASE_URL",
  listen: "AGENT_TELEMETRY_LISTEN",
  ingestListen: "AGENT_TELEMETRY_INGEST_LISTEN",
  grpcListen: "AGENT_TELEMETRY_GRPC_LISTEN",
  metricsToken: "AGENT_TELEMETRY_METRICS_TOKEN",
  tlsCert: "AGENT_TELEMETRY_TLS_CERT",
  tlsKey: "AGENT_TELEMETRY_TLS_KEY",
  queryTimeoutMs: "AGENT_TELEMETRY_QUERY_TIMEOUT_MS",
  ingestMaxBytes: "AGENT_TELEMETRY_INGEST_MAX_BYTES",
  readerThreads: "AGENT_TELEMETRY_READER_THREADS",
  maxQueuedQueries: "AGENT_TELEMETRY_MAX_QUEUED_QUERIES",
  keepSecrets: "AGENT_TELEMETRY_KEEP_SECRETS",
  readOnly: "AGENT_TELEMETRY_READONLY",
  allowEmptyStore: "AGENT_TELEMETRY_ALLOW_EMPTY_STORE",
  logLevel: "AGENT_TELEMETRY_LOG_LEVEL",
  retentionDays: "AGENT_TELEMETRY_RETENTION_DAYS",
  maxDiskBytes: "AGENT_TELEMETRY_MAX_DISK_BYTES",
};

/** Flags win over environment variables, which win over defaults. */
export function resolveServeConfig(
  flags: ServeFlags,
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): ServeConfig {
  const merged: Record<string, unknown> = {};
  for (const [key, variable] of Object.entries(ENV)) {
    const value = flags[key as keyof ServeFlags] ?? env(variable);
    if (value !== undefined) merged[key] = value;
  }
  merged.data ??= "./data";
  for (const key of ["keepSecrets", "readOnly", "allowEmptyStore"]) {
    const value = merged[key];
    if (typeof value === "string") merged[key] = ["1", "true", "yes"].includes(value.toLowerCase());
  }
  const parsed = rawConfig.safeParse(merged);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues[0]?.message ?? "Invalid configuration");
  }
  const raw = parsed.data;
  if ((raw.tlsCert === undefined) !== (raw.tlsKey === undefined)) {
    throw new ConfigError("TLS needs both --tls-cert and --tls-key");
  }
  const tls = raw.tlsCert !== undefined && raw.tlsKey !== undefined
    ? { cert: readPem(raw.tlsCert, "certificate"), key: readPem(raw.tlsKey, "key") }
    : null;
  if (raw.database !== undefined && raw.maxDiskBytes !== undefined) {
    throw new ConfigError(
      "--max-disk-bytes caps the embedded store only; with --database, size PostgreSQL's disk and use --retention-days",
    );
  }
  if (!raw.readOnly || raw.database !== undefined) checkDataDirWritable(raw.data);
  const defaultHost = tls ? "0.0.0.0" : "127.0.0.1";
  return {
    dataDir: raw.data,
    database: raw.database ?? null,
    listen: raw.listen ?? { hostname: defaultHost, port: tls ? 443 : 8080 },
    ingestListen: raw.ingestListen ?? { hostname: defaultHost, port: 4318 },
    grpcListen: raw.grpcListen === "off"
      ? null
      : raw.grpcListen ?? { hostname: defaultHost, port: 4317 },
    metricsAccess: metricsAccessOf(
      raw.ingestListen ?? { hostname: defaultHost, port: 4318 },
      raw.metricsToken,
    ),
    tls,
    queryTimeoutMs: raw.queryTimeoutMs,
    ingestMaxBytes: raw.ingestMaxBytes,
    readerThreads: raw.readerThreads,
    maxQueuedQueries: raw.maxQueuedQueries,
    keepSecrets: raw.keepSecrets,
    readOnly: raw.readOnly,
    allowEmptyStore: raw.allowEmptyStore,
    logLevel: raw.logLevel,
    retentionDays: raw.retentionDays,
    maxDiskBytes: raw.maxDiskBytes ?? null,
  };
}

/**
 * Who may read `/metrics` on the ingest listener: with a token, its holder
 * (`Authorization: Bearer <token>`); without one, anyone when the listener
 * is on loopback only, else nobody — the ingest port faces the agents'
 * network, and `/metrics` tells every organization's traffic.
 */
export type MetricsAccess =
  | { kind: "open" }
  | { kind: "token"; token: string }
  | { kind: "refused" };

/** The `/metrics` access of an ingest listener on `address`, given `--metrics-token`. */
export function metricsAccessOf(address: ListenAddress, token: string | undefined): MetricsAccess {
  if (token !== undefined) return { kind: "token", token };
  return isLoopback(address.hostname) ? { kind: "open" } : { kind: "refused" };
}

/** True for an address only this machine can reach: 127.0.0.0/8, ::1, localhost. */
export function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host) ||
    /^::ffff:127(\.\d{1,3}){3}$/.test(host);
}

function readPem(path: string, what: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch (error) {
    throw new ConfigError(`Cannot read TLS ${what} file: "${path}" (${describe(error)})`);
  }
}

/**
 * Fails unless `dir` is (or can be created as) a writable directory, without
 * creating anything: an existing one is probed with a file that is removed
 * at once; a missing one needs a writable existing ancestor.
 */
export function checkDataDirWritable(dir: string): void {
  let existing = dir;
  for (;;) {
    try {
      const info = Deno.statSync(existing);
      if (!info.isDirectory) {
        throw new ConfigError(`Data directory is not a directory: "${existing}"`);
      }
      break;
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      if (error instanceof Deno.errors.NotADirectory) {
        throw new ConfigError(`Data directory is not a directory: "${dir}" (a parent is a file)`);
      }
      if (!(error instanceof Deno.errors.NotFound)) {
        throw new ConfigError(`Cannot use data directory: "${dir}" (${describe(error)})`);
      }
      const parent = parentOf(existing);
      if (parent === existing) break;
      existing = parent;
    }
  }
  const probe = `${existing}/.write-probe-${crypto.randomUUID()}`;
  try {
    Deno.writeTextFileSync(probe, "");
    Deno.removeSync(probe);
  } catch (error) {
    throw new ConfigError(`Data directory is not writable: "${dir}" (${describe(error)})`);
  }
}

function parentOf(path: string): string {
  const trimmed = path.replace(/\/+$/, "");
  const index = trimmed.lastIndexOf("/");
  if (index < 0) return ".";
  return index === 0 ? "/" : trimmed.slice(0, index);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
