/**
 * What every PostgreSQL write transaction of the telemetry store shares:
 * session locks in one global order, `seq` values from the sequence, and
 * retries of a transaction PostgreSQL aborted.
 *
 * @module
 */
import ingestSql from "../../../sql/postgres/ingest.sql" with { type: "text" };
import retentionSql from "../../../sql/postgres/retention.sql" with { type: "text" };
import { namedSql, parseNamedSql } from "../named_sql.ts";
import { sessionKey } from "../row_ids.ts";
import { type ColumnKind, withColumnLists } from "../table_columns.ts";
import { isRetryable, type PgParam, type Sql, type TransactionSql } from "./client.ts";

/** The array type of a column kind, as `unnest` takes its parameters. */
const ARRAY_TYPES: Record<ColumnKind, string> = {
  "text": "text[]",
  "text?": "text[]",
  "int": "bigint[]",
  "int?": "bigint[]",
  "int64": "bigint[]",
  "int64?": "bigint[]",
  "real?": "float8[]",
};

const statements = {
  ...withColumnLists(
    parseNamedSql(ingestSql),
    (position, kind) => `$${position}::${ARRAY_TYPES[kind]}`,
  ),
  ...parseNamedSql(retentionSql),
};

/**
 * Runs a named statement of `sql/postgres/{ingest,retention}.sql`, prepared
 * per connection. It is sent at once, so statements started one after the
 * other reach the server in that order (pipelined).
 */
export function run<T = Record<string, unknown>>(
  sql: Sql | TransactionSql,
  name: string,
  params: readonly (PgParam | PgParam[])[],
): Promise<T[]> {
  const query = sql.unsafe(namedSql(statements, name), params as never[], { prepare: true });
  return query.execute() as unknown as Promise<T[]>;
}

/**
 * Advisory locks lie in one key space with the migrations' lock (a small
 * number): the sessions' keys start at 2^52, clear of it.
 */
const SESSION_LOCKS = 2 ** 52;

/**
 * Locks sessions until the transaction ends. Every writer that changes a
 * session's rows (ingest, retention, rescan) holds its lock first, so what it
 * read stays current; taking the locks in ascending key order keeps writers
 * from deadlocking. Two sessions may share a key: they then take turns.
 */
export async function lockSessions(
  tx: TransactionSql,
  sessions: Iterable<readonly [orgId: string, sessionId: string]>,
): Promise<void> {
  const keys = new Set<number>();
  for (const [orgId, sessionId] of sessions) {
    keys.add(SESSION_LOCKS + parseInt(sessionKey(orgId, sessionId), 16));
  }
  if (keys.size === 0) return;
  await run(tx, "lock_sessions", [[...keys].sort((a, b) => a - b)]);
}

/** `count` new values of the telemetry sequence, ascending. */
export async function reserveSeqs(tx: TransactionSql, count: number): Promise<number[]> {
  if (count === 0) return [];
  const rows = await run<{ seq: number }>(tx, "reserve_seqs", [count]);
  return rows.map((row) => row.seq);
}

const ATTEMPTS = 5;
const UNIQUE_VIOLATION = "23505";

/**
 * Runs a transaction again while PostgreSQL aborts it for a deadlock or a
 * serialization failure, or a row it inserts appeared meanwhile (written by
 * something that does not take the session locks): each attempt reads afresh.
 */
export async function withRetries<T>(transaction: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await transaction();
    } catch (error) {
      const code = (error as { code?: string } | null)?.code;
      if (attempt >= ATTEMPTS || !(isRetryable(error) || code === UNIQUE_VIOLATION)) throw error;
      await new Promise((resolve) => setTimeout(resolve, attempt * 10 * (1 + Math.random())));
    }
  }
}
