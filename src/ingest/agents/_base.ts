/**
 * What every agent mapper shares: the fixed results (ignored, unusable), the
 * resource-level fields, and the event identity scheme.
 *
 * ## Identity
 *
 * `identity` must be the same every time the same event is exported (so a
 * retried export derives the same row id and stores nothing twice) and
 * distinct for distinct events of one session. The record's position in the
 * export is not used: a retry may batch records differently.
 *
 * - Tool calls and decisions with an agent call id: `call:<id>`. A decision
 *   and the result of the same call share it, so the store can turn a stored
 *   reject into the result that follows it (docs/design.md §6.2 "A result after a stored reject").
 * - Model calls with a provider request or response id: `request:<id>`, so a
 *   log and a span reporting the same API request collapse into one row.
 * - Spans otherwise: `span:<spanId>` (span ids are unique per span).
 * - Anything else: `<event name>:<time ns>:<tool name or model>`, then
 *   `:#<event.sequence>` when the agent numbers its events (Claude Code), else
 *   for tool calls `:<hash>` of the arguments, duration and outcome, so two
 *   calls of one tool in the same instant (Gemini CLI sends no call id) stay
 *   apart. The event name is the canonical prefixed one
 *   (`claude_code.api_request`) whichever of `eventName`, `event.name` or body
 *   carried it, and the time is the record's own `timeUnixNano` at full
 *   precision (see {@link EventTime}).
 * - Codex `conversation_starts`: `codex.conversation_starts:<time ns>`.
 *
 * The store keys rows on (organization, session, identity), so a decision and
 * its result land on one row.
 */

import type {
  Attributes,
  AttributeValue,
  DecisionEvent,
  MapResult,
  ModelCallEvent,
  OtlpRecord,
  TelemetryEvent,
  ToolCallEvent,
} from "../../model/telemetry.ts";
import { decisionRejects, toolCategory } from "./_classify.ts";
import type { ToolType } from "./_classify.ts";
import { isStructured, str, strOf } from "./_coerce.ts";
import type { AgentSpec } from "./_spec.ts";
import type { EventTime } from "./_time.ts";

/** The result for events no mapper turns into telemetry (`user_prompt`, …). */
export const ignored: MapResult = Object.freeze({ status: "ignored" });

/** The result for an event the agent's spec names but does not keep (in this form). */
export const notKept: MapResult = Object.freeze({ status: "ignored", known: true });

function unusable(reason: string): MapResult {
  return Object.freeze({ status: "unusable", reason });
}

/** Unusable: the record carries no session id. */
export const noSessionId: MapResult = unusable("No session id");
/** Unusable: the record's session id is an array or a kvlist (see `_coerce.ts`). */
export const sessionIdNotString: MapResult = unusable(
  "Session id is not a string (an array or kvlist value)",
);
/** Unusable: a tool event without a tool name. */
export const noToolName: MapResult = unusable("No tool name on a tool event");
/** Unusable: a tool event whose tool name is an array or a kvlist (see `_coerce.ts`). */
export const toolNameNotString: MapResult = unusable(
  "Tool name is not a string (an array or kvlist value)",
);
/** Unusable: no `event.timestamp`, `timeUnixNano` or `observedTimeUnixNano` that parses. */
export const noTime: MapResult = unusable("No parsable time");

/** Resource `service.name` as sent: the `agent_system` of every event. */
export function agentSystemOf(record: OtlpRecord): string {
  const service = record.resource["service.name"];
  return typeof service === "string" ? service : "";
}

/**
 * `agent_version`: `app.version`, else resource `service.version` where the
 * agent's spec says it is the agent's (not Gemini CLI's Node version), else
 * the spec's fallback attributes, else `""`.
 */
export function agentVersionOf(record: OtlpRecord, agent: AgentSpec): string {
  const a = record.attributes;
  const version = str(a["app.version"]) ??
    (agent.serviceVersionIsAgent ? str(record.resource["service.version"]) : undefined);
  if (version !== undefined) return version;
  return agent.agentVersionFallback === undefined ? "" : strOf(a, agent.agentVersionFallback) ?? "";
}

