/**
 * The replica's read connections: a few DuckDB connections kept open, each
 * with its statements prepared once, so an insight pays neither a connect nor
 * a parse and plan per request (the fixed cost that dominated small windows).
 *
 * @module
 */
import {
  BIGINT,
  type DuckDBConnection,
  type DuckDBInstance,
  type DuckDBPreparedStatement,
  type DuckDBType,
  type DuckDBValue,
  LIST,
  listValue,
  VARCHAR,
} from "@duckdb/node-api";
import { QueryTimeoutError } from "../errors.ts";
import { ReplicaClosedError } from "./replica_source.ts";

/** A row as DuckDB returns it, with every BIGINT/HUGEINT turned into a number. */
export type ReplicaRow = Record<string, unknown>;

/** One read statement against the replica, with named (`$name`) parameters. */
export interface ReplicaStatement {
  sql: string;
  /** A list binds as `VARCHAR[]` (the dimension filters' sessions). */
  params: Record<string, string | bigint | readonly string[]>;
}

/**
 * Connections kept open. DuckDB runs 2 threads; a third and fourth connection
 * let short reads start while long ones run, and more would only queue inside.
 */
const POOL_SIZE = 4;

/** Prepared statements kept per connection: insights × sections, with room to spare. */
const PREPARED_PER_CONNECTION = 64;

interface PooledConnection {
  connection: DuckDBConnection;
  prepared: Map<string, DuckDBPreparedStatement>;
}

/** Read connections on one DuckDB instance; closed with it. */
export class ReadPool {
  readonly #instance: DuckDBInstance;
  readonly #idle: PooledConnection[] = [];
  readonly #busy = new Set<PooledConnection>();
  readonly #waiting: ((pooled: PooledConnection | null) => void)[] = [];
  #opened = 0;
  #closed = false;

  constructor(instance: DuckDBInstance) {
    this.#instance = instance;
  }

