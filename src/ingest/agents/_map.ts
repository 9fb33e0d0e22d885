/**
 * The one mapper every agent runs: finds the record's event in the agent's
 * spec (`_spec.ts`) and builds the tool call, decision, model call or
 * session fact it describes, reading each field where the spec says.
 */

import { utf8Bytes } from "../limits.ts";
import type { Attributes, MapResult, OtlpRecord, ToolCallEvent } from "../../model/telemetry.ts";
import {
  agentSystemOf,
  agentVersionOf,
  callIdentity,
  ignored,
  inputWithoutCache,
  mapped,
  missingSessionId,
  missingToolName,
  modelIdentity,
  newDecision,
  newModelCall,
  newToolCall,
  noTime,
  notKept,
  sessionIdOf,
  type ToolEventBasics,
  toolIdentity,
  wholeMs,
} from "./_base.ts";
import { decisionRejects, isMcpName, mcpToolName, type ToolType } from "./_classify.ts";
import { bool, count, countOf, jsonTextOf, num, numOf, str, strOf, textOf } from "./_coerce.ts";
import type {
  AgentSpec,
  DecisionSpec,
  EventSpec,
  Keys,
  McpRule,
  ModelCallSpec,
  ReportedFailure,
  SessionInfoSpec,
  ToolCallSpec,
  ToolFields,
} from "./_spec.ts";
import { type EventTime, eventTime, spanDurationMs } from "./_time.ts";

/** An event of the spec with the name its identities use (undefined: the record's own). */
interface NamedEvent {
  spec: EventSpec;
  name: string | undefined;
}

/**
 * The mapper of one agent: `ignored` for records of the other signal or of
 * events its spec does not list, else what the event's spec makes of it.
 */
export function agentMapper(spec: AgentSpec): (record: OtlpRecord) => MapResult {
  const agent = shapedAgent(spec);
  // Both spellings of a logged event name are keys, so a record needs one lookup.
  const events = new Map<string, NamedEvent>();
  const naming = agent.eventName;
  for (const [short, event] of Object.entries(agent.events)) {
    const spec = shapedEvent(event);
    if ("prefix" in naming) {
      const name = naming.prefix + short;
      events.set(short, { spec, name });
      events.set(name, { spec, name });
    } else {
      events.set(short, { spec, name: undefined });
    }
  }
  const unkept = new Set<string>();
  for (const short of Object.keys(agent.notKept ?? {})) {
    unkept.add(short);
    if ("prefix" in naming) unkept.add(naming.prefix + short);
  }
  const attribute = "attribute" in naming ? naming.attribute : undefined;
  return (record) => {
    if (record.signal !== agent.signal) return ignored;
    const key = attribute === undefined
      ? record.eventName
      : str(record.attributes[attribute]) ?? "";
    const event = events.get(key);
    if (event === undefined) return unkept.has(key) ? notKept : ignored;
    const result = mapEvent(agent, event, record);
    // An event of the spec that this record's form does not make into telemetry.
    return result.status === "ignored" ? notKept : result;
  };
}

function mapEvent(agent: AgentSpec, event: NamedEvent, record: OtlpRecord): MapResult {
  const name = event.name ?? record.eventName;
  const spec = event.spec;
  switch (spec.kind) {
    case "tool_call":
      return toolCall(agent, spec, record, name);
    case "decision":
      return decision(agent, spec, record, name);
    case "model_call":
      return modelCall(agent, spec, record, name);
    case "session_info":
      return sessionInfo(agent, spec, record, name);
  }
}

function toolCall(agent: AgentSpec, spec: ToolCallSpec, record: OtlpRecord, name: string) {
  const a = record.attributes;
  const basics = toolEventBasics(record, agent);
  if ("status" in basics) return basics;
  const { toolName, time } = basics;

  const toolType = toolTypeOf(spec.toolType, a, toolName);
  const call = newToolCall(record, agent, basics, toolType);
  fillToolFields(call, spec, a, toolName);
  if (spec.decision !== undefined) call.decision = strOf(a, spec.decision);
  if (spec.decisionSource !== undefined) call.decisionSource = strOf(a, spec.decisionSource);
  if (spec.agentName !== undefined) call.agentName = strOf(a, spec.agentName);
  if (spec.providerName !== undefined) call.providerName = strOf(a, spec.providerName);
  if (spec.toolDescription !== undefined) call.toolDescription = strOf(a, spec.toolDescription);
  if (spec.result !== undefined) call.result = textOf(a, spec.result);

  if (spec.refused !== undefined && spec.refused(call, a)) {
    // The tool never ran: no duration, size or error to read.
    call.outcome = "rejected";
  } else {
    if (typeof spec.failure === "function") spec.failure(call, a, record);
    else reportedFailure(spec.failure, call, a);
    call.durationMs = durationOf(spec.duration, a, record);
    call.resultSizeBytes = spec.resultSize !== undefined
      ? countOf(a, spec.resultSize) ?? null
      : call.result === undefined
      ? null
      : utf8Bytes(call.result);
  }
  call.identity = call.toolCallId !== undefined ? callIdentity(call.toolCallId) : toolIdentity(
    record,
    name,
    time,
    toolName,
    call.arguments,
    call.durationMs,
    call.outcome,
  );
  return mapped(call);
}

