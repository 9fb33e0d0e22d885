/**
 * `serve` configuration from flags and `AGENT_TELEMETRY_*` environment
 * variables, validated with zod before anything is created. One table,
 * {@link SERVE_SETTINGS}, names each setting's flag, variable, placeholder and
 * description: the parser, the validation messages and `serve --help` are all
 * built from it, so help cannot drift from behaviour.
 *
 * @module
 */
import { z } from "zod";
import { UserInputError } from "./errors.ts";
import type { LogLevel } from "./log.ts";

/** A configuration problem: one clear line, exit code 2. */
export class ConfigError extends UserInputError {}

// Validators say only what they expected; `resolveServeConfig` adds what was
// invalid, the value and where it came from (flag or environment variable).
const LISTEN_FORMAT = "HOST:PORT with a port from 0 to 65535";

const hostPort = z.string().transform((value, ctx) => {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(value);
  const port = match ? Number(match[2]) : NaN;
  if (!match || !Number.isInteger(port) || port < 0 || port > 65535) {
    ctx.addIssue({ code: "custom", message: `expected ${LISTEN_FORMAT}` });
    return z.NEVER;
  }
  return { hostname: match[1]!.replace(/^\[|\]$/g, ""), port };
});

/** A listen address, or `off` for a listener that may be turned off. */
const hostPortOrOff = z.string().transform((value, ctx) => {
  if (value.trim().toLowerCase() === "off") return "off" as const;
  const parsed = hostPort.safeParse(value);
  if (!parsed.success) {
    ctx.addIssue({ code: "custom", message: `expected ${LISTEN_FORMAT}, or off` });
    return z.NEVER;
  }
  return parsed.data;
});

/** A whole number of `unit` from `min` up. */
const wholeNumber = (unit: string, min = 1) =>
  z.union([z.string(), z.number()]).transform((value, ctx) => {
    const number = typeof value === "string" && value.trim() === "" ? NaN : Number(value);
    if (!Number.isSafeInteger(number) || number < min) {
      ctx.addIssue({
        code: "custom",
        message: `expected a whole number of ${unit}, at least ${min}`,
      });
      return z.NEVER;
    }
    return number;
  });

const SWITCH_ON = ["1", "true", "yes", "on"];
const SWITCH_OFF = ["0", "false", "no", "off", ""];

/** A switch: a flag without value, or an environment variable such as `1` or `false`. */
const onOff = z.union([z.boolean(), z.string()]).transform((value, ctx) => {
  if (typeof value === "boolean") return value;
  const word = value.trim().toLowerCase();
  if (SWITCH_ON.includes(word)) return true;
  if (SWITCH_OFF.includes(word)) return false;
  ctx.addIssue({
    code: "custom",
    message: `expected ${SWITCH_ON.slice(0, -1).join(", ")} or ${SWITCH_ON.at(-1)} to turn it on; ${
      SWITCH_OFF.filter(Boolean).join(", ")
    } or empty to turn it off`,
  });
  return z.NEVER;
});

const databaseUrl = z.string().refine((value) => /^postgres(ql)?:\/\/\S+$/.test(value), {
  error: "expected postgres://USER@HOST:PORT/DB",
});

const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
const MIN_METRICS_TOKEN = 16;
const MIN_RETENTION_DAYS = 90;

/** The resource attributes kept per session when `--dimension` is not given (docs/api.md §4.22). */
export const DEFAULT_DIMENSION_KEYS: readonly string[] = [
  "team.id",
  "department",
  "cost_center",
  "repository",
];
/** The bounds of dimensions (docs/api.md §4.22). */
export const DIMENSION_LIMITS = {
  /** Keys `--dimension` may name. */
  keys: 20,
  /** Characters of a value; a longer value is dropped and counted. */
  valueChars: 256,
  /** Distinct values of one key per organization; a further value is dropped and counted. */
  valuesPerKey: 1000,
} as const;
/** A dimension key, 1 to 64 characters: it must also survive `dim.<key>=` in a query string. */
export const DIMENSION_KEY_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/** `--dimension`: comma-separated keys (the flag may repeat); `none` or empty keeps none. */
const dimensionKeys = z.string().transform((value, ctx) => {
  const keys = [
    ...new Set(value.split(",").map((key) => key.trim()).filter((key) => key !== "")),
  ];
  if (keys.length === 1 && keys[0]!.toLowerCase() === "none") return [];
  const bad = keys.find((key) => !DIMENSION_KEY_PATTERN.test(key));
  if (bad !== undefined || keys.length > DIMENSION_LIMITS.keys) {
    ctx.addIssue({
      code: "custom",
      message:
        `expected at most ${DIMENSION_LIMITS.keys} keys of 1 to 64 letters, digits, ".", "_" or "-"${
          bad === undefined ? "" : `; got ${JSON.stringify(bad)}`
        }`,
    });
    return z.NEVER;
  }
  return keys;
});

