/**
 * The engine-independent part of the ingest write path: which rows the events
 * of one export request store, given what is stored already. Each engine
 * supplies an {@link IngestStore} that reads and writes inside its own
 * transaction (SQLite at once, PostgreSQL from rows read ahead and written in
 * bulk), so both store exactly the same rows.
 *
 * @module
 */
import { createHash } from "node:crypto";
import {
  CALL_TEXT_NAMES,
  callTexts,
  type Detection,
  detectToolCall,
  type RiskFinding,
} from "../detect/mod.ts";
import type {
  DecisionEvent,
  ModelCallEvent,
  SessionInfoEvent,
  TelemetryEvent,
  ToolCallEvent,
} from "../ingest/types.ts";

/** What one export request stored. */
export interface IngestSummary {
  toolCalls: number;
  modelCalls: number;
}

/** The sender of a batch: an organization and one of its actors. */
export interface Sender {
  orgId: string;
  actorId: string;
}

/** A stable row id from the organization, session and the event's identity. */
export function deriveRowId(prefix: string, orgId: string, sessionId: string, identity: string) {
  return `${prefix}_${sessionKey(orgId, sessionId)}${
    hex(`${orgId}\u0000${sessionId}\u0000${identity}`, 20)
  }`;
}

/**
 * 12 hex digits naming a session. They open its rows' ids, so one session's
 * rows sit together in the id index: an export touches a few index pages per
 * session instead of one random page per row (random keys made ingest slow
 * down as the table grew).
 */
export function sessionKey(orgId: string, sessionId: string): string {
  const key = `${orgId}\u0000${sessionId}`;
  let cached = sessionKeys.get(key);
  if (cached === undefined) {
    if (sessionKeys.size >= 4096) sessionKeys.clear();
    cached = hex(key, 12);
    sessionKeys.set(key, cached);
  }
  return cached;
}

const sessionKeys = new Map<string, string>();

function hex(text: string, digits: number): string {
  return createHash("sha256").update(text).digest("hex").slice(0, digits);
}

/** The row id each event would store under (`""` for session facts, which have none). */
export function eventRowIds(sender: Sender, events: readonly TelemetryEvent[]): string[] {
  return events.map((event) =>
    event.kind === "session_info" ? "" : deriveRowId(
      event.kind === "model_call" ? "mc" : "tc",
      sender.orgId,
      event.sessionId,
      event.identity,
    )
  );
}

/** A `tool_calls` row in the column order of the insert statements. */
export type ToolCallValues = [
  id: string,
  orgId: string,
  seq: number,
  sessionId: string,
  actorId: string,
  ts: number,
  toolName: string,
  toolType: string,
  category: string,
  outcome: string,
  durationMs: number | null,
  resultSizeBytes: number | null,
  agentSystem: string,
  agentVersion: string,
  model: string | null,
  errorMessage: string | null,
  errorType: string | null,
  decision: string | null,
  decisionSource: string | null,
  promptId: string | null,
  agentName: string | null,
  providerName: string | null,
  toolCallId: string | null,
  toolUseId: string | null,
  toolDescription: string | null,
  source: string,
  arguments: string | null,
  result: string | null,
  mcpServerName: string | null,
  mcpServerScope: string | null,
  osType: string | null,
  hostArch: string | null,
  terminalType: string | null,
  cwd: string | null,
  traceId: string | null,
  spanId: string | null,
];

/** A `risk_flags` row in column order. */
export type RiskFlagValues = [
  callId: string,
  flag: string,
  orgId: string,
  seq: number,
  sessionId: string,
  ts: number,
  toolCallId: string,
  toolName: string,
  evidence: string,
];

/** A `domain_hits` row in column order. */
export type DomainHitValues = [
  callId: string,
  domain: string,
  scheme: string,
  orgId: string,
  seq: number,
  sessionId: string,
  ts: number,
];

/** A `model_calls` row in column order. */
export type ModelCallValues = [
  id: string,
  orgId: string,
  seq: number,
  sessionId: string,
  actorId: string,
  ts: number,
  agentSystem: string,
  providerName: string,
  model: string,
  inputTokens: number,
  outputTokens: number,
  cacheReadTokens: number,
  cacheCreationTokens: number,
  costUsd: number | null,
  durationMs: number | null,
];

