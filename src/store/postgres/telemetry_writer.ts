/**
 * The ingest write path on PostgreSQL: the same rows as the SQLite writer for
 * the same events (the logic is shared: `ingest_batch.ts`), one transaction
 * per export request. Several nodes may write at once, into the same sessions:
 * each transaction first locks its sessions (in one global order), then reads
 * what its events depend on and writes each table in one statement.
 *
 * @module
 */
import type { MetricSample } from "../../model/metrics.ts";
import type { UnmappedRecords } from "../../model/unmapped.ts";
import type { TelemetryEvent } from "../../model/telemetry.ts";
import { DIMENSION_LIMITS } from "../../config.ts";
import type { SessionDimension } from "../../model/dimensions.ts";
import { domainHitRows, riskFlagRows } from "../detection_rows.ts";
import { emptyIngestSummary, ingestEvents } from "../ingest_batch.ts";
import { metricPointRow } from "../metric_rows.ts";
import { unmappedRows } from "../unmapped_rows.ts";
import { rescanDetection, rescannedTexts, type RescanRow, storedCallOf } from "../rescan.ts";
import { eventRowIds } from "../row_ids.ts";
import type {
  IngestSummary,
  RetentionOptions,
  RetentionResult,
  Sender,
  TelemetryWriterApi,
} from "../stores.ts";
import { DOMAIN_HITS, METRIC_POINTS, RISK_FLAGS } from "../table_columns.ts";
import { type PgParam, pgUnavailable, type Sql, type TransactionSql } from "./client.ts";
import {
  type BatchReads,
  batchReads,
  columns,
  IngestPlan,
  pgValue,
  seqsNeeded,
  type StoredRows,
} from "./_ingest_plan.ts";
import { PgRetention } from "./retention.ts";
import { lockSessions, reserveSeqs, run, withRetries } from "./_write_tx.ts";
import { WriteOutage } from "../write_outage.ts";

/** Options of {@link PgTelemetryWriter}. */
export interface PgWriterOptions {
  /** Replace detected secrets by `[REDACTED:<kind>]` in stored arguments and results. */
  redactSecrets: boolean;
  retention: RetentionOptions;
}

/** A batch's outcome and the highest `seq` it wrote. */
interface Written<T> {
  value: T;
  lastSeq: number;
}

/** Writes telemetry into PostgreSQL through a pool it does not own. */
export class PgTelemetryWriter implements TelemetryWriterApi {
  readonly #sql: Sql;
  readonly #options: PgWriterOptions;
  readonly #retention: PgRetention;
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #outage = new WriteOutage();
  #closed = false;
  #lastSeq = 0;

  constructor(sql: Sql, options: PgWriterOptions) {
    this.#sql = sql;
    this.#options = options;
    this.#retention = new PgRetention(sql, options.retention);
  }