/** The common failure rule (see {@link ReportedFailure}). */
function reportedFailure(rule: ReportedFailure, call: ToolCallEvent, a: Attributes): void {
  const success = bool(a[rule.success]);
  const errorText = strOf(a, rule.error);
  if (success === false || (success === undefined && errorText !== undefined)) {
    call.outcome = "error";
    call.errorMessage = errorText;
    call.errorType = strOf(a, rule.errorType);
  } else if (rule.exitFailure !== undefined) {
    const failure = rule.exitFailure(a);
    if (failure !== undefined) {
      call.outcome = "error";
      call.errorMessage = failure;
    }
  }
}

function decision(agent: AgentSpec, spec: DecisionSpec, record: OtlpRecord, name: string) {
  const a = record.attributes;
  const basics = toolEventBasics(record, agent);
  if ("status" in basics) return basics;
  const { toolName, time } = basics;
  const reported = strOf(a, spec.decision);
  if (reported === undefined) return ignored;
  const normalize = spec.normalize;
  const decision = normalize === undefined ? reported : normalize(reported);
  const source = strOf(a, spec.decisionSource);
  const decisionSource = normalize === undefined || source === undefined
    ? source
    : normalize(source);

  const toolType = toolTypeOf(spec.toolType, a, toolName);
  const callId = strOf(a, spec.callId);
  if (callId === undefined) {
    // Nothing to pair with: an approval annotates no call, a denial is a
    // rejected call on its own.
    if (!decisionRejects(decision)) return ignored;
    const call = newToolCall(record, agent, basics, toolType);
    fillToolFields(call, spec, a, toolName);
    call.outcome = "rejected";
    call.decision = decision;
    call.decisionSource = decisionSource;
    call.identity = toolIdentity(record, name, time, toolName, call.arguments, null, "rejected");
    return mapped(call);
  }

  const event = newDecision(record, agent, basics, toolType, callId, decision);
  if (toolType === "mcp") {
    event.toolName = mcpToolName(
      toolName,
      mcpServerOf(spec, a, toolName),
      spec.mcpOwnToolName?.(a),
    );
  }
  if (spec.callIdIsToolUseId === true) event.toolUseId = callId;
  event.decisionSource = decisionSource;
  if (spec.model !== undefined) event.model = strOf(a, spec.model);
  if (spec.arguments !== undefined) event.arguments = jsonTextOf(a, spec.arguments);
  if (spec.promptId !== undefined) event.promptId = strOf(a, spec.promptId);
  return mapped(event);
}

function modelCall(agent: AgentSpec, spec: ModelCallSpec, record: OtlpRecord, name: string) {
  const a = record.attributes;
  if (spec.requires !== undefined && !hasCount(a, spec.requires)) return ignored;
  const basics = eventBasics(record, agent);
  if ("status" in basics) return basics;
  const { sessionId, time } = basics;

  const model = strOf(a, spec.model) ?? "";
  const provider = "value" in spec.provider ? spec.provider.value : strOf(a, spec.provider) ?? "";
  const call = newModelCall(record, agent, sessionId, time.ms, provider, model);
  const requestId = spec.requestId === undefined ? undefined : strOf(a, spec.requestId);
  call.identity = modelIdentity(record, name, time, model, requestId);
  const input = countOf(a, spec.inputTokens) ?? 0;
  call.outputTokens = countOf(a, spec.outputTokens) ?? 0;
  if (spec.thoughtsTokens !== undefined) call.outputTokens += countOf(a, spec.thoughtsTokens) ?? 0;
  const cached = countOf(a, spec.cacheReadTokens) ?? 0;
  call.inputTokens = spec.inputIncludesCache ? inputWithoutCache(input, cached) : input;
  call.cacheReadTokens = cached;
  if (spec.cacheCreationTokens !== undefined) {
    call.cacheCreationTokens = countOf(a, spec.cacheCreationTokens) ?? 0;
  }
  if (spec.cost !== undefined) {
    const usd = num(a[spec.cost.usd]);
    const micros = usd === undefined ? num(a[spec.cost.micros]) : undefined;
    call.costUsd = usd ?? (micros === undefined ? null : micros / 1e6);
  }
  call.durationMs = durationOf(spec.duration, a, record);
  return mapped(call);
}

