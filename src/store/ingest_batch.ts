/**
 * The engine-independent part of the ingest write path: which rows the events
 * of one export request store, given what is stored already. Each engine
 * supplies an {@link IngestStore} that reads and writes inside its own
 * transaction (SQLite at once, PostgreSQL from rows read ahead and written in
 * bulk), so both store exactly the same rows.
 *
 * @module
 */
import type {
  DecisionEvent,
  ModelCallEvent,
  SessionInfoEvent,
  TelemetryEvent,
  ToolCallEvent,
} from "../model/telemetry.ts";
import type { FlagKind } from "../detect/mod.ts";
import { estimateCostUsd } from "../model/prices.ts";
import { type CallFindings, detectEventCall, detectionOf } from "./call_detection.ts";
import { domainHitRows, riskFlagRows, type StoredCall } from "./detection_rows.ts";
import { eventRowIds } from "./row_ids.ts";
import { type PendingCall, toolCallRow } from "./tool_call_row.ts";
import type { IngestSummary, Sender } from "./stores.ts";
import type {
  DomainHitRow,
  ModelCallRow,
  NewSessionRow,
  RiskFlagRow,
  ToolCallRow,
} from "./table_columns.ts";

/**
 * One batch's changes to a session: counts added, first/last seen widened
 * (null when the batch added no call), the model of its latest call that
 * reports one (`""` and null for none), cost added.
 */
export type SessionChangeValues = [
  seq: number,
  firstSeen: number | null,
  lastSeen: number | null,
  calls: number,
  errors: number,
  oks: number,
  agentVersion: string,
  model: string,
  modelTs: number | null,
  cost: number,
  orgId: string,
  sessionId: string,
];

/**
 * One batch's calls in a session by one actor and agent, added to its
 * `session_actors` row (created when new): counts, first and last seen, and
 * the key of the latest call that reports a model, as the session list's SQL
 * spells it (see {@link modelKey}; null for none).
 */
export type SessionActorChangeValues = [
  orgId: string,
  sessionId: string,
  actorId: string,
  agentSystem: string,
  firstSeen: number,
  lastSeen: number,
  calls: number,
  errors: number,
  oks: number,
  modelKey: string | null,
];

/**
 * `printf('%015d|%s|%s', ts, id, model)`: ordered by time then id (times are
 * at most 15 digits, ids ASCII), so the greatest key is the latest call's.
 */
export function modelKey(timeMs: number, id: string, model: string): string {
  return `${String(timeMs).padStart(15, "0")}|${id}|${model}`;
}

/** What the ingest logic reads of a stored call. */
export interface StoredToolCall {
  outcome: string;
  /** `otlp_logs` or `otlp_traces`: how the stored row reached us. */
  source: string;
  traceId: string | null;
  spanId: string | null;
}

/** A decision stored for a call id, waiting for (or annotating) its result. */
export interface StoredDecision {
  decision: string;
  decisionSource: string | null;
}

/**
 * The reads and writes of the ingest path inside one engine's transaction.
 * Reads see the writes made before them in the same batch.
 */