const rawConfig = z.object({
  data: z.string().min(1, { error: "expected a directory path" }).default("./data"),
  database: databaseUrl.optional(),
  listen: hostPort.optional(),
  ingestListen: hostPort.optional(),
  grpcListen: hostPortOrOff.optional(),
  metricsToken: z.string().min(MIN_METRICS_TOKEN, {
    error: (issue) =>
      `expected at least ${MIN_METRICS_TOKEN} characters, so that it cannot be guessed; got ${
        String(issue.input).length
      }`,
  }).optional(),
  tlsCert: z.string().optional(),
  tlsKey: z.string().optional(),
  queryTimeoutMs: wholeNumber("milliseconds").default(30000),
  ingestMaxBytes: wholeNumber("bytes").default(16 * 1024 * 1024),
  readerThreads: wholeNumber("threads").default(2),
  maxQueuedQueries: wholeNumber("queries").default(256),
  keepSecrets: onOff.default(false),
  readOnly: onOff.default(false),
  allowEmptyStore: onOff.default(false),
  // At least 90 days, so that every insight window stays whole.
  retentionDays: wholeNumber("days", MIN_RETENTION_DAYS).default(400),
  maxDiskBytes: wholeNumber("bytes").optional(),
  logLevel: z.enum(LOG_LEVELS, { error: `allowed: ${LOG_LEVELS.join(", ")}` }).default("info"),
  dimension: dimensionKeys.default([...DEFAULT_DIMENSION_KEYS]),
});

/** A key of the `serve` configuration (`queryTimeoutMs`). */
export type ServeSettingKey = keyof z.input<typeof rawConfig>;

/** How one `serve` setting is given and described. */
export interface ServeSetting {
  /** Flag name without dashes: `query-timeout-ms`. */
  flag: string;
  /** Environment variable read when the flag is absent. */
  env: string;
  /** Placeholder of the value in help (`N`, `DIR`); absent for a switch (a flag without value). */
  value?: string;
  /** What an error calls it: `Invalid retention: …`. */
  what: string;
  description: string;
  /** The default in words, where it is not one value (it depends on TLS, or is off). */
  defaultNote?: string;
  /** Never echo the value in an error (a token). */
  secret?: boolean;
  /** The flag may repeat; its values are joined with commas. */
  repeatable?: boolean;
}

/**
 * Every setting of `serve`, in the order help lists them. Typed by the
 * configuration's keys, so a setting without its flag, variable and
 * description does not compile.
 */