/** What every event about a tool has before it is read further: its session, tool and time. */
export interface ToolEventBasics {
  sessionId: string;
  toolName: string;
  time: EventTime;
}

/**
 * A tool call with the record's resource-level facts and every optional
 * field present but undefined (one object shape for all agents); the mapper
 * fills in the rest. Outcome `ok`, no duration or size until set. OS,
 * architecture and terminal come from the resource, else from the
 * attributes (Claude Code copies `OTEL_RESOURCE_ATTRIBUTES` onto every
 * event).
 */
export function newToolCall(
  record: OtlpRecord,
  agent: AgentSpec,
  { sessionId, toolName, time }: ToolEventBasics,
  toolType: ToolType,
): ToolCallEvent {
  return {
    kind: "tool_call",
    sessionId,
    timeMs: time.ms,
    agentSystem: agentSystemOf(record),
    agentVersion: agentVersionOf(record, agent),
    identity: "",
    toolName,
    toolType,
    category: toolCategory(toolName, toolType),
    outcome: "ok",
    durationMs: null,
    resultSizeBytes: null,
    toolCallId: undefined,
    toolUseId: undefined,
    arguments: undefined,
    result: undefined,
    errorMessage: undefined,
    errorType: undefined,
    decision: undefined,
    decisionSource: undefined,
    model: undefined,
    promptId: undefined,
    agentName: undefined,
    providerName: undefined,
    toolDescription: undefined,
    source: record.signal === "traces" ? "otlp_traces" : "otlp_logs",
    mcpServerName: undefined,
    mcpServerScope: undefined,
    osType: str(record.resource["os.type"]) ?? str(record.attributes["os.type"]),
    hostArch: str(record.resource["host.arch"]) ?? str(record.attributes["host.arch"]),
    terminalType: str(record.attributes["terminal.type"]) ?? str(record.resource["terminal.type"]),
    cwd: undefined,
    traceId: record.traceId === "" ? undefined : record.traceId,
    spanId: record.spanId === "" ? undefined : record.spanId,
  };
}

/** A model call with the record's agent, no tokens, cost or duration until set. */
export function newModelCall(
  record: OtlpRecord,
  agent: AgentSpec,
  sessionId: string,
  timeMs: number,
  providerName: string,
  model: string,
): ModelCallEvent {
  return {
    kind: "model_call",
    sessionId,
    timeMs,
    agentSystem: agentSystemOf(record),
    agentVersion: agentVersionOf(record, agent),
    identity: "",
    providerName,
    model,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheCreationTokens: 0,
    costUsd: null,
    durationMs: null,
  };
}

/**
 * A decision about the call `callId` with the record's resource-level facts
 * and every optional field present but undefined (one object shape for all
 * agents). Its identity is the call's, so the store pairs it with the call's
 * result.
 */
export function newDecision(
  record: OtlpRecord,
  agent: AgentSpec,
  { sessionId, toolName, time }: ToolEventBasics,
  toolType: ToolType,
  callId: string,
  decision: string,
): DecisionEvent {
  return {
    kind: "decision",
    sessionId,
    timeMs: time.ms,
    agentSystem: agentSystemOf(record),
    agentVersion: agentVersionOf(record, agent),
    identity: callIdentity(callId),
    toolName,
    toolType,
    category: toolCategory(toolName, toolType),
    toolCallId: callId,
    toolUseId: undefined,
    decision,
    decisionSource: undefined,
    rejects: decisionRejects(decision),
    model: undefined,
    arguments: undefined,
    promptId: undefined,
    source: record.signal === "traces" ? "otlp_traces" : "otlp_logs",
    osType: str(record.resource["os.type"]) ?? str(record.attributes["os.type"]),
    hostArch: str(record.resource["host.arch"]) ?? str(record.attributes["host.arch"]),
    terminalType: str(record.attributes["terminal.type"]) ?? str(record.resource["terminal.type"]),
    traceId: record.traceId === "" ? undefined : record.traceId,
    spanId: record.spanId === "" ? undefined : record.spanId,
  };
}