export interface IngestStore {
  /** The next `seq` of the transaction. */
  nextSeq(): number;
  /** The stored call with this id. */
  findToolCall(id: string): StoredToolCall | undefined;
  deleteToolCall(id: string): void;
  insertToolCall(row: ToolCallRow): void;
  /** Sets the call's trace and span ids (its span arrived after its log). */
  annotateTrace(id: string, traceId: string, spanId: string | null, seq: number): void;
  /** Sets the call's decision (a decision event wins over what its result said). */
  annotateDecision(id: string, decision: string, decisionSource: string | null, seq: number): void;
  findDecision(orgId: string, sessionId: string, toolCallId: string): StoredDecision | undefined;
  upsertDecision(
    orgId: string,
    sessionId: string,
    toolCallId: string,
    decision: string,
    decisionSource: string | null,
  ): void;
  insertRiskFlag(row: RiskFlagRow): void;
  insertDomainHit(row: DomainHitRow): void;
  /** Drops a call's flags and domain hits, leaving a tombstone with `seq` for the replica. */
  forgetDetections(id: string, seq: number): void;
  /** Inserts unless the id is stored; whether it inserted. */
  insertModelCall(row: ModelCallRow): boolean;
  /** A stored model call's reported cost (null: none), or undefined when the id is not stored. */
  findModelCallCost(id: string): number | null | undefined;
  /** Sets the cost of a stored model call that reported none, dropping its estimate. */
  fillModelCallCost(id: string, costUsd: number, seq: number): void;
  /** Inserts unless the session is stored. */
  ensureSession(row: NewSessionRow): void;
  /** The provider of a stored session. */
  sessionProvider(orgId: string, sessionId: string): string;
  setSessionProvider(seq: number, provider: string, orgId: string, sessionId: string): void;
  /** Names the session that spawned a session, unless one is named already. */
  setSessionParent(seq: number, parent: string, orgId: string, sessionId: string): void;
  changeSession(values: SessionChangeValues): void;
  /** Recomputes a session's counts, first/last seen and model from its stored calls. */
  recountSession(seq: number, orgId: string, sessionId: string): void;
  /** Adds a batch's calls to a session's row for one actor and agent. */
  changeSessionActor(values: SessionActorChangeValues): void;
  /** Rebuilds a session's rows per actor and agent from its stored calls; rows left without calls go. */
  recountSessionActors(orgId: string, sessionId: string): void;
}

/** The summary of an export that stored nothing. */
export function emptyIngestSummary(): IngestSummary {
  return { toolCalls: 0, modelCalls: 0, costUsd: 0, toolCallErrors: 0, riskFlags: {} };
}

/**
 * Stores every event of one export request through `store`: idempotent ids,
 * a rejected call replaced by its later result, decisions paired with their
 * calls, model calls inheriting the session's provider, detection on every
 * stored call, each touched session's row updated once at the end. The row
 * ids and detection findings may be computed ahead (`row_ids.ts`,
 * `call_detection.ts`), off the writer's thread.
 */
export function ingestEvents(
  store: IngestStore,
  sender: Sender,
  events: readonly TelemetryEvent[],
  options: { redactSecrets: boolean },
  ids: readonly string[] = eventRowIds(sender, events),
  findings?: readonly (CallFindings | null)[],
): IngestSummary {
  const batch = new EventBatch(store, sender, options.redactSecrets);
  const summary = batch.summary;
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    const id = ids[i]!;
    switch (event.kind) {
      case "tool_call":
        if (batch.storeToolCall(id, event, findings?.[i])) summary.toolCalls++;
        break;
      case "decision":
        if (batch.storeDecision(id, event, findings?.[i])) summary.toolCalls++;
        break;
      case "model_call":
        if (batch.storeModelCall(id, event)) summary.modelCalls++;
        break;
      case "session_info":
        batch.storeSessionInfo(event);
        break;
    }
  }
  batch.flushSessions();
  return summary;
}

/** A session's pending changes within one batch. */
interface SessionDelta {
  sessionId: string;
  calls: number;
  errors: number;
  oks: number;
  firstSeen: number;
  lastSeen: number;
  agentVersion: string;
  model: string;
  modelTs: number;
  cost: number;
  recount: boolean;
}

/** A batch's pending changes to a session's calls by its sender under one agent. */
interface SessionActorDelta {
  sessionId: string;
  agentSystem: string;
  calls: number;
  errors: number;
  oks: number;
  firstSeen: number;
  lastSeen: number;
  modelKey: string | null;
}

function decisionKey(sessionId: string, toolCallId: string): string {
  return `${sessionId}\u0000${toolCallId}`;
}

/** The events of one export request, applied in order. */
class EventBatch {
  readonly #store: IngestStore;
  readonly #sender: Sender;
  readonly #redact: boolean;
  readonly #sessions = new Map<string, SessionDelta>();
  /** By session and agent: every call of a batch comes from its one sender. */
  readonly #sessionActors = new Map<string, SessionActorDelta>();
  /** Decisions this batch stored, by session and agent call id: no read for their results. */
  readonly #decisions = new Map<string, StoredDecision>();
  /** Session providers this batch read or set, by session. */
  readonly #providers = new Map<string, string>();
  /** What the batch stored: calls, cost, errors and flags. */
  readonly summary: IngestSummary = emptyIngestSummary();

