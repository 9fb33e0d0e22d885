/**
 * The PostgreSQL side of one ingest batch: what the batch reads is fetched
 * ahead in a few statements, the shared ingest logic runs against those rows
 * in memory ({@link IngestPlan} is its {@link IngestStore}), and the outcome is
 * written back with one statement per table. The sessions' locks, taken
 * before the reads, make the rows read ahead the current ones.
 *
 * @module
 */
import type { TelemetryEvent } from "../../model/telemetry.ts";
import type {
  IngestStore,
  SessionActorChangeValues,
  SessionChangeValues,
  StoredDecision,
  StoredModelCall,
  StoredToolCall,
} from "../ingest_batch.ts";
import type { Sender } from "../stores.ts";
import {
  DOMAIN_HITS,
  type DomainHitRow,
  MODEL_CALLS,
  type ModelCallRow,
  NEW_SESSIONS,
  type NewSessionRow,
  RISK_FLAGS,
  type RiskFlagRow,
  TOOL_CALLS,
  type ToolCallRow,
} from "../table_columns.ts";
import type { PgParam } from "./client.ts";

/** Keys of the stored rows a batch's events may read. */
export interface BatchReads {
  /** Ids of the calls that tool calls and decisions may find. */
  toolCallIds: string[];
  /** Session and agent call id of each decision a result may pair with. */
  decisionKeys: { sessionIds: string[]; toolCallIds: string[] };
  sessionIds: string[];
  modelCallIds: string[];
}

/** What of the stored rows the batch's events read. */
export interface StoredRows {
  toolCalls: {
    id: string;
    outcome: string;
    decision: string | null;
    source: string;
    "trace_id": string | null;
    "span_id": string | null;
  }[];
  decisions: {
    "session_id": string;
    "tool_call_id": string;
    decision: string;
    "decision_source": string | null;
  }[];
  sessions: { "session_id": string; "provider_name": string }[];
  modelCalls: { id: string; cost_usd: number | null; estimated_cost_usd: number | null }[];
}

/** The keys a batch reads, from its events and their row ids. */
export function batchReads(events: readonly TelemetryEvent[], ids: readonly string[]): BatchReads {
  const toolCallIds = new Set<string>();
  const decisions = new Map<string, [string, string]>();
  const sessionIds = new Set<string>();
  const modelCallIds = new Set<string>();
  events.forEach((event, i) => {
    sessionIds.add(event.sessionId);
    switch (event.kind) {
      case "tool_call":
        toolCallIds.add(ids[i]!);
        if (event.toolCallId !== undefined) {
          decisions.set(decisionKey(event.sessionId, event.toolCallId), [
            event.sessionId,
            event.toolCallId,
          ]);
        }
        break;
      case "decision":
        toolCallIds.add(ids[i]!);
        break;
      case "model_call":
        modelCallIds.add(ids[i]!);
        break;
    }
  });
  const keys = [...decisions.values()];
  return {
    toolCallIds: [...toolCallIds],
    decisionKeys: { sessionIds: keys.map((k) => k[0]), toolCallIds: keys.map((k) => k[1]) },
    sessionIds: [...sessionIds],
    modelCallIds: [...modelCallIds],
  };
}

/** The most `seq` values a batch can use: see the `nextSeq` calls of `ingest_batch.ts`. */
export function seqsNeeded(events: readonly TelemetryEvent[], reads: BatchReads): number {
  return 2 * events.length + 3 * reads.sessionIds.length;
}

/** A call as the batch sees it: stored before, or written by the batch. */
interface CallState extends StoredToolCall {
  decision: string | null;
  /** Stored before the batch (so deleting it takes a statement). */
  stored: boolean;
  /** The row to insert, when the batch wrote it. */
  row: ToolCallRow | null;
}

/** What the batch knows of a call from its row: stored before the batch, or written by it (`row`). */
function callState(
  from: Pick<ToolCallRow, "outcome" | "decision" | "source" | "trace_id" | "span_id">,
  stored: boolean,
  row: ToolCallRow | null,
): CallState {
  return {
    outcome: from.outcome,
    decision: from.decision,
    source: from.source,
    traceId: from.trace_id,
    spanId: from.span_id,
    stored,
    row,
  };
}

/** Sets `columns` on the row the batch writes for the call; false when it writes none (stored). */
function setOnWrittenRow(call: CallState, columns: Partial<ToolCallRow>): boolean {
  if (!call.row) return false;
  Object.assign(call.row, columns);
  return true;
}

/** The statement and the column arrays of one bulk write. */
export interface BulkWrite {
  statement: string;
  params: PgParam[][];
}

/** One batch's reads answered from rows read ahead, its writes collected for bulk statements. */
export class IngestPlan implements IngestStore {
  readonly #seqs: readonly number[];
  #seqsUsed = 0;
  readonly #calls = new Map<string, CallState>();
  readonly #decisions = new Map<string, StoredDecision>();
  readonly #providers = new Map<string, string>();
  /** Model calls stored or written by the batch, with their reported cost (null: none). */
  readonly #modelCalls = new Map<string, StoredModelCall>();
  readonly #costFills = new Map<string, PgParam[]>();