  /** The highest `seq` this process wrote. */
  get lastSeq(): number {
    return Math.max(this.#lastSeq, this.#retention.lastSeq);
  }

  /**
   * Stores every event or metric point of one export request, all or
   * nothing; a point already stored (a retried export) is ignored. A refusal
   * that passes (out of reach, disk full, read-only) rejects with
   * `StoreUnavailableError`.
   */
  ingest(
    sender: Sender,
    events: readonly TelemetryEvent[],
    points: readonly MetricSample[] = [],
    unmapped: readonly UnmappedRecords[] = [],
    dimensions: readonly SessionDimension[] = [],
  ): Promise<IngestSummary> {
    return this.#outage.track(this.#track(async () => {
      if (events.length === 0 && points.length === 0 && unmapped.length === 0) {
        return emptyIngestSummary();
      }
      const ids = eventRowIds(sender, events);
      const reads = batchReads(events, ids);
      try {
        return await this.#transaction((tx) =>
          this.#ingestIn(tx, sender, events, ids, reads, points, unmapped, dimensions)
        );
      } catch (error) {
        throw pgUnavailable(error) ?? error;
      }
    }));
  }

  /**
   * Rejects unless the database takes a write transaction (a standby refuses
   * one); after writes were refused, unless a real write goes through.
   */
  probe(): Promise<void> {
    return this.#track(() =>
      this.#outage.probe(
        async () => void await this.#sql.begin("read write", (tx) => run(tx, "probe", [])),
        async () => {
          try {
            await this.#sql.begin((tx) => run(tx, "probe_write", []));
          } catch (error) {
            throw pgUnavailable(error) ?? error;
          }
        },
      )
    );
  }

  /** One retention pass by age (`maxDiskBytes` does not apply: nothing is reclaimed here). */
  runRetention(now = Date.now()): Promise<RetentionResult> {
    return this.#track(() => this.#retention.run(now));
  }

  /**
   * Runs detection again over up to `limit` stored calls after id `afterId`
   * (one transaction), replacing their flags and domain hits. A credential
   * flag whose secret was redacted at ingest is kept: the text no longer
   * holds it. Returns the last id scanned, or null when done.
   */
  rescanBatch(afterId: string, limit: number): Promise<{ lastId: string | null; scanned: number }> {
    return this.#track(() => this.#transaction((tx) => this.#rescanIn(tx, afterId, limit)));
  }

  /** Refuses new work and waits for the writes under way; the pool stays open. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#inFlight]);
  }

  async #ingestIn(
    tx: TransactionSql,
    sender: Sender,
    events: readonly TelemetryEvent[],
    ids: readonly string[],
    reads: BatchReads,
    points: readonly MetricSample[],
    unmapped: readonly UnmappedRecords[],
    dimensions: readonly SessionDimension[],
  ): Promise<Written<IngestSummary>> {
    const { decisionKeys } = reads;
    const [, toolCalls, decisions, sessions, modelCalls, seqs, pointSeqs] = await Promise.all([
      lockSessions(tx, reads.sessionIds.map((session) => [sender.orgId, session] as const)),
      readIf<StoredRows["toolCalls"][number]>(tx, "stored_tool_calls", [reads.toolCallIds]),
      readIf<StoredRows["decisions"][number]>(tx, "stored_decisions", [
        sender.orgId,
        decisionKeys.sessionIds,
        decisionKeys.toolCallIds,
      ]),
      readIf<StoredRows["sessions"][number]>(tx, "stored_sessions", [
        sender.orgId,
        reads.sessionIds,
      ]),
      readIf<StoredRows["modelCalls"][number]>(tx, "stored_model_calls", [reads.modelCallIds]),
      reserveSeqs(tx, seqsNeeded(events, reads)),
      reserveSeqs(tx, points.length),
    ]);
    const plan = new IngestPlan(sender, { toolCalls, decisions, sessions, modelCalls }, seqs);
    const summary = ingestEvents(plan, sender, events, this.#options, ids);
    const writes = plan.writes().map((write) => run(tx, write.statement, write.params));
    if (points.length > 0) {
      const rows = points.map((point, i) =>
        METRIC_POINTS.values(metricPointRow(sender, point, pointSeqs[i]!))
      );
      writes.push(run(tx, "insert_metric_points", columns(rows)));
    }
    const notes = unmappedRows(sender, unmapped, Date.now());
    if (notes.length > 0) writes.push(run(tx, "note_unmapped", columns(notes)));
    await Promise.all(writes);
    if (dimensions.length > 0) await noteDimensions(tx, sender.orgId, dimensions);
    return { value: summary, lastSeq: Math.max(plan.lastSeq, pointSeqs.at(-1) ?? 0) };
  }

  async #rescanIn(
    tx: TransactionSql,
    afterId: string,
    limit: number,
  ): Promise<Written<{ lastId: string | null; scanned: number }>> {
    const calls = await run<{ id: string; org_id: string; session_id: string }>(
      tx,
      "calls_after",
      [afterId, limit],
    );
    if (calls.length === 0) return { value: { lastId: null, scanned: 0 }, lastSeq: 0 };
    const ids = calls.map((call) => call.id);
    const [, rows, seqs] = await Promise.all([
      lockSessions(tx, calls.map((call) => [call.org_id, call.session_id] as const)),
      run<RescanRow & { credential_evidence: string | null }>(tx, "calls_to_rescan", [ids]),
      reserveSeqs(tx, 2 * calls.length),
    ]);
    let used = 0;
    const tombstones: PgParam[][] = [];
    const texts: PgParam[][] = [];
    const flags: PgParam[][] = [];
    const hits: PgParam[][] = [];
    for (const row of rows) {
      const detection = rescanDetection(row, row.credential_evidence ?? undefined, this.#options);
      tombstones.push([seqs[used++]!, "detections", row.id]);
      const seq = seqs[used++]!;
      const changed = rescannedTexts(row, detection);
      if (changed !== null) texts.push([...changed, seq, row.id]);
      const call = storedCallOf(row);
      for (const flag of riskFlagRows(call, detection, seq)) flags.push(RISK_FLAGS.values(flag));
      for (const hit of domainHitRows(call, detection, seq)) hits.push(DOMAIN_HITS.values(hit));
    }
    const rescanned = rows.map((row) => [row.id]);
    const writes: [string, PgParam[][]][] = [
      ["delete_risk_flags", rescanned],
      ["delete_domain_hits", rescanned],
      ["insert_tombstones", tombstones],
      ["update_call_texts", texts],
      ["insert_risk_flags", flags],
      ["insert_domain_hits", hits],
    ];
    await Promise.all(
      writes.filter(([, list]) => list.length > 0).map(([name, list]) =>
        run(tx, name, columns(list))
      ),
    );
    return {
      value: { lastId: ids.at(-1)!, scanned: rows.length },
      lastSeq: used === 0 ? 0 : seqs[used - 1]!,
    };
  }

  /** One write transaction, retried while PostgreSQL aborts it; notes the seq it wrote. */
  async #transaction<T>(body: (tx: TransactionSql) => Promise<Written<T>>): Promise<T> {
    const written = await withRetries(() => this.#sql.begin(body));
    this.#lastSeq = Math.max(this.#lastSeq, written.lastSeq);
    return written.value;
  }

  /** Runs work unless closed, so that {@link close} can wait for it. */
  #track<T>(work: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error("Telemetry writer is closed"));
    const promise = work();
    this.#inFlight.add(promise);
    promise.then(
      () => this.#inFlight.delete(promise),
      () => this.#inFlight.delete(promise),
    );
    return promise;
  }
}