  constructor(store: IngestStore, sender: Sender, redact: boolean) {
    this.#store = store;
    this.#sender = sender;
    this.#redact = redact;
  }

  /**
   * A call reported twice, as a log event and as a span (Claude Code's
   * `claude_code.tool` spans), is one row whatever the arrival order: the
   * log's outcome, arguments, decision and duration win, the span gives the
   * trace and span ids. Otherwise a stored call stays, except a stored reject
   * that the call's result follows.
   */
  storeToolCall(id: string, event: ToolCallEvent, findings?: CallFindings | null): boolean {
    const store = this.#store;
    const existing = store.findToolCall(id);
    const fromSpan = event.source === "otlp_traces";
    if (existing) {
      const storedFromSpan = existing.source === "otlp_traces";
      if (fromSpan && !storedFromSpan) {
        if (event.traceId !== undefined) {
          store.annotateTrace(id, event.traceId, event.spanId ?? null, store.nextSeq());
        }
        return false;
      }
      if (!storedFromSpan || fromSpan) {
        if (existing.outcome !== "rejected") return false;
      }
    }
    // A decision event for the call wins over the decision a result carries
    // or implies (Codex's reviewer denial and the refusal its result reports),
    // so the stored decision never depends on which arrived first.
    let decision = event.decision;
    let decisionSource = event.decisionSource;
    if (event.toolCallId !== undefined) {
      const stored = this.#decisions.get(decisionKey(event.sessionId, event.toolCallId)) ??
        store.findDecision(this.#sender.orgId, event.sessionId, event.toolCallId);
      if (stored !== undefined) {
        decision = stored.decision;
        decisionSource = stored.decisionSource ?? undefined;
      }
    }
    // A result after a stored reject, or a log after its span, replaces it.
    return this.#storeCall(id, { ...event, decision, decisionSource }, event, findings, existing);
  }

  storeDecision(id: string, event: DecisionEvent, findings?: CallFindings | null): boolean {
    const store = this.#store;
    const source = event.decisionSource ?? null;
    store.upsertDecision(
      this.#sender.orgId,
      event.sessionId,
      event.toolCallId,
      event.decision,
      source,
    );
    this.#decisions.set(decisionKey(event.sessionId, event.toolCallId), {
      decision: event.decision,
      decisionSource: source,
    });
    const existing = store.findToolCall(id);
    if (existing && !(event.rejects && existing.source === "otlp_traces")) {
      store.annotateDecision(id, event.decision, source, store.nextSeq());
      return false;
    }
    if (!event.rejects) return false;
    const row: PendingCall = {
      ...event,
      outcome: "rejected",
      durationMs: null,
      resultSizeBytes: null,
    };
    // The log's reject replaces the span of the same call.
    return this.#storeCall(id, row, event, findings, existing);
  }

  storeModelCall(id: string, event: ModelCallEvent): boolean {
    const store = this.#store;
    const { orgId, actorId } = this.#sender;
    const delta = this.#sessionDelta(event);
    const storedCost = store.findModelCallCost(id);
    if (storedCost !== undefined) {
      // One request reported twice (Claude Code's api_request log and its
      // llm_request span): one row, whichever came first; the log's cost
      // fills a row the span made without one.
      if (storedCost === null && event.costUsd !== null) {
        store.fillModelCallCost(id, event.costUsd, store.nextSeq());
        delta.cost += event.costUsd;
        this.summary.costUsd += event.costUsd;
      }
      return false;
    }
    let provider = event.providerName;
    if (provider === "") {
      provider = this.#providers.get(event.sessionId) ??
        store.sessionProvider(orgId, event.sessionId);
      this.#providers.set(event.sessionId, provider);
    }
    const inserted = store.insertModelCall({
      id,
      org_id: orgId,
      seq: store.nextSeq(),
      session_id: event.sessionId,
      actor_id: actorId,
      ts: event.timeMs,
      agent_system: event.agentSystem,
      provider_name: provider,
      model: event.model,
      input_tokens: event.inputTokens,
      output_tokens: event.outputTokens,
      cache_read_tokens: event.cacheReadTokens,
      cache_creation_tokens: event.cacheCreationTokens,
      cost_usd: event.costUsd,
      duration_ms: event.durationMs,
      // Only a call that reports no cost is estimated (docs/design.md §9).
      estimated_cost_usd: event.costUsd === null ? estimateCostUsd(event.model, event) : null,
    });
    if (!inserted) return false;
    if (event.costUsd !== null) {
      delta.cost += event.costUsd;
      this.summary.costUsd += event.costUsd;
    }
    return true;
  }

  storeSessionInfo(event: SessionInfoEvent): void {
    const store = this.#store;
    if (event.parentSessionId !== undefined) {
      this.#sessionDelta(event);
      store.setSessionParent(
        store.nextSeq(),
        event.parentSessionId,
        this.#sender.orgId,
        event.sessionId,
      );
    }
    if (event.providerName === "") return;
    this.#sessionDelta(event);
    store.setSessionProvider(
      store.nextSeq(),
      event.providerName,
      this.#sender.orgId,
      event.sessionId,
    );
    this.#providers.set(event.sessionId, event.providerName);
  }

  /** Applies each touched session's delta once; recounts where a call was replaced. */
  flushSessions(): void {
    const store = this.#store;
    const { orgId, actorId } = this.#sender;
    for (const delta of this.#sessionActors.values()) {
      // A recounted session's rows are rebuilt from its calls below.
      if (this.#sessions.get(delta.sessionId)!.recount) continue;
      store.changeSessionActor([
        orgId,
        delta.sessionId,
        actorId,
        delta.agentSystem,
        delta.firstSeen,
        delta.lastSeen,
        delta.calls,
        delta.errors,
        delta.oks,
        delta.modelKey,
      ]);
    }
    this.#sessionActors.clear();
    for (const delta of this.#sessions.values()) {
      if (delta.calls > 0 || delta.cost !== 0) {
        const seen = delta.calls > 0;
        store.changeSession([
          store.nextSeq(),
          seen ? delta.firstSeen : null,
          seen ? delta.lastSeen : null,
          delta.calls,
          delta.errors,
          delta.oks,
          delta.agentVersion,
          delta.model,
          delta.model === "" ? null : delta.modelTs,
          delta.cost,
          orgId,
          delta.sessionId,
        ]);
      }
      if (delta.recount) {
        store.recountSession(store.nextSeq(), orgId, delta.sessionId);
        store.recountSessionActors(orgId, delta.sessionId);
      }
    }
    this.#sessions.clear();
  }

  /** This batch's pending changes to a session's row, creating the row when the session is new. */
  #sessionDelta(
    event: Pick<TelemetryEvent, "sessionId" | "agentSystem" | "agentVersion">,
  ): SessionDelta {
    let delta = this.#sessions.get(event.sessionId);
    if (!delta) {
      const store = this.#store;
      store.ensureSession({
        org_id: this.#sender.orgId,
        session_id: event.sessionId,
        seq: store.nextSeq(),
        actor_id: this.#sender.actorId,
        agent_system: event.agentSystem,
        agent_version: event.agentVersion,
      });
      delta = {
        sessionId: event.sessionId,
        calls: 0,
        errors: 0,
        oks: 0,
        firstSeen: Infinity,
        lastSeen: -Infinity,
        agentVersion: "",
        model: "",
        modelTs: -Infinity,
        cost: 0,
        recount: false,
      };
      this.#sessions.set(event.sessionId, delta);
    }
    return delta;
  }

  #addCallToSession(id: string, row: PendingCall): void {
    const delta = this.#sessionDelta(row);
    delta.calls++;
    if (row.outcome === "error") delta.errors++;
    if (row.outcome === "ok") delta.oks++;
    delta.firstSeen = Math.min(delta.firstSeen, row.timeMs);
    delta.lastSeen = Math.max(delta.lastSeen, row.timeMs);
    if (delta.agentVersion === "") delta.agentVersion = row.agentVersion;
    if (row.model && row.timeMs >= delta.modelTs) {
      delta.model = row.model;
      delta.modelTs = row.timeMs;
    }
    this.#addCallToSessionActor(id, row);
  }

  #addCallToSessionActor(id: string, row: PendingCall): void {
    const key = `${row.sessionId}\u0000${row.agentSystem}`;
    let delta = this.#sessionActors.get(key);
    if (!delta) {
      delta = {
        sessionId: row.sessionId,
        agentSystem: row.agentSystem,
        calls: 0,
        errors: 0,
        oks: 0,
        firstSeen: row.timeMs,
        lastSeen: row.timeMs,
        modelKey: null,
      };
      this.#sessionActors.set(key, delta);
    }
    delta.calls++;
    if (row.outcome === "error") delta.errors++;
    if (row.outcome === "ok") delta.oks++;
    delta.firstSeen = Math.min(delta.firstSeen, row.timeMs);
    delta.lastSeen = Math.max(delta.lastSeen, row.timeMs);
    if (row.model) {
      const key = modelKey(row.timeMs, id, row.model);
      if (delta.modelKey === null || key > delta.modelKey) delta.modelKey = key;
    }
  }

  /**
   * `findings`: computed ahead from `event`; undefined: detect here.
   * `replaced`: the stored row this one replaces under the same id, if any.
   */
  /**
   * Stores `row` as the call `id`: a new call of its session, or the row that
   * replaces the stored call `replaced` under the same id, keeping a span's
   * trace ids. True when the call is new.
   */
  #storeCall(
    id: string,
    row: PendingCall,
    event: ToolCallEvent | DecisionEvent,
    findings: CallFindings | null | undefined,
    replaced: StoredToolCall | undefined,
  ): boolean {
    if (replaced === undefined) {
      this.#insertToolCall(id, row, event, findings);
      this.#addCallToSession(id, row);
      return true;
    }
    if (replaced.source === "otlp_traces" && replaced.traceId !== null) {
      row.traceId = replaced.traceId;
      row.spanId = replaced.spanId ?? undefined;
    }
    const store = this.#store;
    store.forgetDetections(id, store.nextSeq());
    store.deleteToolCall(id);
    this.#insertToolCall(id, row, event, findings, replaced);
    this.#sessionDelta(event).recount = true;
    return false;
  }

  #insertToolCall(
    id: string,
    row: PendingCall,
    event: ToolCallEvent | DecisionEvent,
    findings: CallFindings | null | undefined,
    replaced?: StoredToolCall,
  ): void {
    const detection = findings === undefined
      ? detectEventCall(event, this.#redact)
      : detectionOf(event, findings);
    // Every free-form text is stored as detection returns it: redacted unless --keep-secrets.
    const store = this.#store;
    const { orgId, actorId } = this.#sender;
    const seq = store.nextSeq();
    store.insertToolCall(toolCallRow({ id, orgId, actorId, seq }, row, detection));
    const call: StoredCall = {
      id,
      orgId,
      sessionId: row.sessionId,
      timeMs: row.timeMs,
      toolName: row.toolName,
      toolCallId: row.toolCallId ?? id,
    };
    for (const values of riskFlagRows(call, detection, seq)) store.insertRiskFlag(values);
    for (const values of domainHitRows(call, detection, seq)) store.insertDomainHit(values);
    this.#countStored(row, detection.flags, replaced);
  }

  /**
   * Adds a stored call to the summary: an error unless the row it replaces
   * was one already; its flags when the call is new, or when a log's row
   * replaces its span's (a span carries no arguments or result to flag). A
   * row replacing a stored reject (its result, or a retried export's reject
   * again) adds none: a rejected call ran nothing, and its arguments were
   * flagged with the reject.
   */
  #countStored(
    row: PendingCall,
    flags: readonly { flag: FlagKind }[],
    replaced?: StoredToolCall,
  ): void {
    const summary = this.summary;
    if (row.outcome === "error" && replaced?.outcome !== "error") summary.toolCallErrors++;
    const fromSpan = (source: string) => source === "otlp_traces";
    if (replaced !== undefined && !(fromSpan(replaced.source) && !fromSpan(row.source))) return;
    for (const { flag } of flags) summary.riskFlags[flag] = (summary.riskFlags[flag] ?? 0) + 1;
  }
}