export const SERVE_SETTINGS: Readonly<Record<ServeSettingKey, ServeSetting>> = {
  data: {
    flag: "data",
    env: "AGENT_TELEMETRY_DATA",
    value: "DIR",
    what: "data directory",
    description: "data directory: keys.db, telemetry.db, analytics.duckdb (created when missing)",
  },
  database: {
    flag: "database",
    env: "AGENT_TELEMETRY_DATABASE_URL",
    value: "URL",
    what: "database URL",
    description: "PostgreSQL store shared by several nodes (postgres://USER@HOST:PORT/DB)",
    defaultNote: "off: the embedded SQLite files of --data",
  },
  listen: {
    flag: "listen",
    env: "AGENT_TELEMETRY_LISTEN",
    value: "HOST:PORT",
    what: "listen address",
    description: "query API listener",
    defaultNote: "127.0.0.1:8080; 0.0.0.0:443 with TLS",
  },
  ingestListen: {
    flag: "ingest-listen",
    env: "AGENT_TELEMETRY_INGEST_LISTEN",
    value: "HOST:PORT",
    what: "listen address",
    description: "OTLP/HTTP ingest listener (and /metrics)",
    defaultNote: "127.0.0.1:4318; 0.0.0.0:4318 with TLS",
  },
  grpcListen: {
    flag: "grpc-listen",
    env: "AGENT_TELEMETRY_GRPC_LISTEN",
    value: "HOST:PORT|off",
    what: "listen address",
    description: "OTLP/gRPC ingest listener, or off",
    defaultNote: "127.0.0.1:4317; 0.0.0.0:4317 with TLS",
  },
  metricsToken: {
    flag: "metrics-token",
    env: "AGENT_TELEMETRY_METRICS_TOKEN",
    value: "TOKEN",
    what: "metrics token",
    description:
      `bearer token for /metrics on the ingest listener (at least ${MIN_METRICS_TOKEN} characters)`,
    defaultNote: "none: open on a loopback ingest listener, else refused",
    secret: true,
  },
  tlsCert: {
    flag: "tls-cert",
    env: "AGENT_TELEMETRY_TLS_CERT",
    value: "FILE",
    what: "TLS certificate file",
    description: "PEM certificate (chain) for every listener; needs --tls-key",
    defaultNote: "off: plain HTTP",
  },
  tlsKey: {
    flag: "tls-key",
    env: "AGENT_TELEMETRY_TLS_KEY",
    value: "FILE",
    what: "TLS key file",
    description: "PEM private key of --tls-cert",
    defaultNote: "off",
  },
  queryTimeoutMs: {
    flag: "query-timeout-ms",
    env: "AGENT_TELEMETRY_QUERY_TIMEOUT_MS",
    value: "N",
    what: "query timeout",
    description: "a query running longer is stopped and answered 500 internal",
  },
  ingestMaxBytes: {
    flag: "ingest-max-bytes",
    env: "AGENT_TELEMETRY_INGEST_MAX_BYTES",
    value: "N",
    what: "ingest size cap",
    description: "largest export body after decompression; larger ones get 413",
  },
  readerThreads: {
    flag: "reader-threads",
    env: "AGENT_TELEMETRY_READER_THREADS",
    value: "N",
    what: "reader thread count",
    description: "threads running list and detail queries off the event loop",
  },
  maxQueuedQueries: {
    flag: "max-queued-queries",
    env: "AGENT_TELEMETRY_MAX_QUEUED_QUERIES",
    value: "N",
    what: "query queue length",
    description: "queries waiting for a reader thread; past it 503 overloaded",
  },
  keepSecrets: {
    flag: "keep-secrets",
    env: "AGENT_TELEMETRY_KEEP_SECRETS",
    what: "keep-secrets switch",
    description: "store detected secrets as sent instead of [REDACTED:<kind>]",
  },
  readOnly: {
    flag: "readonly",
    env: "AGENT_TELEMETRY_READONLY",
    what: "read-only switch",
    description: "serve queries only and refuse telemetry (read-only media too)",
  },
  allowEmptyStore: {
    flag: "allow-empty-store",
    env: "AGENT_TELEMETRY_ALLOW_EMPTY_STORE",
    what: "allow-empty-store switch",
    description: "start although keys.db is empty or telemetry.db missing while data existed",
  },
  logLevel: {
    flag: "log-level",
    env: "AGENT_TELEMETRY_LOG_LEVEL",
    value: "LEVEL",
    what: "log level",
    description: `JSON log lines on stderr from this level up: ${LOG_LEVELS.join(", ")}`,
  },
  dimension: {
    flag: "dimension",
    env: "AGENT_TELEMETRY_DIMENSIONS",
    value: "KEY",
    what: "dimension keys",
    description:
      "resource attribute kept per session for dim.<key> filters (repeatable or comma-separated; none for none)",
    repeatable: true,
  },
  retentionDays: {
    flag: "retention-days",
    env: "AGENT_TELEMETRY_RETENTION_DAYS",
    value: "N",
    what: "retention",
    description: `days of telemetry kept, at least ${MIN_RETENTION_DAYS}`,
  },
  maxDiskBytes: {
    flag: "max-disk-bytes",
    env: "AGENT_TELEMETRY_MAX_DISK_BYTES",
    value: "N",
    what: "disk cap",
    description: "delete the oldest days while telemetry.db is larger (embedded store only)",
    defaultNote: "off",
  },
};

/**
 * A setting's default as help shows it: its note, else the value validation
 * supplies when nothing is given (the same schema, so they cannot differ).
 */
export function serveSettingDefault(key: ServeSettingKey): string | undefined {
  const note = SERVE_SETTINGS[key].defaultNote;
  if (note !== undefined) return note;
  const fallback = rawConfig.shape[key].safeParse(undefined);
  if (!fallback.success || fallback.data === undefined) return undefined;
  return typeof fallback.data === "boolean"
    ? (fallback.data ? "on" : "off")
    : String(fallback.data);
}

/** A listen address. */
export interface ListenAddress {
  hostname: string;
  port: number;
}

