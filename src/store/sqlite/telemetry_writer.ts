/**
 * The ingest write path: stores the events of one export request in one
 * SQLite transaction, with detection, idempotent ids and the session rows
 * kept current (which rows: `ingest_batch.ts`).
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import ingestSql from "../../../sql/sqlite/ingest.sql" with { type: "text" };
import type { MetricSample } from "../../model/metrics.ts";
import type { UnmappedRecords } from "../../model/unmapped.ts";
import type { TelemetryEvent } from "../../model/telemetry.ts";
import { DIMENSION_LIMITS } from "../../config.ts";
import type { SessionDimension } from "../../model/dimensions.ts";
import type { CallFindings } from "../call_detection.ts";
import { domainHitRows, riskFlagRows } from "../detection_rows.ts";
import { emptyIngestSummary, ingestEvents, type IngestStore } from "../ingest_batch.ts";
import { metricPointRow } from "../metric_rows.ts";
import { unmappedRows } from "../unmapped_rows.ts";
import { parseNamedSql } from "../named_sql.ts";
import { rescanDetection, rescannedTexts, type RescanRow, storedCallOf } from "../rescan.ts";
import type { IngestSummary, Sender } from "../stores.ts";
import {
  DOMAIN_HITS,
  METRIC_POINTS,
  MODEL_CALLS,
  NEW_SESSIONS,
  RISK_FLAGS,
  TOOL_CALLS,
  withColumnLists,
} from "../table_columns.ts";
import { CallKeys } from "./call_keys.ts";
import { NamedStatements, tx } from "./database.ts";

const statementsSql = withColumnLists(parseNamedSql(ingestSql), () => "?");

/** Options of the write path. */
export interface WriterOptions {
  /** Replace detected secrets by `[REDACTED:<kind>]` in stored arguments and results. */
  redactSecrets: boolean;
}

/** The events or metric points of one export request. */
export interface ExportToStore {
  sender: Sender;
  events: readonly TelemetryEvent[];
  points?: readonly MetricSample[];
  /** What the export sent that stored nothing (`unmapped_events`). */
  unmapped?: readonly UnmappedRecords[];
  /** Its sessions' dimensions (`session_dimensions`, docs/api.md §4.22). */
  dimensions?: readonly SessionDimension[];
  /** Computed ahead, off this thread (`row_ids.ts`, `call_detection.ts`); else computed here. */
  prepared?: PreparedEvents;
}

/** Each event's row id and detection findings, by position. */
export interface PreparedEvents {
  ids: readonly string[];
  findings: readonly (CallFindings | null)[];
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** Writes telemetry into `telemetry.db`. */
export class TelemetryWriter {
  readonly #db: DatabaseSync;
  readonly #statements: NamedStatements;
  readonly #options: WriterOptions;
  readonly #store: IngestStore;
  readonly #keys: CallKeys;
  #seq = 0;

  constructor(db: DatabaseSync, options: WriterOptions) {
    this.#db = db;
    this.#statements = new NamedStatements(db, statementsSql);
    this.#options = options;
    this.#keys = new CallKeys(this.#statements);
    this.#store = this.#sqliteStore();
  }