/** A read of stored rows by arrays of keys, skipped when they are empty. */
function readIf<T>(
  tx: TransactionSql,
  name: string,
  params: (PgParam | PgParam[])[],
): Promise<T[]> {
  const keys = params.find(Array.isArray);
  if (keys && keys.length === 0) return Promise.resolve([]);
  const values = params.map((param) => Array.isArray(param) ? param.map(pgValue) : pgValue(param));
  return run<T>(tx, name, values);
}

/**
 * Keeps each session's dimensions within their bounds, as the SQLite writer
 * does (docs/api.md §4.22): values admitted to their key's catalogue first,
 * then the sessions' values that were, then the others counted as dropped.
 */
async function noteDimensions(
  tx: TransactionSql,
  orgId: string,
  dimensions: readonly SessionDimension[],
): Promise<void> {
  const keys = dimensions.map((dimension) => dimension.key);
  const values = dimensions.map((dimension) => dimension.value);
  await run(tx, "admit_dimension_value", [orgId, keys, values, DIMENSION_LIMITS.valuesPerKey]);
  await run(tx, "note_session_dimension", [
    orgId,
    dimensions.map((dimension) => dimension.sessionId),
    keys,
    values,
  ]);
  await run(tx, "count_dropped_dimension", [orgId, keys, values]);
}
