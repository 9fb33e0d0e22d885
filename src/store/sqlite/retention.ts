/**
 * Retention: deletes telemetry older than the retention period, and the
 * oldest telemetry while the store is over its disk cap, in bounded batches
 * (one short write transaction each, so ingest never waits long). Sessions
 * that lose calls are recounted; the replica mirrors deletions through
 * tombstones.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import ingestSql from "../../../sql/sqlite/ingest.sql" with { type: "text" };
import retentionSql from "../../../sql/sqlite/retention.sql" with { type: "text" };
import { parseNamedSql } from "../named_sql.ts";
import type { RetentionOptions, RetentionResult } from "../stores.ts";
import { NamedStatements, tx } from "./database.ts";

const statementsSql = { ...parseNamedSql(ingestSql), ...parseNamedSql(retentionSql) };
const DAY_MS = 86_400_000;
/**
 * How long one retention transaction or vacuum step may hold the writer: the
 * pass yields between them, and exports waiting meanwhile are written then
 * (a pass of one day at 1M calls held ingest for its whole 10 s before).
 */
const HOLD_MS = 50;
/** Rows read per lookup of the oldest; a transaction takes several while its time lasts. */
const LOOKUP_ROWS = 256;
/** Free pages returned to the file system per vacuum step. */
const VACUUM_PAGES = 64;

/** Prunes `telemetry.db` through its write connection. */
export class Retention {
  readonly #db: DatabaseSync;
  readonly #statements: NamedStatements;
  readonly #options: RetentionOptions;
  readonly #path: string;

  constructor(db: DatabaseSync, path: string, options: RetentionOptions) {
    this.#db = db;
    this.#statements = new NamedStatements(db, statementsSql);
    this.#path = path;
    this.#options = options;
  }