  readonly #newSessions: NewSessionRow[] = [];
  readonly #decisionUpserts = new Map<string, PgParam[]>();
  readonly #annotations = new Map<string, PgParam[]>();
  readonly #traceAnnotations = new Map<string, PgParam[]>();
  readonly #forgotten = new Set<string>();
  readonly #tombstones: PgParam[][] = [];
  readonly #deletedCalls = new Set<string>();
  readonly #flags = new Map<string, RiskFlagRow[]>();
  readonly #hits = new Map<string, DomainHitRow[]>();
  readonly #newModelCalls: ModelCallRow[] = [];
  readonly #providerUpdates = new Map<string, PgParam[]>();
  readonly #parentUpdates = new Map<string, PgParam[]>();
  readonly #sessionChanges: SessionChangeValues[] = [];
  readonly #recounts: PgParam[][] = [];
  readonly #sessionActorChanges: SessionActorChangeValues[] = [];
  readonly #sessionActorRecounts: PgParam[][] = [];

  constructor(sender: Sender, stored: StoredRows, seqs: readonly number[]) {
    this.#seqs = seqs;
    for (const row of stored.toolCalls) this.#calls.set(row.id, callState(row, true, null));
    for (const row of stored.decisions) {
      this.#decisions.set(decisionKey(row.session_id, row.tool_call_id), {
        decision: row.decision,
        decisionSource: row.decision_source,
      });
    }
    for (const row of stored.sessions) {
      this.#providers.set(sessionKey(sender.orgId, row.session_id), row.provider_name);
    }
    for (const row of stored.modelCalls) {
      this.#modelCalls.set(row.id, {
        costUsd: row.cost_usd,
        estimatedCostUsd: row.estimated_cost_usd,
      });
    }
  }

  /** The highest `seq` the batch used (0 for none). */
  get lastSeq(): number {
    return this.#seqsUsed === 0 ? 0 : this.#seqs[this.#seqsUsed - 1]!;
  }

  nextSeq(): number {
    const seq = this.#seqs[this.#seqsUsed++];
    if (seq === undefined) throw new Error("Ingest batch used more seq values than reserved");
    return seq;
  }

  findToolCall(id: string): StoredToolCall | undefined {
    return this.#calls.get(id);
  }

  deleteToolCall(id: string): void {
    const call = this.#calls.get(id);
    if (call?.stored) {
      this.#deletedCalls.add(id);
      this.#annotations.delete(id);
      this.#traceAnnotations.delete(id);
    }
    this.#calls.delete(id);
  }

  insertToolCall(row: ToolCallRow): void {
    this.#calls.set(row.id, callState(row, this.#deletedCalls.has(row.id), row));
  }

  annotateTrace(id: string, traceId: string, spanId: string | null, seq: number): void {
    const call = this.#calls.get(id);
    if (!call) return;
    call.traceId = traceId;
    call.spanId = spanId;
    if (!setOnWrittenRow(call, { trace_id: traceId, span_id: spanId, seq })) {
      this.#traceAnnotations.set(id, [id, traceId, spanId, seq]);
    }
  }

  annotateDecision(id: string, decision: string, source: string | null, seq: number): void {
    const call = this.#calls.get(id);
    if (!call) return;
    call.decision = decision;
    if (!setOnWrittenRow(call, { decision, decision_source: source, seq })) {
      this.#annotations.set(id, [id, decision, source, seq]);
    }
  }

  findDecision(_orgId: string, sessionId: string, toolCallId: string): StoredDecision | undefined {
    return this.#decisions.get(decisionKey(sessionId, toolCallId));
  }

  upsertDecision(
    orgId: string,
    sessionId: string,
    toolCallId: string,
    decision: string,
    source: string | null,
  ): void {
    const key = decisionKey(sessionId, toolCallId);
    this.#decisions.set(key, { decision, decisionSource: source });
    this.#decisionUpserts.set(key, [orgId, sessionId, toolCallId, decision, source]);
  }

  insertRiskFlag(row: RiskFlagRow): void {
    pushTo(this.#flags, row.call_id, row);
  }

  insertDomainHit(row: DomainHitRow): void {
    pushTo(this.#hits, row.call_id, row);
  }

  forgetDetections(id: string, seq: number): void {
    if (this.#calls.get(id)?.row === null) this.#forgotten.add(id);
    this.#flags.delete(id);
    this.#hits.delete(id);
    this.#tombstones.push([seq, "detections", id]);
  }

  insertModelCall(row: ModelCallRow): boolean {
    if (this.#modelCalls.has(row.id)) return false;
    this.#modelCalls.set(row.id, {
      costUsd: row.cost_usd,
      estimatedCostUsd: row.estimated_cost_usd,
    });
    this.#newModelCalls.push(row);
    return true;
  }

  findModelCall(id: string): StoredModelCall | undefined {
    return this.#modelCalls.get(id);
  }

  fillModelCallCost(id: string, costUsd: number, seq: number): void {
    this.#modelCalls.set(id, { costUsd, estimatedCostUsd: null });
    const added = this.#newModelCalls.find((row) => row.id === id);
    if (added !== undefined) {
      added.cost_usd = costUsd;
      added.estimated_cost_usd = null;
      return;
    }
    this.#costFills.set(id, [id, costUsd, seq]);
  }

  ensureSession(row: NewSessionRow): void {
    const key = sessionKey(row.org_id, row.session_id);
    if (this.#providers.has(key)) return;
    this.#providers.set(key, "");
    this.#newSessions.push(row);
  }

  sessionProvider(orgId: string, sessionId: string): string {
    return this.#providers.get(sessionKey(orgId, sessionId)) ?? "";
  }

  setSessionProvider(seq: number, provider: string, orgId: string, sessionId: string): void {
    const key = sessionKey(orgId, sessionId);
    this.#providers.set(key, provider);
    this.#providerUpdates.set(key, [seq, provider, orgId, sessionId]);
  }

  setSessionParent(seq: number, parent: string, orgId: string, sessionId: string): void {
    const key = sessionKey(orgId, sessionId);
    // The first parent reported wins, as in the statement.
    if (!this.#parentUpdates.has(key)) {
      this.#parentUpdates.set(key, [seq, parent, orgId, sessionId]);
    }
  }

  changeSession(values: SessionChangeValues): void {
    this.#sessionChanges.push(values);
  }

  recountSession(seq: number, orgId: string, sessionId: string): void {
    this.#recounts.push([seq, orgId, sessionId]);
  }

  changeSessionActor(values: SessionActorChangeValues): void {
    this.#sessionActorChanges.push(values);
  }

  recountSessionActors(orgId: string, sessionId: string): void {
    this.#sessionActorRecounts.push([orgId, sessionId]);
  }

  /**
   * The batch's writes, in an order that keeps every statement valid: session
   * rows first, deletions before the inserts that replace them, recounts last.
   */
  writes(): BulkWrite[] {
    const newCalls: PgParam[][] = [];
    for (const call of this.#calls.values()) {
      if (call.row) newCalls.push(TOOL_CALLS.values(call.row));
    }
    const forgotten = [...this.#forgotten];
    const writes: [string, PgParam[][]][] = [
      ["insert_sessions", this.#newSessions.map(NEW_SESSIONS.values)],
      ["upsert_decisions", [...this.#decisionUpserts.values()]],
      ["annotate_decisions", [...this.#annotations.values()]],
      ["annotate_traces", [...this.#traceAnnotations.values()]],
      ["delete_risk_flags", forgotten.map((id) => [id])],
      ["delete_domain_hits", forgotten.map((id) => [id])],
      ["insert_tombstones", this.#tombstones],
      ["delete_tool_calls", [...this.#deletedCalls].map((id) => [id])],
      ["insert_tool_calls", newCalls],
      ["insert_risk_flags", [...this.#flags.values()].flat().map(RISK_FLAGS.values)],
      ["insert_domain_hits", [...this.#hits.values()].flat().map(DOMAIN_HITS.values)],
      ["insert_model_calls", this.#newModelCalls.map(MODEL_CALLS.values)],
      ["fill_model_call_costs", [...this.#costFills.values()]],
      ["set_session_providers", [...this.#providerUpdates.values()]],
      ["set_session_parents", [...this.#parentUpdates.values()]],
      ["change_sessions", this.#sessionChanges],
      ["recount_sessions", this.#recounts],
      ["change_session_actors", this.#sessionActorChanges],
      ["clear_session_actors", this.#sessionActorRecounts],
      ["recount_session_actors", this.#sessionActorRecounts],
    ];
    return writes.filter(([, rows]) => rows.length > 0).map(([statement, rows]) => ({
      statement,
      params: columns(rows),
    }));
  }
}

/**
 * A value as PostgreSQL can store it: its text cannot hold U+0000 (SQLite's
 * can), which becomes U+FFFD. Applied to every value written and every key
 * read, so keys still match.
 */
export function pgValue<T extends PgParam>(value: T): T {
  return typeof value === "string" && value.includes("\u0000")
    ? value.replaceAll("\u0000", "\ufffd") as T
    : value;
}

/** Rows as one array per column, the parameters of an `unnest` statement. */
export function columns(rows: readonly (readonly PgParam[])[]): PgParam[][] {
  const width = rows[0]?.length ?? 0;
  const out: PgParam[][] = Array.from({ length: width }, () => new Array(rows.length));
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    for (let c = 0; c < width; c++) out[c]![r] = pgValue(row[c]!);
  }
  return out;
}

function pushTo<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function decisionKey(sessionId: string, toolCallId: string): string {
  return `${pgValue(sessionId)}\u0000${pgValue(toolCallId)}`;
}

function sessionKey(orgId: string, sessionId: string): string {
  return `${pgValue(orgId)}\u0000${pgValue(sessionId)}`;
}