  /** Throws unless the telemetry store takes a write transaction. */
  probe(): void {
    tx(this.#db, () => this.#statements.run("read_seq", "get"));
  }

  /**
   * Throws unless a write reaches the file: rewrites the `seq` counter with
   * its own value (one page), for readiness while writes were refused.
   */
  probeWrite(): void {
    tx(this.#db, () => this.#statements.run("write_seq", "run", this.currentSeq()));
  }

  /** SQLite's current `seq`: everything acknowledged so far. */
  currentSeq(): number {
    return Number((this.#statements.run("read_seq", "get") as { value: number }).value);
  }

  /**
   * Stores every event or metric point of one export request, all or
   * nothing; a point already stored (a retried export) is ignored.
   */
  ingest(
    sender: Sender,
    events: readonly TelemetryEvent[],
    points: readonly MetricSample[] = [],
    prepared?: PreparedEvents,
    unmapped: readonly UnmappedRecords[] = [],
    dimensions: readonly SessionDimension[] = [],
  ): IngestSummary {
    if (events.length === 0 && points.length === 0 && unmapped.length === 0) {
      return emptyIngestSummary();
    }
    return tx(
      this.#db,
      () =>
        this.#ingestIn({
          sender,
          events,
          points,
          unmapped,
          dimensions,
          ...(prepared ? { prepared } : {}),
        }),
    );
  }

  /**
   * Stores several export requests in one transaction, each all or nothing
   * (a savepoint each), so that one commit writes the pages they share. A
   * request that fails alone answers its error and the others are kept;
   * when the transaction itself fails (BEGIN, COMMIT, or an error that ends
   * it, such as a full disk), every request answers that error and nothing
   * of them is stored.
   */
  ingestGroup(exports: readonly ExportToStore[]): (IngestSummary | Error)[] {
    const db = this.#db;
    const answers: (IngestSummary | Error)[] = [];
    try {
      db.exec("BEGIN IMMEDIATE");
      for (const request of exports) {
        db.exec("SAVEPOINT export");
        try {
          answers.push(this.#ingestIn(request));
        } catch (error) {
          if (!db.isTransaction) throw error;
          db.exec("ROLLBACK TO export");
          answers.push(asError(error));
        }
        db.exec("RELEASE export");
      }
      db.exec("COMMIT");
      return answers;
    } catch (error) {
      if (db.isTransaction) db.exec("ROLLBACK");
      return exports.map(() => asError(error));
    }
  }

  #ingestIn(
    { sender, events, points = [], unmapped = [], dimensions = [], prepared }: ExportToStore,
  ): IngestSummary {
    this.#keys.forget();
    for (const row of unmappedRows(sender, unmapped, Date.now())) {
      this.#statements.run("note_unmapped", "run", ...row);
    }
    this.#noteDimensions(sender.orgId, dimensions);
    this.#seq = this.currentSeq();
    const summary = prepared
      ? ingestEvents(this.#store, sender, events, this.#options, prepared.ids, prepared.findings)
      : ingestEvents(this.#store, sender, events, this.#options);
    for (const point of points) {
      const row = metricPointRow(sender, point, this.#nextSeq());
      this.#statements.run("insert_metric_point", "run", ...METRIC_POINTS.values(row));
    }
    this.#statements.run("write_seq", "run", this.#seq);
    return summary;
  }

  /**
   * Keeps each session's dimensions: a value its key already has in the
   * organization, or a new one while the key has fewer than
   * `DIMENSION_LIMITS.valuesPerKey`; any other value (or one over the length
   * limit, null here) is dropped and counted per key.
   */
  #noteDimensions(orgId: string, dimensions: readonly SessionDimension[]): void {
    for (const { sessionId, key, value } of dimensions) {
      if (value !== null) {
        this.#statements.run(
          "admit_dimension_value",
          "run",
          orgId,
          key,
          value,
          DIMENSION_LIMITS.valuesPerKey,
        );
        this.#statements.run("note_session_dimension", "run", orgId, sessionId, key, value);
      }
      this.#statements.run("count_dropped_dimension", "run", orgId, key, value);
    }
  }

  /**
   * Runs detection again over up to `limit` stored calls after id `afterId`
   * (one transaction), replacing their flags and domain hits. A credential
   * flag whose secret was redacted at ingest is kept: the text no longer
   * holds it. Returns the last id scanned, or null when done.
   */
  rescanBatch(afterId: string, limit: number): { lastId: string | null; scanned: number } {
    return tx(this.#db, () => {
      this.#seq = this.currentSeq();
      const rows = this.#statements.run("calls_to_rescan", "all", afterId, limit) as RescanRow[];
      for (const row of rows) this.#rescanCall(row);
      this.#statements.run("write_seq", "run", this.#seq);
      return { lastId: rows.at(-1)?.id ?? null, scanned: rows.length };
    });
  }

  #rescanCall(row: RescanRow): void {
    const kept = this.#statements.run("credential_flag", "get", row.id) as
      | { evidence: string }
      | undefined;
    const detection = rescanDetection(row, kept?.evidence, this.#options);
    this.#store.forgetDetections(row.id, this.#nextSeq());
    const seq = this.#nextSeq();
    const texts = rescannedTexts(row, detection);
    if (texts !== null) this.#statements.run("update_call_text", "run", ...texts, seq, row.id);
    const call = storedCallOf(row);
    for (const flag of riskFlagRows(call, detection, seq)) {
      this.#statements.run("insert_risk_flag", "run", ...RISK_FLAGS.values(flag));
    }
    for (const hit of domainHitRows(call, detection, seq)) {
      this.#statements.run("insert_domain_hit", "run", ...DOMAIN_HITS.values(hit));
    }
  }

  /** The ingest path's reads and writes as statements on the write connection. */
  #sqliteStore(): IngestStore {
    const run = this.#statements.run.bind(this.#statements);
    return {
      nextSeq: () => this.#nextSeq(),
      findToolCall: (id) => {
        const row = run("find_tool_call", "get", id) as
          | { outcome: string; source: string; trace_id: string | null; span_id: string | null }
          | undefined;
        return row &&
          { outcome: row.outcome, source: row.source, traceId: row.trace_id, spanId: row.span_id };
      },
      deleteToolCall: (id) => run("delete_tool_call", "run", id),
      insertToolCall: (row) =>
        run("insert_tool_call", "run", ...this.#keys.keyedToolCall(TOOL_CALLS.values(row))),
      annotateTrace: (id, traceId, spanId, seq) =>
        run("annotate_trace", "run", traceId, spanId, seq, id),
      annotateDecision: (id, decision, source, seq) =>
        run("annotate_decision", "run", decision, source, seq, id),
      findDecision: (orgId, sessionId, toolCallId) => {
        const stored = run("find_decision", "get", orgId, sessionId, toolCallId) as
          | { decision: string; decision_source: string | null }
          | undefined;
        return stored && { decision: stored.decision, decisionSource: stored.decision_source };
      },
      upsertDecision: (orgId, sessionId, toolCallId, decision, source) =>
        run(
          "upsert_decision",
          "run",
          this.#keys.sessionKey(orgId, sessionId),
          toolCallId,
          decision,
          source,
        ),
      insertRiskFlag: (row) => run("insert_risk_flag", "run", ...RISK_FLAGS.values(row)),
      insertDomainHit: (row) => run("insert_domain_hit", "run", ...DOMAIN_HITS.values(row)),
      forgetDetections: (id, seq) => {
        run("delete_risk_flags", "run", id);
        run("delete_domain_hits", "run", id);
        run("insert_tombstone", "run", seq, "detections", id);
      },
      insertModelCall: (row) => {
        const values = this.#keys.keyed(MODEL_CALLS.values(row));
        const inserted = run("insert_model_call", "run", ...values) as {
          changes: number | bigint;
        };
        return Number(inserted.changes) > 0;
      },
      findModelCall: (id) => {
        const row = run("find_model_call", "get", id) as
          | { cost_usd: number | null; estimated_cost_usd: number | null }
          | undefined;
        return row && { costUsd: row.cost_usd, estimatedCostUsd: row.estimated_cost_usd };
      },
      fillModelCallCost: (id, costUsd, seq) => run("fill_model_call_cost", "run", costUsd, seq, id),
      ensureSession: (row) => run("ensure_session", "run", ...NEW_SESSIONS.values(row)),
      sessionProvider: (orgId, sessionId) =>
        (run("find_session", "get", orgId, sessionId) as { provider_name: string }).provider_name,
      setSessionProvider: (seq, provider, orgId, sessionId) =>
        run("set_session_provider", "run", seq, provider, orgId, sessionId),
      setSessionParent: (seq, parent, orgId, sessionId) =>
        run("set_session_parent", "run", seq, parent, orgId, sessionId),
      changeSession: (values) => run("add_to_session", "run", ...values),
      recountSession: (seq, orgId, sessionId) =>
        run("recount_session", "run", seq, orgId, sessionId),
      changeSessionActor: (values) => run("add_to_session_actor", "run", ...values),
      recountSessionActors: (orgId, sessionId) => {
        run("clear_session_actors", "run", orgId, sessionId);
        run("recount_session_actors", "run", orgId, sessionId);
      },
    };
  }

  #nextSeq(): number {
    return ++this.#seq;
  }
}
