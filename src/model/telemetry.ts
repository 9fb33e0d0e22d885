/**
 * The shapes that flow through ingest: OTLP payloads are decoded into
 * {@link OtlpRecord}s, which agent mappers turn into {@link TelemetryEvent}s
 * that the telemetry store writes.
 *
 * @module
 */

/** A plain attribute value after decoding OTLP's AnyValue. */
export type AttributeValue =
  | string
  | number
  | boolean
  | null
  | AttributeValue[]
  | { [key: string]: AttributeValue };

/** Attributes by key, values decoded but not coerced. */
export type Attributes = Record<string, AttributeValue>;

/** One log record or span, in one shape whatever its encoding. */
export interface OtlpRecord {
  /** Which OTLP signal carried it; becomes the call's `source`. */
  signal: "logs" | "traces";
  /** Resource attributes (`service.name`, `service.version`, `os.type`, …). */
  resource: Attributes;
  /** Instrumentation scope name, `""` when absent. */
  scopeName: string;
  /**
   * Logs: `eventName`, else the `event.name` attribute, else the body when it
   * is a string, else `""`. Spans: the span name.
   */
  eventName: string;
  /** The record's or span's attributes. */
  attributes: Attributes;
  /** Log body (decoded); null for spans or when absent. */
  body: AttributeValue;
  /** Logs: `timeUnixNano`; spans: `startTimeUnixNano`. Null when absent or 0. */
  timeUnixNano: bigint | null;
  /** Logs: `observedTimeUnixNano`; spans: `endTimeUnixNano`. Null when absent or 0. */
  observedTimeUnixNano: bigint | null;
  /** Lower-case hex, `""` when absent or all zero. */
  traceId: string;
  /** Lower-case hex, `""` when absent or all zero. */
  spanId: string;
  /** Spans only: OTLP status code (0 unset, 1 ok, 2 error); null for logs. */
  statusCode: number | null;
  /** Spans only: status message; `""` otherwise. */
  statusMessage: string;
  /** Position of the record within its export request (0-based). */
  index: number;
}

/** Outcome of a tool call, as the spec defines it. */
export type Outcome = "ok" | "error" | "rejected";

/** Fields shared by every event an agent mapper emits. */
interface EventBase {
  /** Agent's session id (Claude/Gemini `session.id`, Codex `conversation.id`, …). */
  sessionId: string;
  /** Milliseconds since the epoch (see docs/design.md §6.2 "A tool call's time"). */
  timeMs: number;
  /** Resource `service.name` as sent. */
  agentSystem: string;
  /** `""` when not reported. */
  agentVersion: string;
  /**
   * The event's identity within its session, used to derive a stable row id so
   * that a retried export stores nothing twice (e.g. agent call id, or event
   * name + timestamp + sequence).
   */
  identity: string;
}

/** A tool call that ran (ok/error) or was rejected. */
export interface ToolCallEvent extends EventBase {
  kind: "tool_call";
  toolName: string;
  toolType: "builtin" | "mcp";
  category: "code_exec" | "file_read" | "file_write" | "web_fetch" | "mcp" | "other";
  outcome: Outcome;
  /** Null when rejected. */
  durationMs: number | null;
  /** Agent-reported size, else byte length of the result; null when rejected or unknown. */
  resultSizeBytes: number | null;
  /** The agent's id for the call (Claude `tool_use_id`, Codex `call_id`, …), when given. */
  toolCallId?: string;
  /** Claude Code's `tool_use_id`. */
  toolUseId?: string;
  /** JSON-encoded arguments, when sent. */
  arguments?: string;
  result?: string;
  errorMessage?: string;
  errorType?: string;
  decision?: string;
  decisionSource?: string;
  model?: string;
  promptId?: string;
  agentName?: string;
  providerName?: string;
  toolDescription?: string;
  source: "otlp_logs" | "otlp_traces";
  mcpServerName?: string;
  mcpServerScope?: string;
  osType?: string;
  hostArch?: string;
  terminalType?: string;
  cwd?: string;
  traceId?: string;
  spanId?: string;
}

/**
 * A permission decision about a tool call (Claude Code / Codex
 * `tool_decision`). A reject with no later result becomes a rejected call; an
 * accept only annotates the call's `decision` fields.
 */
export interface DecisionEvent extends EventBase {
  kind: "decision";
  toolName: string;
  toolType: "builtin" | "mcp";
  category: ToolCallEvent["category"];
  /** The agent's call id the decision is about; required to pair with the result. */
  toolCallId: string;
  toolUseId?: string;
  /** Verbatim, e.g. `accept`, `reject`, `denied`, `abort`. */
  decision: string;
  decisionSource?: string;
  /** True when the decision denies the call (reject, denied, abort, …). */
  rejects: boolean;
  /** The model the agent reported with the decision (Codex); kept on a rejected call. */
  model?: string;
  arguments?: string;
  promptId?: string;
  source: "otlp_logs" | "otlp_traces";
  osType?: string;
  hostArch?: string;
  terminalType?: string;
  traceId?: string;
  spanId?: string;
}

/** A model (LLM API) call with token counts and optional cost. */
export interface ModelCallEvent extends EventBase {
  kind: "model_call";
  /** `""` when unknown. */
  providerName: string;
  /** `""` when not reported. */
  model: string;
  /** Disjoint from cache reads (docs/design.md §6.2 "Token counts"). */
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
  /** Null when the agent reported no cost. */
  costUsd: number | null;
  durationMs: number | null;
}

/**
 * Session-level facts: the provider later events inherit, e.g. the one named
 * by Codex's `codex.conversation_starts` (applied to model calls stored after
 * it; `""` for none), and the session that spawned this one (a Codex
 * subagent, from its parent's `codex.agent_communication`).
 */
export interface SessionInfoEvent extends EventBase {
  kind: "session_info";
  providerName: string;
  parentSessionId?: string;
}

/** Anything an agent mapper can produce from one record. */
export type TelemetryEvent = ToolCallEvent | DecisionEvent | ModelCallEvent | SessionInfoEvent;

/** What a mapper says about one record. */
export type MapResult =
  | { status: "mapped"; events: TelemetryEvent[] }
  /**
   * An event we do not map: ignored, not counted as rejected. `known`: the
   * agent's spec names it (an event it keeps only in some forms, or one it
   * does not keep on purpose, as `user_prompt`), so a new or renamed event
   * of a client release stands apart (docs/api.md §4.17).
   */
  | { status: "ignored"; known?: true }
  /** Unusable: no session id, no tool name on a tool event, or an unparsable time. */
  | { status: "unusable"; reason: string };
