/**
 * The read side of the PostgreSQL telemetry store (docs/design.md §8): each batch of
 * statements runs in one read-only REPEATABLE READ transaction (one snapshot,
 * as a SQLite read transaction gives), each statement under the query time
 * limit as `statement_timeout`, with as many batches at once as the pool
 * allows and a bounded queue behind them, like the SQLite `ReaderPool`.
 *
 * @module
 */
import postgresQueriesSql from "../../../sql/postgres/queries.sql" with { type: "text" };
import { QueryFailedError, QueryQueueFullError, QueryTimeoutError } from "../../errors.ts";
import type { TelemetryReader } from "../stores.ts";
import {
  type ReadStatement,
  type TelemetryQueries,
  telemetryQueries,
} from "../telemetry_queries.ts";
import { numberPlaceholders, type Sql, type TransactionSql } from "./client.ts";

/** The read statements of the PostgreSQL store. */
export const postgresQueries: TelemetryQueries = telemetryQueries(postgresQueriesSql);

/** Options of {@link PgReader}. */
export interface PgReaderOptions {
  /** Longest any one statement may run, ms. */
  timeoutMs: number;
  /** Batches running at once (at most the pool's connections). */
  maxConcurrent: number;
  /** Batches allowed to wait; past it, reads fail with {@link QueryQueueFullError}. */
  maxQueued?: number;
}

/** SQLSTATE `query_canceled`: what `statement_timeout` raises. */
const QUERY_CANCELED = "57014";
/** Statement texts kept converted; past it the cache starts over (team filters vary in length). */
const MAX_CACHED_TEXTS = 1024;
/**
 * Distinct statement texts run as prepared statements: each is parsed once per
 * connection, and after five executions PostgreSQL may reuse a generic plan
 * (a list's planning took 1.85 ms of its 9 ms at 1M). Past this, texts run
 * unprepared, so that team filters of every length cannot grow each
 * connection's statements without end.
 */
const MAX_PREPARED_TEXTS = 256;

/** Runs read batches on a connection pool it does not own. */
export class PgReader implements TelemetryReader {
  readonly queries: TelemetryQueries = postgresQueries;
  readonly #sql: Sql;
  readonly #texts = new Map<string, string>();
  readonly #prepared = new Set<string>();
  readonly #options: PgReaderOptions;
  readonly #waiting: { start: () => void; fail: (error: Error) => void }[] = [];
  #running = 0;
  #closed = false;

  constructor(sql: Sql, options: PgReaderOptions) {
    this.#sql = sql;
    this.#options = options;
  }

  /** Runs the statements in one snapshot; resolves with one row array per statement. */
  async read(statements: ReadStatement[]): Promise<unknown[][]> {
    await this.#acquire();
    try {
      return await this.#run(statements);
    } catch (error) {
      if ((error as { code?: string } | null)?.code === QUERY_CANCELED) {
        throw new QueryTimeoutError("Query time limit exceeded");
      }
      throw error;
    } finally {
      this.#release();
    }
  }

  /** Stops taking reads and fails those waiting; running ones finish. The pool stays open. */
  close(): void {
    this.#closed = true;
    for (const waiter of this.#waiting.splice(0)) {
      waiter.fail(new QueryFailedError("Reader is closed"));
    }
  }

  #acquire(): Promise<void> {
    if (this.#closed) return Promise.reject(new QueryFailedError("Reader is closed"));
    if (this.#running < this.#options.maxConcurrent) {
      this.#running++;
      return Promise.resolve();
    }
    if (this.#waiting.length >= (this.#options.maxQueued ?? 256)) {
      return Promise.reject(new QueryQueueFullError("Too many queries waiting"));
    }
    return new Promise((start, fail) => this.#waiting.push({ start, fail }));
  }

  /** Hands the finished batch's turn to the next waiting one. */
  #release(): void {
    const next = this.#waiting.shift();
    if (next) next.start();
    else this.#running--;
  }

  /**
   * The statement with `$n` placeholders, converted once per distinct text:
   * the builders give a few hundred texts (filter combinations, cursors), and
   * every list request would otherwise scan its SQL again.
   */
  #numbered(sql: string): string {
    let text = this.#texts.get(sql);
    if (text === undefined) {
      if (this.#texts.size >= MAX_CACHED_TEXTS) this.#texts.clear();
      text = numberPlaceholders(sql);
      this.#texts.set(sql, text);
    }
    return text;
  }

  /** Whether `text` runs as a prepared statement (see {@link MAX_PREPARED_TEXTS}). */
  #prepares(text: string): boolean {
    if (this.#prepared.has(text)) return true;
    if (this.#prepared.size >= MAX_PREPARED_TEXTS) return false;
    this.#prepared.add(text);
    return true;
  }

  #run(statements: ReadStatement[]): Promise<unknown[][]> {
    const timeoutMs = Math.max(1, Math.trunc(this.#options.timeoutMs));
    return this.#sql.begin(
      "ISOLATION LEVEL REPEATABLE READ READ ONLY",
      async (tx: TransactionSql) => {
        // Pipelined: the statements go out together, one round trip for the batch.
        const [, ...results] = await Promise.all([
          tx.unsafe(`SET LOCAL statement_timeout = ${timeoutMs}`),
          ...statements.map(({ sql, params }) => {
            const text = this.#numbered(sql);
            return tx.unsafe(text, params, { prepare: this.#prepares(text) });
          }),
        ]);
        return results.map((rows) => Array.from(rows));
      },
    ) as Promise<unknown[][]>;
  }
}