  /**
   * Runs `statements` and returns their rows; several statements run in one
   * transaction (one snapshot). At `deadline` (epoch ms) the running query is
   * interrupted and the read fails with {@link QueryTimeoutError}.
   */
  async read(statements: readonly ReplicaStatement[], deadline: number): Promise<ReplicaRow[][]> {
    let timedOut = false;
    let pooled: PooledConnection | null = null;
    const { promise: expired, reject: expire } = Promise.withResolvers<never>();
    expired.catch(noop);
    const timer = setTimeout(() => {
      timedOut = true;
      pooled?.connection.interrupt();
      expire(new QueryTimeoutError("Query time limit exceeded"));
    }, Math.max(0, deadline - Date.now()));
    let healthy = false;
    try {
      const acquiring = this.#acquire();
      // A connection that arrives after the deadline goes back to the pool.
      acquiring.then((late) => {
        if (timedOut && pooled === null) this.#release(late, true);
      }, noop);
      pooled = await Promise.race([acquiring, expired]);
      const check = () => {
        if (timedOut) throw new QueryTimeoutError("Query time limit exceeded");
        if (this.#closed) throw new ReplicaClosedError("Analytics replica is closed");
      };
      check();
      const { connection } = pooled;
      const inTransaction = statements.length > 1;
      if (inTransaction) await connection.run("BEGIN TRANSACTION");
      const results: ReplicaRow[][] = [];
      for (const statement of statements) {
        check();
        const prepared = await this.#prepare(pooled, statement.sql);
        prepared.bind(bindValues(statement.params), bindTypes(statement.params));
        const reader = await prepared.runAndReadAll();
        check();
        results.push(reader.getRowObjectsJS().map(plainRow));
      }
      if (inTransaction) await connection.run("COMMIT");
      healthy = true;
      return results;
    } catch (error) {
      if (timedOut) throw new QueryTimeoutError("Query time limit exceeded");
      throw error;
    } finally {
      clearTimeout(timer);
      // A connection that failed (interrupted, mid-transaction) is not reused.
      if (pooled) this.#release(pooled, healthy);
    }
  }

  /** Interrupts running reads, fails waiting ones and closes every connection. */
  close(): void {
    this.#closed = true;
    for (const pooled of this.#busy) pooled.connection.interrupt();
    for (const wake of this.#waiting.splice(0)) wake(null);
    for (const pooled of this.#idle.splice(0)) closeConnection(pooled);
  }

  /** Closes idle connections now and the others once their reads end, interrupting none. */
  retire(): void {
    this.#closed = true;
    for (const wake of this.#waiting.splice(0)) void this.#openFor(wake, true);
    for (const pooled of this.#idle.splice(0)) closeConnection(pooled);
  }

  /** Interrupts the reads running now (the replica is being healed or closed). */
  interrupt(): void {
    for (const pooled of this.#busy) pooled.connection.interrupt();
  }

  async #acquire(): Promise<PooledConnection> {
    if (this.#closed) throw new ReplicaClosedError("Analytics replica is closed");
    let pooled = this.#idle.pop() ?? null;
    if (pooled === null && this.#opened < POOL_SIZE) {
      this.#opened++;
      try {
        pooled = { connection: await this.#instance.connect(), prepared: new Map() };
      } catch (error) {
        this.#opened--;
        throw error;
      }
    }
    if (pooled === null) {
      pooled = await new Promise<PooledConnection | null>((resolve) => this.#waiting.push(resolve));
      if (pooled === null) throw new ReplicaClosedError("Analytics replica is closed");
    }
    this.#busy.add(pooled);
    return pooled;
  }

  #release(pooled: PooledConnection, healthy: boolean): void {
    this.#busy.delete(pooled);
    if (!healthy || this.#closed) {
      closeConnection(pooled);
      this.#opened--;
      const wake = this.#waiting.shift();
      // A waiter takes the freed slot and opens a connection of its own.
      if (wake) void this.#openFor(wake);
      return;
    }
    const wake = this.#waiting.shift();
    if (wake) wake(pooled);
    else this.#idle.push(pooled);
  }

  async #openFor(
    wake: (pooled: PooledConnection | null) => void,
    retiring = false,
  ): Promise<void> {
    if (this.#closed && !retiring) return wake(null);
    this.#opened++;
    try {
      wake({ connection: await this.#instance.connect(), prepared: new Map() });
    } catch {
      this.#opened--;
      wake(null);
    }
  }

  async #prepare(pooled: PooledConnection, sql: string): Promise<DuckDBPreparedStatement> {
    let prepared = pooled.prepared.get(sql);
    if (prepared === undefined) {
      if (pooled.prepared.size >= PREPARED_PER_CONNECTION) {
        for (const statement of pooled.prepared.values()) statement.destroySync();
        pooled.prepared.clear();
      }
      prepared = await pooled.connection.prepare(sql);
      pooled.prepared.set(sql, prepared);
    }
    return prepared;
  }
}

function noop(): void {}

function closeConnection(pooled: PooledConnection): void {
  try {
    // Destroys its prepared statements too.
    pooled.connection.closeSync();
  } catch {
    // Already closed with its instance.
  }
  pooled.prepared.clear();
}

/**
 * Binds bigints as BIGINT: the client would infer HUGEINT, and bucket
 * arithmetic on HUGEINT runs an order of magnitude slower.
 */
function bindTypes(params: ReplicaStatement["params"]): Record<string, DuckDBType> {
  const types: Record<string, DuckDBType> = {};
  for (const [name, value] of Object.entries(params)) {
    types[name] = typeof value === "string"
      ? VARCHAR
      : typeof value === "bigint"
      ? BIGINT
      : LIST(VARCHAR);
  }
  return types;
}

/** The values to bind: a list as a DuckDB list value. */
function bindValues(params: ReplicaStatement["params"]): Record<string, DuckDBValue> {
  const values: Record<string, DuckDBValue> = {};
  for (const [name, value] of Object.entries(params)) {
    values[name] = typeof value === "string" || typeof value === "bigint"
      ? value
      : listValue(value);
  }
  return values;
}

/** A DuckDB row with BIGINT/HUGEINT values as numbers (JSON-ready). */
function plainRow(row: Record<string, unknown>): ReplicaRow {
  const out: ReplicaRow = {};
  for (const [key, value] of Object.entries(row)) {
    out[key] = typeof value === "bigint" ? Number(value) : value;
  }
  return out;
}
