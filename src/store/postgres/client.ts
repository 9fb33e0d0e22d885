/**
 * Connections to PostgreSQL (docs/design.md §8) through `npm:postgres`: one pool per
 * process, BIGINT columns read as numbers (every one we store — times,
 * counts, seqs — is far below 2^53), the query time limit as
 * `statement_timeout`, and the `?` placeholders of our SQL files numbered
 * for PostgreSQL.
 *
 * @module
 */
import postgres from "postgres";
import { StoreUnavailableError, type UnavailableReason } from "../../errors.ts";

/** A pool of connections (or, inside `begin`, one transaction's connection). */
export type Sql = postgres.Sql<Record<string, never>>;
/** One transaction's connection. */
export type TransactionSql = postgres.TransactionSql<Record<string, never>>;
/** Values our statements bind. */
export type PgParam = string | number | boolean | null;

/** Options of {@link connectPostgres}. */
export interface PostgresOptions {
  /** Most connections in this process's pool. */
  max?: number;
  /** `statement_timeout` of every connection, ms (0: none). */
  statementTimeoutMs?: number;
  /** Shown in `pg_stat_activity`. */
  applicationName?: string;
}

const INT8_OID = 20;

/** Opens a lazily connecting pool for a `postgres://` URL. */
export function connectPostgres(url: string, options: PostgresOptions = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    connection: {
      application_name: options.applicationName ?? "agent-telemetry",
      statement_timeout: options.statementTimeoutMs ?? 0,
    },
    types: {
      int8: {
        to: INT8_OID,
        from: [INT8_OID],
        serialize: (value: number | bigint) => String(value),
        parse: (value: string) => Number(value),
      },
    },
  }) as unknown as Sql;
}

/**
 * Rewrites positional `?` placeholders as `$1, $2, …` (skipping quoted text
 * and comments), so one statement builder serves both engines.
 */
export function numberPlaceholders(sql: string): string {
  let out = "";
  let n = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      const end = sql.indexOf(c, i + 1);
      const stop = end === -1 ? sql.length : end + 1;
      out += sql.slice(i, stop);
      i = stop;
    } else if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      const stop = end === -1 ? sql.length : end;
      out += sql.slice(i, stop);
      i = stop;
    } else if (c === "?") {
      out += `$${++n}`;
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Whether a PostgreSQL error is one a retried transaction gets past (deadlock, serialization). */
export function isRetryable(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code === "40P01" || code === "40001";
}

/**
 * Whether an error means the database could not be reached or refused the
 * connection. EPIPE: a write on a connection the server had just ended (a
 * terminated backend) fails in the socket, not in the driver.
 */
export function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code ?? "";
  return /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|ENOTFOUND|CONNECT_TIMEOUT|CONNECTION_|08|57P0)/
    .test(code);
}

/** SQLSTATEs of a write refused for a reason that passes, by reason. */
const UNAVAILABLE_STATES: Record<string, UnavailableReason> = {
  "53100": "full", // disk_full
  "53200": "busy", // out_of_memory
  "53300": "busy", // too_many_connections
  "25006": "readOnly", // read_only_sql_transaction: a standby, or a database made read-only
  "58030": "io", // io_error
};

/**
 * The neutral {@link StoreUnavailableError} for a PostgreSQL failure that
 * passes (out of reach, a deadlock past the retries, disk full, read-only),
 * or null for any other error. Nothing of the failed transaction was stored.
 */
export function pgUnavailable(error: unknown): StoreUnavailableError | null {
  if (error instanceof StoreUnavailableError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const detail = error instanceof Error ? error.message : String(error);
  if (isUnavailable(error)) return new StoreUnavailableError("unreachable", detail);
  if (isRetryable(error)) return new StoreUnavailableError("busy", detail);
  const reason = typeof code === "string" ? UNAVAILABLE_STATES[code] : undefined;
  return reason === undefined ? null : new StoreUnavailableError(reason, detail);
}