function sessionInfo(agent: AgentSpec, spec: SessionInfoSpec, record: OtlpRecord, name: string) {
  const a = record.attributes;
  if (spec.only !== undefined) {
    for (const [key, value] of Object.entries(spec.only)) if (str(a[key]) !== value) return ignored;
  }
  const providerName = spec.provider === undefined ? undefined : strOf(a, spec.provider);
  const parentSessionId = spec.parentSession === undefined
    ? undefined
    : strOf(a, spec.parentSession);
  if (providerName === undefined && parentSessionId === undefined) return ignored;
  const basics = eventBasics(
    record,
    spec.session === undefined ? agent : { ...agent, sessionKey: spec.session },
  );
  if ("status" in basics) return basics;
  const { sessionId, time } = basics;
  // A session is never its own parent.
  if (parentSessionId === sessionId && providerName === undefined) return ignored;
  return mapped({
    kind: "session_info",
    sessionId,
    timeMs: time.ms,
    agentSystem: agentSystemOf(record),
    agentVersion: agentVersionOf(record, agent),
    identity: `${name}:${time.ns}`,
    providerName: providerName ?? "",
    ...(parentSessionId === undefined || parentSessionId === sessionId ? {} : { parentSessionId }),
  });
}

/** The session and time every event needs, or why the record is unusable. */
function eventBasics(
  record: OtlpRecord,
  agent: AgentSpec,
): { sessionId: string; time: EventTime } | MapResult {
  const sessionId = sessionIdOf(record, agent.sessionKey);
  if (sessionId === undefined) return missingSessionId(record, agent.sessionKey);
  const time = eventTime(record);
  if (time === undefined) return noTime;
  return { sessionId, time };
}

/** Like {@link eventBasics}, plus the tool name a tool event needs. */
function toolEventBasics(record: OtlpRecord, agent: AgentSpec): ToolEventBasics | MapResult {
  const sessionId = sessionIdOf(record, agent.sessionKey);
  if (sessionId === undefined) return missingSessionId(record, agent.sessionKey);
  const toolName = strOf(record.attributes, agent.toolNameKey);
  if (toolName === undefined) return missingToolName(record.attributes, agent.toolNameKey);
  const time = eventTime(record);
  if (time === undefined) return noTime;
  return { sessionId, toolName, time };
}

/** The fields tool calls and decisions share, on a tool call. */
function fillToolFields(
  call: ToolCallEvent,
  spec: ToolFields,
  a: Attributes,
  toolName: string,
): void {
  const callId = strOf(a, spec.callId);
  call.toolCallId = callId;
  if (spec.callIdIsToolUseId === true) call.toolUseId = callId;
  if (spec.arguments !== undefined) call.arguments = jsonTextOf(a, spec.arguments);
  if (spec.promptId !== undefined) call.promptId = strOf(a, spec.promptId);
  if (spec.model !== undefined) call.model = strOf(a, spec.model);
  if (call.toolType === "mcp") {
    call.mcpServerName = mcpServerOf(spec, a, toolName);
    call.toolName = mcpToolName(toolName, call.mcpServerName, spec.mcpOwnToolName?.(a));
  }
  if (spec.mcpServerScope !== undefined) call.mcpServerScope = strOf(a, spec.mcpServerScope);
}

function mcpServerOf(spec: ToolFields, a: Attributes, toolName: string): string | undefined {
  const server = spec.mcpServerName;
  if (server === undefined) return undefined;
  return typeof server === "function" ? server(a, toolName) : strOf(a, server);
}

function toolTypeOf(rule: McpRule, a: Attributes, toolName: string): ToolType {
  if (rule.present !== undefined && strOf(a, rule.present) !== undefined) return "mcp";
  if (rule.equals !== undefined && str(a[rule.equals[0]]) === rule.equals[1]) return "mcp";
  if (rule.contains !== undefined) {
    const value = str(a[rule.contains[0]]);
    if (value !== undefined && value.includes(rule.contains[1])) return "mcp";
  }
  return isMcpName(toolName) ? "mcp" : "builtin";
}

