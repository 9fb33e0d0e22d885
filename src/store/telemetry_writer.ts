/**
 * The ingest write path: stores the events of one export request in one
 * SQLite transaction, with detection, idempotent ids and the session rows
 * kept current.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import ingestSql from "../../sql/sqlite/ingest.sql" with { type: "text" };
import { type Detection, detectToolCall } from "../detect/mod.ts";
import type {
  DecisionEvent,
  ModelCallEvent,
  SessionInfoEvent,
  TelemetryEvent,
  ToolCallEvent,
} from "../ingest/types.ts";
import { namedSql, parseNamedSql } from "./named_sql.ts";
import { tx } from "./sqlite.ts";

const statementsSql = parseNamedSql(ingestSql);

/** Options of the write path. */
export interface WriterOptions {
  /** Replace detected secrets by `[REDACTED:<kind>]` in stored arguments and results. */
  redactSecrets: boolean;
}

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
 * The first 12 hex digits of a row id name its session, so one session's rows
 * sit together in the id index: an export touches a few index pages per
 * session instead of one random page per row (random keys made ingest slow
 * down as the table grew).
 */
function sessionKey(orgId: string, sessionId: string): string {
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

type ToolCallRow = Omit<ToolCallEvent, "kind" | "sessionId" | "identity"> & {
  sessionId: string;
};

/** The identity of a stored call that its flags and domain hits repeat. */
interface StoredCall {
  id: string;
  orgId: string;
  sessionId: string;
  timeMs: number;
  toolName: string;
  toolCallId: string;
}

interface RescanRow {
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

/** Writes telemetry into `telemetry.db`. */
export class TelemetryWriter {
  readonly #db: DatabaseSync;
  readonly #options: WriterOptions;
  readonly #statements = new Map<string, StatementSync>();
  readonly #sessions = new Map<string, SessionDelta>();
  #seq = 0;

  constructor(db: DatabaseSync, options: WriterOptions) {
    this.#db = db;
    this.#options = options;
  }

  /** Throws unless the telemetry store takes a write transaction. */
  probe(): void {
    tx(this.#db, () => this.#run("read_seq", "get"));
  }

  /** SQLite's current `seq`: everything acknowledged so far. */
  currentSeq(): number {
    return Number((this.#run("read_seq", "get") as { value: number }).value);
  }

  /** Stores every event of one export request, all or nothing. */
  ingest(sender: Sender, events: readonly TelemetryEvent[]): IngestSummary {
    const summary: IngestSummary = { toolCalls: 0, modelCalls: 0 };
    if (events.length === 0) return summary;
    tx(this.#db, () => {
      this.#seq = Number((this.#run("read_seq", "get") as { value: number }).value);
      this.#sessions.clear();
      for (const event of events) {
        switch (event.kind) {
          case "tool_call":
            if (this.#storeToolCall(sender, event)) summary.toolCalls++;
            break;
          case "decision":
            if (this.#storeDecision(sender, event)) summary.toolCalls++;
            break;
          case "model_call":
            if (this.#storeModelCall(sender, event)) summary.modelCalls++;
            break;
          case "session_info":
            this.#storeSessionInfo(sender, event);
            break;
        }
      }
      this.#flushSessions(sender.orgId);
      this.#run("write_seq", "run", this.#seq);
    });
    return summary;
  }

  #storeToolCall(sender: Sender, event: ToolCallEvent): boolean {
    const id = deriveRowId("tc", sender.orgId, event.sessionId, event.identity);
    const existing = this.#run("find_tool_call", "get", id) as { outcome: string } | undefined;
    if (existing && existing.outcome !== "rejected") return false;
    let decision = event.decision;
    let decisionSource = event.decisionSource;
    if (decision === undefined && event.toolCallId !== undefined) {
      const stored = this.#run(
        "find_decision",
        "get",
        sender.orgId,
        event.sessionId,
        event.toolCallId,
      ) as { decision: string; decision_source: string | null } | undefined;
      decision = stored?.decision;
      decisionSource = stored?.decision_source ?? undefined;
    }
    const row: ToolCallRow = { ...event, decision, decisionSource };
    if (existing) {
      // A result after a stored reject: the result wins, under the same id.
      this.#forgetDetections(id);
      this.#run("delete_tool_call", "run", id);
      this.#insertToolCall(sender, id, row);
      this.#sessionDelta(sender, event).recount = true;
      return false;
    }
    this.#insertToolCall(sender, id, row);
    this.#addCallToSession(sender, row);
    return true;
  }

  #storeDecision(sender: Sender, event: DecisionEvent): boolean {
    this.#run(
      "upsert_decision",
      "run",
      sender.orgId,
      event.sessionId,
      event.toolCallId,
      event.decision,
      event.decisionSource ?? null,
    );
    const id = deriveRowId("tc", sender.orgId, event.sessionId, event.identity);
    const existing = this.#run("find_tool_call", "get", id);
    if (existing) {
      this.#run(
        "annotate_decision",
        "run",
        event.decision,
        event.decisionSource ?? null,
        this.#nextSeq(),
        id,
      );
      return false;
    }
    if (!event.rejects) return false;
    const row: ToolCallRow = {
      ...event,
      outcome: "rejected",
      durationMs: null,
      resultSizeBytes: null,
    };
    this.#insertToolCall(sender, id, row);
    this.#addCallToSession(sender, row);
    return true;
  }

  #storeModelCall(sender: Sender, event: ModelCallEvent): boolean {
    const id = deriveRowId("mc", sender.orgId, event.sessionId, event.identity);
    const delta = this.#sessionDelta(sender, event);
    let provider = event.providerName;
    if (provider === "") {
      const session = this.#run("find_session", "get", sender.orgId, event.sessionId) as {
        provider_name: string;
      };
      provider = session.provider_name;
    }
    const inserted = this.#run(
      "insert_model_call",
      "run",
      id,
      sender.orgId,
      this.#nextSeq(),
      event.sessionId,
      sender.actorId,
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
    ) as { changes: number | bigint };
    if (Number(inserted.changes) === 0) return false;
    if (event.costUsd !== null) delta.cost += event.costUsd;
    return true;
  }

  #storeSessionInfo(sender: Sender, event: SessionInfoEvent): void {
    if (event.providerName === "") return;
    this.#sessionDelta(sender, event);
    this.#run(
      "set_session_provider",
      "run",
      this.#nextSeq(),
      event.providerName,
      sender.orgId,
      event.sessionId,
    );
  }

  /**
   * This batch's pending changes to a session's row, creating the row when
   * the session is new. Applied once per session in {@link #flushSessions}
   * rather than once per event.
   */
  #sessionDelta(
    sender: Sender,
    event: Pick<TelemetryEvent, "sessionId" | "agentSystem" | "agentVersion">,
  ): SessionDelta {
    let delta = this.#sessions.get(event.sessionId);
    if (!delta) {
      this.#run(
        "ensure_session",
        "run",
        sender.orgId,
        event.sessionId,
        this.#nextSeq(),
        sender.actorId,
        event.agentSystem,
        event.agentVersion,
      );
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

  #addCallToSession(sender: Sender, row: ToolCallRow): void {
    const delta = this.#sessionDelta(sender, row);
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

  /** Applies each touched session's delta in one statement; recounts where a call was replaced. */
  #flushSessions(orgId: string): void {
    for (const delta of this.#sessions.values()) {
      if (delta.calls > 0 || delta.cost !== 0) {
        const seen = delta.calls > 0;
        this.#run(
          "add_to_session",
          "run",
          this.#nextSeq(),
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
        );
      }
      if (delta.recount) {
        this.#run("recount_session", "run", this.#nextSeq(), orgId, delta.sessionId);
      }
    }
    this.#sessions.clear();
  }

  #insertToolCall(sender: Sender, id: string, row: ToolCallRow): void {
    const detection = detectToolCall({
      toolName: row.toolName,
      toolType: row.toolType,
      category: row.category,
      ...(row.arguments === undefined ? {} : { arguments: row.arguments }),
      ...(row.result === undefined ? {} : { result: row.result }),
    }, { redact: this.#options.redactSecrets });
    const seq = this.#nextSeq();
    this.#run(
      "insert_tool_call",
      "run",
      id,
      sender.orgId,
      seq,
      row.sessionId,
      sender.actorId,
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
      row.errorMessage ?? null,
      row.errorType ?? null,
      row.decision ?? null,
      row.decisionSource ?? null,
      row.promptId ?? null,
      row.agentName ?? null,
      row.providerName ?? null,
      row.toolCallId ?? null,
      row.toolUseId ?? null,
      row.toolDescription ?? null,
      row.source,
      detection.arguments ?? null,
      detection.result ?? null,
      row.mcpServerName ?? null,
      row.mcpServerScope ?? null,
      row.osType ?? null,
      row.hostArch ?? null,
      row.terminalType ?? null,
      row.cwd ?? null,
      row.traceId ?? null,
      row.spanId ?? null,
    );
    this.#storeDetection(
      {
        id,
        orgId: sender.orgId,
        sessionId: row.sessionId,
        timeMs: row.timeMs,
        toolName: row.toolName,
        toolCallId: row.toolCallId ?? id,
      },
      detection,
      seq,
    );
  }

  #storeDetection(call: StoredCall, detection: Detection, seq: number): void {
    for (const finding of detection.flags) {
      this.#run(
        "insert_risk_flag",
        "run",
        call.id,
        finding.flag,
        call.orgId,
        seq,
        call.sessionId,
        call.timeMs,
        call.toolCallId,
        call.toolName,
        finding.evidence,
      );
    }
    for (const hit of detection.domains) {
      this.#run(
        "insert_domain_hit",
        "run",
        call.id,
        hit.domain,
        hit.scheme,
        call.orgId,
        seq,
        call.sessionId,
        call.timeMs,
      );
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
      this.#seq = Number((this.#run("read_seq", "get") as { value: number }).value);
      const rows = this.#run("calls_to_rescan", "all", afterId, limit) as RescanRow[];
      for (const row of rows) this.#rescanCall(row);
      this.#run("write_seq", "run", this.#seq);
      return { lastId: rows.at(-1)?.id ?? null, scanned: rows.length };
    });
  }

  #rescanCall(row: RescanRow): void {
    const detection = detectToolCall({
      toolName: row.tool_name,
      toolType: row.tool_type as ToolCallEvent["toolType"],
      category: row.category as ToolCallEvent["category"],
      ...(row.arguments === null ? {} : { arguments: row.arguments }),
      ...(row.result === null ? {} : { result: row.result }),
    }, { redact: this.#options.redactSecrets });
    const kept = this.#run("credential_flag", "get", row.id) as { evidence: string } | undefined;
    const redacted = `${row.arguments ?? ""}${row.result ?? ""}`.includes("[REDACTED:");
    if (kept && redacted && !detection.flags.some((f) => f.flag === "credential_detected")) {
      detection.flags.push({ flag: "credential_detected", evidence: kept.evidence });
      detection.flags.sort((a, b) => a.flag < b.flag ? -1 : 1);
    }
    this.#forgetDetections(row.id);
    const seq = this.#nextSeq();
    const args = detection.arguments ?? null;
    const result = detection.result ?? null;
    if (args !== row.arguments || result !== row.result) {
      this.#run("update_call_text", "run", args, result, seq, row.id);
    }
    this.#storeDetection(
      {
        id: row.id,
        orgId: row.org_id,
        sessionId: row.session_id,
        timeMs: row.ts,
        toolName: row.tool_name,
        toolCallId: row.tool_call_id ?? row.id,
      },
      detection,
      seq,
    );
  }

  /** Drops a call's flags and domain hits, leaving tombstones for the replica. */
  #forgetDetections(id: string): void {
    this.#run("delete_risk_flags", "run", id);
    this.#run("delete_domain_hits", "run", id);
    this.#run("insert_tombstone", "run", this.#nextSeq(), "detections", id);
  }

  #nextSeq(): number {
    return ++this.#seq;
  }

  #run(name: string, mode: "run" | "get" | "all", ...params: SQLInputValue[]): unknown {
    let statement = this.#statements.get(name);
    if (!statement) {
      statement = this.#db.prepare(namedSql(statementsSql, name));
      this.#statements.set(name, statement);
    }
    return statement[mode](...params);
  }
}
