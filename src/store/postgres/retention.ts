/**
 * Retention on PostgreSQL: deletes telemetry older than the retention period,
 * one organization's batch per transaction, recounting the sessions that lose
 * rows and leaving tombstones for the replicas, as on SQLite. There is no disk
 * cap: PostgreSQL's storage is the operator's to size.
 *
 * @module
 */
import type { RetentionOptions, RetentionResult } from "../stores.ts";
import type { Sql, TransactionSql } from "./client.ts";
import { columns } from "./_ingest_plan.ts";
import { lockSessions, reserveSeqs, run, withRetries } from "./_write_tx.ts";

const DAY_MS = 86_400_000;
/**
 * Most sessions one batch locks: each lock holds a slot of PostgreSQL's
 * shared lock table (64 per connection by default). Rows of further
 * sessions wait for the next batch.
 */
const MAX_SESSIONS = 1000;

interface Row {
  id: string;
  "session_id": string;
}

/** One batch's deletions. */
interface BatchResult {
  toolCalls: number;
  modelCalls: number;
  lastSeq: number;
}

/** Prunes the PostgreSQL telemetry tables by age. */
export class PgRetention {
  readonly #sql: Sql;
  readonly #options: RetentionOptions;
  #lastSeq = 0;

  constructor(sql: Sql, options: RetentionOptions) {
    this.#sql = sql;
    this.#options = options;
  }

  /** The highest `seq` a pass wrote. */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** Deletes batches until nothing is older than the retention period. */
  async run(now = Date.now()): Promise<RetentionResult> {
    const total: RetentionResult = { toolCalls: 0, modelCalls: 0, reclaimedBytes: 0 };
    const cutoff = Math.max(now - this.#options.retentionDays * DAY_MS, Number.MIN_SAFE_INTEGER);
    for (;;) {
      const orgs = await run<{ org_id: string }>(this.#sql, "organizations", []);
      let deleted = 0;
      for (const { org_id: org } of orgs) {
        const batch = await withRetries(() =>
          this.#sql.begin((tx) => this.#deleteBatch(tx, org, cutoff))
        );
        total.toolCalls += batch.toolCalls;
        total.modelCalls += batch.modelCalls;
        deleted += batch.toolCalls + batch.modelCalls;
        this.#lastSeq = Math.max(this.#lastSeq, batch.lastSeq);
        const points = await withRetries(() =>
          this.#sql.begin((tx) => this.#deleteMetricBatch(tx, org, cutoff))
        );
        deleted += points.count;
        this.#lastSeq = Math.max(this.#lastSeq, points.lastSeq);
      }
      if (deleted === 0) break;
    }
    await run(this.#sql, "delete_old_unmapped_events", [cutoff]);
    await run(this.#sql, "delete_unused_dimension_values", []);
    return total;
  }

  /** Up to a batch of one organization's metric points (whole groups) before `cutoff`. */
  async #deleteMetricBatch(
    tx: TransactionSql,
    org: string,
    cutoff: number,
  ): Promise<{ count: number; lastSeq: number }> {
    const deleted = await run<{ id: string }>(tx, "delete_old_metric_points", [
      org,
      cutoff,
      this.#options.batchSize,
    ]);
    if (deleted.length === 0) return { count: 0, lastSeq: 0 };
    const seqs = await reserveSeqs(tx, deleted.length);
    const tombstones = deleted.map((row, i) => [seqs[i]!, "metric_points", row.id]);
    await run(tx, "insert_tombstones", columns(tombstones));
    return { count: deleted.length, lastSeq: seqs.at(-1)! };
  }

  /** Up to a batch of each kind of row of one organization before `cutoff`. */
  async #deleteBatch(tx: TransactionSql, org: string, cutoff: number): Promise<BatchResult> {
    const limit = this.#options.batchSize;
    const candidates = await Promise.all([
      run<Row>(tx, "oldest_tool_calls", [org, cutoff, limit]),
      run<Row>(tx, "oldest_model_calls", [org, cutoff, limit]),
    ]);
    const sessions = new Set<string>();
    for (const row of candidates.flat()) {
      if (sessions.size === MAX_SESSIONS) break;
      sessions.add(row.session_id);
    }
    if (sessions.size === 0) return { toolCalls: 0, modelCalls: 0, lastSeq: 0 };
    const [oldCalls, oldModelCalls] = candidates.map((rows) =>
      rows.filter((row) => sessions.has(row.session_id))
    ) as [Row[], Row[]];
    const [, calls, modelCalls, seqs] = await Promise.all([
      lockSessions(tx, [...sessions].map((session) => [org, session] as const)),
      run<Row>(tx, "delete_old_tool_calls", [oldCalls.map((row) => row.id), cutoff]),
      run<Row>(tx, "delete_old_model_calls", [oldModelCalls.map((row) => row.id), cutoff]),
      reserveSeqs(tx, oldCalls.length + oldModelCalls.length + 2 * sessions.size),
    ]);
    let used = 0;
    const touched = new Set<string>();
    const tombstones = [
      ...calls.map((row) => [seqs[used++]!, "tool_calls", row.id]),
      ...modelCalls.map((row) => [seqs[used++]!, "model_calls", row.id]),
    ];
    for (const row of [...calls, ...modelCalls]) touched.add(row.session_id);
    const recounts = [...touched].map((session) => [seqs[used++]!, org, session]);
    const costs = [...touched].map((session) => [seqs[used++]!, org, session]);
    if (tombstones.length > 0) {
      await Promise.all([
        run(tx, "insert_tombstones", columns(tombstones)),
        run(tx, "recount_sessions", columns(recounts)),
        run(tx, "recount_session_costs", columns(costs)),
        run(tx, "drop_empty_sessions", [[...touched].map(() => org), [...touched]]),
        run(tx, "clear_session_actors", [[...touched].map(() => org), [...touched]]),
        run(tx, "recount_session_actors", [[...touched].map(() => org), [...touched]]),
      ]);
    }
    return {
      toolCalls: calls.length,
      modelCalls: modelCalls.length,
      lastSeq: used === 0 ? 0 : seqs[used - 1]!,
    };
  }
}