/** A new `sessions` row: the first event of a session names its actor and agent. */
export type NewSessionValues = [
  orgId: string,
  sessionId: string,
  seq: number,
  actorId: string,
  agentSystem: string,
  agentVersion: string,
];

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
  insertToolCall(values: ToolCallValues): void;
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
  insertRiskFlag(values: RiskFlagValues): void;
  insertDomainHit(values: DomainHitValues): void;
  /** Drops a call's flags and domain hits, leaving a tombstone with `seq` for the replica. */
  forgetDetections(id: string, seq: number): void;
  /** Inserts unless the id is stored; whether it inserted. */
  insertModelCall(values: ModelCallValues): boolean;
  /** Inserts unless the session is stored. */
  ensureSession(values: NewSessionValues): void;
  /** The provider of a stored session. */
  sessionProvider(orgId: string, sessionId: string): string;
  setSessionProvider(seq: number, provider: string, orgId: string, sessionId: string): void;
  changeSession(values: SessionChangeValues): void;
  /** Recomputes a session's counts, first/last seen and model from its stored calls. */
  recountSession(seq: number, orgId: string, sessionId: string): void;
}

/**
 * Stores every event of one export request through `store`: idempotent ids,
 * a rejected call replaced by its later result, decisions paired with their
 * calls, model calls inheriting the session's provider, detection on every
 * stored call, each touched session's row updated once at the end.
 */