/** The validated configuration of `serve`. */
export interface ServeConfig {
  dataDir: string;
  /** PostgreSQL URL of the shared store (docs/design.md §8), or null for the embedded SQLite. */
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
  /** The resource attributes kept per session (`--dimension`; docs/api.md §4.22). */
  dimensionKeys: readonly string[];
}

/** Flag values as parsed from the command line (strings, booleans). */
export type ServeFlags = Partial<Record<ServeSettingKey, string | boolean>>;

/** Flags win over environment variables, which win over defaults. */
export function resolveServeConfig(
  flags: ServeFlags,
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): ServeConfig {
  const merged: Record<string, unknown> = {};
  const sources: Partial<Record<ServeSettingKey, string>> = {};
  for (const [key, setting] of settingEntries()) {
    const fromFlag = flags[key];
    const value = fromFlag ?? env(setting.env);
    if (value === undefined) continue;
    merged[key] = value;
    sources[key] = fromFlag !== undefined ? `--${setting.flag}` : setting.env;
  }
  /** Where a setting came from, or both ways of giving it when it was not given. */
  const sourceOf = (key: ServeSettingKey) =>
    sources[key] ?? `--${SERVE_SETTINGS[key].flag} (or ${SERVE_SETTINGS[key].env})`;
  const parsed = rawConfig.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue?.path[0] as ServeSettingKey | undefined;
    if (issue === undefined || key === undefined || !(key in SERVE_SETTINGS)) {
      throw new ConfigError(issue?.message ?? "Invalid configuration");
    }
    const setting = SERVE_SETTINGS[key];
    const shown = setting.secret ? "" : `: ${shownValue(merged[key])}`;
    throw new ConfigError(
      `Invalid ${setting.what}${shown} from ${sourceOf(key)} (${issue.message})`,
    );
  }
  const raw = parsed.data;
  if ((raw.tlsCert === undefined) !== (raw.tlsKey === undefined)) {
    const missing = raw.tlsCert === undefined ? "tlsCert" : "tlsKey";
    throw new ConfigError(
      `TLS needs both --tls-cert and --tls-key: ${sourceOf(missing)} is not set`,
    );
  }
  const tls = raw.tlsCert !== undefined && raw.tlsKey !== undefined
    ? {
      cert: readPem(raw.tlsCert, "certificate", sourceOf("tlsCert")),
      key: readPem(raw.tlsKey, "key", sourceOf("tlsKey")),
    }
    : null;
  if (raw.database !== undefined && raw.maxDiskBytes !== undefined) {
    throw new ConfigError(
      `${sourceOf("maxDiskBytes")} caps the embedded store only; with ${
        sourceOf("database")
      }, size PostgreSQL's disk and use --retention-days`,
    );
  }
  if (!raw.readOnly || raw.database !== undefined) checkDataDirWritable(raw.data, sourceOf("data"));
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
    dimensionKeys: raw.dimension,
  };
}

/** The settings as `[key, setting]` pairs, in table order. */
export function settingEntries(): [ServeSettingKey, ServeSetting][] {
  return Object.entries(SERVE_SETTINGS) as [ServeSettingKey, ServeSetting][];
}

/** A value quoted for an error line; a database URL's password is hidden. */
function shownValue(value: unknown): string {
  return JSON.stringify(
    String(value).replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/]*:)[^@/]*@/i, "$1***@"),
  );
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

function readPem(path: string, what: string, source: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch (error) {
    throw new ConfigError(
      `Cannot read TLS ${what} file: "${path}" from ${source} (${describe(error)})`,
    );
  }
}

/**
 * Fails unless `dir` is (or can be created as) a writable directory, without
 * creating anything: an existing one is probed with a file that is removed
 * at once; a missing one needs a writable existing ancestor.
 */
export function checkDataDirWritable(dir: string, source = "--data"): void {
  let existing = dir;
  for (;;) {
    try {
      const info = Deno.statSync(existing);
      if (!info.isDirectory) {
        throw new ConfigError(`Data directory is not a directory: "${existing}" from ${source}`);
      }
      break;
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      if (error instanceof Deno.errors.NotADirectory) {
        throw new ConfigError(
          `Data directory is not a directory: "${dir}" from ${source} (a parent is a file)`,
        );
      }
      if (!(error instanceof Deno.errors.NotFound)) {
        throw new ConfigError(
          `Cannot use data directory: "${dir}" from ${source} (${describe(error)})`,
        );
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
    throw new ConfigError(
      `Data directory is not writable: "${dir}" from ${source} (${describe(error)})`,
    );
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