/** One mapped event. */
export function mapped(event: TelemetryEvent): MapResult {
  return { status: "mapped", events: [event] };
}

/**
 * Input tokens disjoint from cache reads (docs/design.md §6.2 "Token counts"): for agents
 * whose input count includes cached tokens, `input − cached`, never below 0.
 */
export function inputWithoutCache(input: number, cached: number): number {
  return input > cached ? input - cached : 0;
}

/** A duration in whole milliseconds, or null. */
export function wholeMs(ms: number | undefined): number | null {
  return ms === undefined ? null : Math.round(ms);
}

/** The session id from the attribute `key`, else the same resource attribute. */
export function sessionIdOf(record: OtlpRecord, key: string): string | undefined {
  return str(record.attributes[key]) ?? str(record.resource[key]);
}

/**
 * Why {@link sessionIdOf} found no session id under `key`: an array or
 * kvlist sent in its place, else none sent.
 */
export function missingSessionId(record: OtlpRecord, key: string): MapResult {
  return isStructured(record.attributes[key]) || isStructured(record.resource[key])
    ? sessionIdNotString
    : noSessionId;
}

/** Why no tool name was found under `keys`: an array or kvlist sent in its place, else none sent. */
export function missingToolName(attributes: Attributes, keys: readonly string[]): MapResult {
  for (let i = 0; i < keys.length; i++) {
    if (isStructured(attributes[keys[i] as string])) return toolNameNotString;
  }
  return noToolName;
}

/** Identity of an event about an agent call id (decision and result share it). */
export function callIdentity(callId: string): string {
  return `call:${callId}`;
}

/**
 * Identity of a tool call or decision without a call id: span id for spans,
 * else event name, time, tool name and the event sequence or a hash of what
 * tells two calls apart.
 */
export function toolIdentity(
  record: OtlpRecord,
  eventName: string,
  time: EventTime,
  toolName: string,
  argumentsText: string | undefined,
  durationMs: number | null,
  outcome: string,
): string {
  if (record.signal === "traces" && record.spanId !== "") return `span:${record.spanId}`;
  const head = `${eventName}:${time.ns}:${toolName}`;
  const seq = sequenceOf(record.attributes["event.sequence"]);
  if (seq !== undefined) return `${head}:#${seq}`;
  let h = fnv1a(FNV_OFFSET, outcome);
  h = fnv1a(h, durationMs === null ? "" : String(durationMs));
  // The first 256 characters tell calls apart as well as the whole text would.
  if (argumentsText !== undefined) h = fnv1a(h, argumentsText, 256);
  return `${head}:${(h >>> 0).toString(16).padStart(8, "0")}`;
}

/**
 * Identity of a model call: its request id, else span id, else event name,
 * time, model and event sequence.
 */
export function modelIdentity(
  record: OtlpRecord,
  eventName: string,
  time: EventTime,
  model: string,
  requestId: string | undefined,
): string {
  if (requestId !== undefined) return `request:${requestId}`;
  if (record.signal === "traces" && record.spanId !== "") return `span:${record.spanId}`;
  const seq = sequenceOf(record.attributes["event.sequence"]);
  return seq === undefined
    ? `${eventName}:${time.ns}:${model}`
    : `${eventName}:${time.ns}:${model}:#${seq}`;
}

function sequenceOf(value: AttributeValue | undefined): string | undefined {
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : undefined;
  if (typeof value === "string" && value !== "") return value;
  return undefined;
}

const FNV_OFFSET = 0x811c9dc5;

/** 32-bit FNV-1a over a string's UTF-16 units, continuing from `h`, at most `limit` units. */
function fnv1a(h: number, s: string, limit = s.length): number {
  const n = Math.min(limit, s.length);
  for (let i = 0; i < n; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // A separator so that ("ab","c") and ("a","bc") differ.
  h ^= 0xff;
  return Math.imul(h, 0x01000193);
}