function durationOf(duration: Keys | "span", a: Attributes, record: OtlpRecord): number | null {
  return duration === "span"
    ? spanDurationMs(record.timeUnixNano, record.observedTimeUnixNano)
    : wholeMs(numOf(a, duration));
}

/** Whether one of `keys` holds a count; reads them all, so any out of range throws. */
function hasCount(a: Attributes, keys: Keys): boolean {
  let found = false;
  for (let i = 0; i < keys.length; i++) if (count(a[keys[i] as string]) !== undefined) found = true;
  return found;
}

/**
 * The specs with every optional field present, in one order: one object
 * shape per kind of spec whatever the agent, so the reads above stay
 * monomorphic on the ingest hot path (four agents' literals are four shapes).
 */
function shapedAgent(spec: AgentSpec): Whole<AgentSpec> {
  return {
    signal: spec.signal,
    eventName: spec.eventName,
    sessionKey: spec.sessionKey,
    toolNameKey: spec.toolNameKey,
    serviceVersionIsAgent: spec.serviceVersionIsAgent,
    agentVersionFallback: spec.agentVersionFallback,
    events: spec.events,
    notKept: spec.notKept,
  };
}

function shapedEvent(spec: EventSpec): EventSpec {
  switch (spec.kind) {
    case "tool_call":
      return shaped<ToolCallSpec>({
        kind: spec.kind,
        ...shapedToolFields(spec),
        agentName: spec.agentName,
        providerName: spec.providerName,
        toolDescription: spec.toolDescription,
        result: spec.result,
        resultSize: spec.resultSize,
        duration: spec.duration,
        refused: spec.refused,
        failure: typeof spec.failure === "function" ? spec.failure : shaped<ReportedFailure>({
          success: spec.failure.success,
          error: spec.failure.error,
          errorType: spec.failure.errorType,
          exitFailure: spec.failure.exitFailure,
        }),
      });
    case "decision":
      return shaped<DecisionSpec>({
        kind: spec.kind,
        ...shapedToolFields(spec),
        normalize: spec.normalize,
      });
    case "model_call":
      return shaped<ModelCallSpec>({
        kind: spec.kind,
        requires: spec.requires,
        provider: spec.provider,
        model: spec.model,
        requestId: spec.requestId,
        inputTokens: spec.inputTokens,
        inputIncludesCache: spec.inputIncludesCache,
        outputTokens: spec.outputTokens,
        thoughtsTokens: spec.thoughtsTokens,
        cacheReadTokens: spec.cacheReadTokens,
        cacheCreationTokens: spec.cacheCreationTokens,
        cost: spec.cost,
        duration: spec.duration,
      });
    case "session_info":
      return shaped<SessionInfoSpec>({
        kind: spec.kind,
        provider: spec.provider,
        session: spec.session,
        parentSession: spec.parentSession,
        only: spec.only,
      });
  }
}

/** The fields of {@link ToolFields}, in one order; a decision's required ones stay required. */
function shapedToolFields<S extends ToolFields>(
  spec: S,
): Whole<ToolFields> & Pick<S, "decision" | "decisionSource"> {
  return {
    toolType: shaped<McpRule>({
      present: spec.toolType.present,
      equals: spec.toolType.equals,
      contains: spec.toolType.contains,
    }),
    callId: spec.callId,
    callIdIsToolUseId: spec.callIdIsToolUseId === true,
    arguments: spec.arguments,
    promptId: spec.promptId,
    model: spec.model,
    mcpServerName: spec.mcpServerName,
    mcpOwnToolName: spec.mcpOwnToolName,
    mcpServerScope: spec.mcpServerScope,
    decision: spec.decision,
    decisionSource: spec.decisionSource,
  };
}

/** A spec type with every field required (optional ones may be undefined): a field left out of a shaped copy is a type error. */
type Whole<T> = { [K in keyof Required<T>]: T[K] };

function shaped<T>(whole: Whole<T>): T {
  return whole as T;
}

/** A span with status error, or with an `error.type`, failed; its status message says how. */
export function spanFailure(call: ToolCallEvent, a: Attributes, record: OtlpRecord): void {
  const errorType = str(a["error.type"]);
  if (record.statusCode === 2 || errorType !== undefined) {
    call.outcome = "error";
    call.errorType = errorType;
    call.errorMessage = record.statusMessage !== ""
      ? record.statusMessage
      : str(a["error.message"]);
  }
}