export function ingestEvents(
  store: IngestStore,
  sender: Sender,
  events: readonly TelemetryEvent[],
  options: { redactSecrets: boolean },
  ids: readonly string[] = eventRowIds(sender, events),
): IngestSummary {
  const batch = new EventBatch(store, sender, options.redactSecrets);
  const summary: IngestSummary = { toolCalls: 0, modelCalls: 0 };
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    const id = ids[i]!;
    switch (event.kind) {
      case "tool_call":
        if (batch.storeToolCall(id, event)) summary.toolCalls++;
        break;
      case "decision":
        if (batch.storeDecision(id, event)) summary.toolCalls++;
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

type ToolCallRow = Omit<ToolCallEvent, "kind" | "sessionId" | "identity"> & {
  sessionId: string;
};

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

/** The events of one export request, applied in order. */
class EventBatch {
  readonly #store: IngestStore;
  readonly #sender: Sender;
  readonly #redact: boolean;
  readonly #sessions = new Map<string, SessionDelta>();

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
  storeToolCall(id: string, event: ToolCallEvent): boolean {
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
      const stored = store.findDecision(this.#sender.orgId, event.sessionId, event.toolCallId);
      if (stored !== undefined) {
        decision = stored.decision;
        decisionSource = stored.decisionSource ?? undefined;
      }
    }
    const row: ToolCallRow = { ...event, decision, decisionSource };
    if (existing) {
      // A result after a stored reject, or a log after its span: the new row
      // wins under the same id, keeping a span's trace ids.
      if (existing.source === "otlp_traces" && existing.traceId !== null) {
        row.traceId = existing.traceId;
        row.spanId = existing.spanId ?? undefined;
      }
      store.forgetDetections(id, store.nextSeq());
      store.deleteToolCall(id);
      this.#insertToolCall(id, row);
      this.#sessionDelta(event).recount = true;
      return false;
    }
    this.#insertToolCall(id, row);
    this.#addCallToSession(row);
    return true;
  }

  storeDecision(id: string, event: DecisionEvent): boolean {
    const store = this.#store;
    const source = event.decisionSource ?? null;
    store.upsertDecision(
      this.#sender.orgId,
      event.sessionId,
      event.toolCallId,
      event.decision,
      source,
    );
    const existing = store.findToolCall(id);
    if (existing && !(event.rejects && existing.source === "otlp_traces")) {
      store.annotateDecision(id, event.decision, source, store.nextSeq());
      return false;
    }
    if (!event.rejects) return false;
    const row: ToolCallRow = {
      ...event,
      outcome: "rejected",
      durationMs: null,
      resultSizeBytes: null,
    };
    if (existing) {
      // The log's reject wins over the span of the same call, keeping its trace ids.
      if (existing.traceId !== null) {
        row.traceId = existing.traceId;
        row.spanId = existing.spanId ?? undefined;
      }
      store.forgetDetections(id, store.nextSeq());
      store.deleteToolCall(id);
      this.#insertToolCall(id, row);
      this.#sessionDelta(event).recount = true;
      return false;
    }
    this.#insertToolCall(id, row);
    this.#addCallToSession(row);
    return true;
  }

  storeModelCall(id: string, event: ModelCallEvent): boolean {
    const store = this.#store;
    const { orgId, actorId } = this.#sender;
    const delta = this.#sessionDelta(event);
    const provider = event.providerName === ""
      ? store.sessionProvider(orgId, event.sessionId)
      : event.providerName;
    const inserted = store.insertModelCall([
      id,
      orgId,
      store.nextSeq(),
      event.sessionId,
      actorId,
      event.timeMs,
      event.agentSystem,
      provider,
      event.model,
      event.inputTokens,
      event.outputTokens,
      event.cacheReadTokens,
      event.cacheCreationTokens,
      event.costUsd,
      event.durationMs,
    ]);
    if (!inserted) return false;
    if (event.costUsd !== null) delta.cost += event.costUsd;
    return true;
  }

  storeSessionInfo(event: SessionInfoEvent): void {
    if (event.providerName === "") return;
    this.#sessionDelta(event);
    const store = this.#store;
    store.setSessionProvider(
      store.nextSeq(),
      event.providerName,
      this.#sender.orgId,
      event.sessionId,
    );
  }

  /** Applies each touched session's delta once; recounts where a call was replaced. */
  flushSessions(): void {
    const store = this.#store;
    const orgId = this.#sender.orgId;
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
      if (delta.recount) store.recountSession(store.nextSeq(), orgId, delta.sessionId);
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
      store.ensureSession([
        this.#sender.orgId,
        event.sessionId,
        store.nextSeq(),
        this.#sender.actorId,
        event.agentSystem,
        event.agentVersion,
      ]);
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

  #addCallToSession(row: ToolCallRow): void {
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
  }

  #insertToolCall(id: string, row: ToolCallRow): void {
    const detection = detectToolCall({
      toolName: row.toolName,
      toolType: row.toolType,
      category: row.category,
      ...(row.arguments === undefined ? {} : { arguments: row.arguments }),
      ...(row.result === undefined ? {} : { result: row.result }),
      texts: callTexts(row),
    }, { redact: this.#redact });
    // Every free-form text is stored as detection returns it: redacted unless --keep-secrets.
    const texts = detection.texts ?? {};
    const store = this.#store;
    const { orgId, actorId } = this.#sender;
    const seq = store.nextSeq();
    store.insertToolCall([
      id,
      orgId,
      seq,
      row.sessionId,
      actorId,
      row.timeMs,
      row.toolName,
      row.toolType,
      row.category,
      row.outcome,
      row.durationMs,
      row.resultSizeBytes,
      row.agentSystem,
      row.agentVersion,
      row.model ?? null,
      texts.errorMessage ?? null,
      texts.errorType ?? null,
      row.decision ?? null,
      row.decisionSource ?? null,
      row.promptId ?? null,
      texts.agentName ?? null,
      row.providerName ?? null,
      row.toolCallId ?? null,
      row.toolUseId ?? null,
      texts.toolDescription ?? null,
      row.source,
      detection.arguments ?? null,
      detection.result ?? null,
      texts.mcpServerName ?? null,
      texts.mcpServerScope ?? null,
      row.osType ?? null,
      row.hostArch ?? null,
      row.terminalType ?? null,
      texts.cwd ?? null,
      row.traceId ?? null,
      row.spanId ?? null,
    ]);
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
  }
}

/** The identity of a stored call that its flags and domain hits repeat. */
export interface StoredCall {
  id: string;
  orgId: string;
  sessionId: string;
  timeMs: number;
  toolName: string;
  /** The agent's call id, else the row id. */
  toolCallId: string;
}

/** The `risk_flags` rows of a call's detection. */
export function riskFlagRows(
  call: StoredCall,
  detection: Detection,
  seq: number,
): RiskFlagValues[] {
  return detection.flags.map((finding) => [
    call.id,
    finding.flag,
    call.orgId,
    seq,
    call.sessionId,
    call.timeMs,
    call.toolCallId,
    call.toolName,
    finding.evidence,
  ]);
}

/** The `domain_hits` rows of a call's detection. */
export function domainHitRows(
  call: StoredCall,
  detection: Detection,
  seq: number,
): DomainHitValues[] {
  return detection.domains.map((hit) => [
    call.id,
    hit.domain,
    hit.scheme,
    call.orgId,
    seq,
    call.sessionId,
    call.timeMs,
  ]);
}

/** A stored call as `detect rescan` reads it. */
export interface RescanRow {
  id: string;
  "org_id": string;
  "session_id": string;
  ts: number;
  "tool_name": string;
  "tool_type": string;
  category: string;
  "tool_call_id": string | null;
  arguments: string | null;
  result: string | null;
  "error_message": string | null;
  "error_type": string | null;
  "tool_description": string | null;
  "agent_name": string | null;
  "mcp_server_name": string | null;
  "mcp_server_scope": string | null;
  cwd: string | null;
}

/** A rescanned call's stored texts, by their detection names. */
function rescanTexts(row: RescanRow) {
  return {
    errorMessage: row.error_message ?? undefined,
    errorType: row.error_type ?? undefined,
    toolDescription: row.tool_description ?? undefined,
    agentName: row.agent_name ?? undefined,
    mcpServerName: row.mcp_server_name ?? undefined,
    mcpServerScope: row.mcp_server_scope ?? undefined,
    cwd: row.cwd ?? undefined,
  };
}

/**
 * The texts to store for a rescanned call, in the order of the update
 * statements (arguments, result, then the other texts), or null when
 * detection left every one of them as stored.
 */
export function rescannedTexts(row: RescanRow, detection: Detection): (string | null)[] | null {
  const texts = detection.texts ?? {};
  const stored = rescanTexts(row);
  const values = [
    detection.arguments ?? null,
    detection.result ?? null,
    ...CALL_TEXT_NAMES.map((name) => texts[name] ?? stored[name] ?? null),
  ];
  const before = [
    row.arguments,
    row.result,
    ...CALL_TEXT_NAMES.map((name) => stored[name] ?? null),
  ];
  return values.every((value, i) => value === before[i]) ? null : values;
}

/** The identity of a rescanned call. */
export function storedCallOf(row: RescanRow): StoredCall {
  return {
    id: row.id,
    orgId: row.org_id,
    sessionId: row.session_id,
    timeMs: row.ts,
    toolName: row.tool_name,
    toolCallId: row.tool_call_id ?? row.id,
  };
}

/**
 * Detection over a stored call again. A credential flag whose secret was
 * redacted at ingest (`keptEvidence`) is kept: the text no longer holds it.
 */
export function rescanDetection(
  row: RescanRow,
  keptEvidence: string | undefined,
  options: { redactSecrets: boolean },
): Detection {
  const detection = detectToolCall({
    toolName: row.tool_name,
    toolType: row.tool_type as ToolCallEvent["toolType"],
    category: row.category as ToolCallEvent["category"],
    ...(row.arguments === null ? {} : { arguments: row.arguments }),
    ...(row.result === null ? {} : { result: row.result }),
    texts: callTexts(rescanTexts(row)),
  }, { redact: options.redactSecrets });
  const redacted = [row.arguments, row.result, ...Object.values(rescanTexts(row))]
    .some((text) => text?.includes("[REDACTED:"));
  if (
    keptEvidence !== undefined && redacted &&
    !detection.flags.some((f) => f.flag === "credential_detected")
  ) {
    detection.flags.push({ flag: "credential_detected", evidence: keptEvidence });
    detection.flags.sort(byFlag);
  }
  return detection;
}

function byFlag(a: RiskFinding, b: RiskFinding): number {
  return a.flag < b.flag ? -1 : 1;
}