  /** Bytes the store's pages hold, free pages excluded. */
  usedBytes(): number {
    const pages = Number(this.#pragma("page_count"));
    const free = Number(this.#pragma("freelist_count"));
    return (pages - free) * Number(this.#pragma("page_size"));
  }

  /**
   * Deletes batches until nothing is older than the retention period and the
   * store is under its cap, yielding between batches; then returns free pages
   * to the file system.
   */
  async run(now = Date.now()): Promise<RetentionResult> {
    const before = this.#fileBytes();
    const total: RetentionResult = { toolCalls: 0, modelCalls: 0, reclaimedBytes: 0 };
    let metricPoints = 0;
    for (;;) {
      const orgs = (this.#statements.run("organizations", "all") as { org_id: string }[]).map((r) =>
        r.org_id
      );
      const overCap = this.#options.maxDiskBytes !== null &&
        this.usedBytes() > this.#options.maxDiskBytes;
      const cutoff = overCap ? this.#capCutoff(orgs) : now - this.#options.retentionDays * DAY_MS;
      let deleted = 0;
      for (const org of orgs) {
        const batch = this.#deleteBatch(org, cutoff);
        total.toolCalls += batch.toolCalls;
        total.modelCalls += batch.modelCalls;
        const points = this.#deleteMetricBatch(org, cutoff);
        metricPoints += points;
        deleted += batch.toolCalls + batch.modelCalls + points;
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
      if (deleted === 0) break;
    }
    this.#statements.run(
      "delete_old_unmapped_events",
      "run",
      now - this.#options.retentionDays * DAY_MS,
    );
    this.#statements.run("delete_unused_dimension_values", "run");
    if (total.toolCalls + total.modelCalls + metricPoints > 0) {
      await this.#vacuum();
      this.#db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      total.reclaimedBytes = Math.max(0, before - this.#fileBytes());
    }
    return total;
  }

  /**
   * Returns free pages to the file system a few at a time, yielding when a
   * step has held the writer {@link HOLD_MS}: moving a day's pages at once
   * took 1.8 s at 1M calls.
   */
  async #vacuum(): Promise<void> {
    // Each step of this pragma frees one page: step it to the end (`exec` steps once).
    const step = this.#db.prepare(`PRAGMA incremental_vacuum(${VACUUM_PAGES})`);
    while (Number(this.#pragma("freelist_count")) > 0) {
      const started = performance.now();
      while (performance.now() - started < HOLD_MS && Number(this.#pragma("freelist_count")) > 0) {
        step.all();
      }
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  }

  /** Past the cap: everything before the oldest day still stored, in any organization, goes next. */
  #capCutoff(orgs: string[]): number {
    let oldest = Infinity;
    for (const org of orgs) {
      const ts = (this.#statements.run("oldest_time", "get", org) as { ts: number | null }).ts;
      if (ts !== null) oldest = Math.min(oldest, ts);
    }
    return Number.isFinite(oldest) ? Math.floor(oldest / DAY_MS) * DAY_MS + DAY_MS : -Infinity;
  }

  /**
   * One transaction: up to a batch of each kind of row of one organization
   * before `cutoff`, fewer when {@link HOLD_MS} has passed.
   */
  #deleteBatch(org: string, cutoff: number): { toolCalls: number; modelCalls: number } {
    if (!Number.isFinite(cutoff)) return { toolCalls: 0, modelCalls: 0 };
    const started = performance.now();
    return tx(this.#db, () => {
      let seq = Number((this.#statements.run("read_seq", "get") as { value: number }).value);
      const touched = new Map<string, [string, string]>();
      const deleteRows = (select: string, remove: string, table: string) => {
        // One lookup at least, so that each kind progresses in every batch.
        let deleted = 0;
        do {
          const lookup = Math.min(LOOKUP_ROWS, this.#options.batchSize - deleted);
          // Negative: the time ran out within the rows read.
          const rows = deleteSome(select, remove, table, lookup);
          deleted += Math.abs(rows);
          if (rows < lookup) break;
        } while (deleted < this.#options.batchSize && performance.now() - started < HOLD_MS);
        return deleted;
      };
      const deleteSome = (select: string, remove: string, table: string, limit: number) => {
        const rows = this.#statements.run(select, "all", org, cutoff, limit) as {
          id: string;
          org_id: string;
          session_id: string;
          tool_call_id?: string | null;
        }[];
        let done = 0;
        for (const row of rows) {
          // The rows left stay for the next transaction.
          if (done > 0 && performance.now() - started >= HOLD_MS) break;
          done++;
          this.#statements.run(remove, "run", row.id);
          if (row.tool_call_id) {
            this.#statements.run(
              "delete_call_decision",
              "run",
              row.org_id,
              row.session_id,
              row.tool_call_id,
            );
          }
          this.#statements.run("insert_tombstone", "run", ++seq, table, row.id);
          touched.set(`${row.org_id}\u0000${row.session_id}`, [row.org_id, row.session_id]);
        }
        return done === rows.length ? done : -done;
      };
      const toolCalls = deleteRows("oldest_tool_calls", "delete_tool_call", "tool_calls");
      const modelCalls = deleteRows("oldest_model_calls", "delete_model_call", "model_calls");
      for (const [org, session] of touched.values()) {
        this.#statements.run("recount_session", "run", ++seq, org, session);
        this.#statements.run("recount_session_cost", "run", ++seq, org, session);
        this.#statements.run("clear_session_actors", "run", org, session);
        this.#statements.run("recount_session_actors", "run", org, session);
        const dropped = this.#statements.run("drop_empty_session", "run", org, session) as {
          changes: number | bigint;
        };
        if (Number(dropped.changes) > 0) {
          this.#statements.run("delete_session_decisions", "run", org, session);
          this.#statements.run("delete_session_dimensions", "run", org, session);
          this.#statements.run("delete_session_prompt_keys", "run", org, session);
          this.#statements.run("delete_session_key", "run", org, session);
        }
      }
      this.#statements.run("write_seq", "run", seq);
      return { toolCalls, modelCalls };
    });
  }

  /** One transaction: up to a batch of one organization's metric points (whole groups) before `cutoff`. */
  #deleteMetricBatch(org: string, cutoff: number): number {
    if (!Number.isFinite(cutoff)) return 0;
    return tx(this.#db, () => {
      let seq = Number((this.#statements.run("read_seq", "get") as { value: number }).value);
      const rows = this.#statements.run(
        "oldest_metric_points",
        "all",
        org,
        cutoff,
        this.#options.batchSize,
      ) as {
        id: string;
      }[];
      for (const row of rows) {
        this.#statements.run("delete_metric_point", "run", row.id);
        this.#statements.run("insert_tombstone", "run", ++seq, "metric_points", row.id);
      }
      if (rows.length > 0) this.#statements.run("write_seq", "run", seq);
      return rows.length;
    });
  }

  #fileBytes(): number {
    let bytes = 0;
    for (const suffix of ["", "-wal"]) {
      try {
        bytes += Deno.statSync(this.#path + suffix).size;
      } catch {
        // Missing WAL: nothing to count.
      }
    }
    return bytes;
  }

  #pragma(name: string): unknown {
    return Object.values(this.#db.prepare(`PRAGMA ${name}`).get() ?? {})[0];
  }
}
