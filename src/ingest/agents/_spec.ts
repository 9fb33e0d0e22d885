/**
 * The shape of an agent's mapping as data (docs/ingest-mapping.md): which events
 * it maps, its session and tool-name keys, and where each field of a tool
 * call, decision or model call comes from. `_map.ts` walks a spec; each agent
 * file is one spec plus the few functions for what only that agent does.
 *
 * Attribute names are listed in the order they are tried: the first that
 * holds a value wins (new name, then old name).
 */

import type { Attributes, OtlpRecord, ToolCallEvent } from "../../model/telemetry.ts";

/** Attribute names tried in order; the first that holds a value wins. */
export type Keys = readonly string[];

/** One agent: what it sends and how each of its events maps. */
export interface AgentSpec {
  /** The signal its events arrive on; records of the other signal are ignored. */
  signal: "logs" | "traces";
  /**
   * How a record names its event. Logs: the record's event name, with or
   * without the agent's `prefix` (`claude_code.tool_result` and
   * `tool_result` alike); identities use the prefixed, canonical name.
   * Spans: an attribute (GenAI's `gen_ai.operation.name`); identities use
   * the span's name.
   */
  eventName: { prefix: string } | { attribute: string };
  /** The session id: this attribute, else the same resource attribute. */
  sessionKey: string;
  /** The tool name on tool events. */
  toolNameKey: Keys;
  /**
   * Whether resource `service.version` is the agent's version when
   * `app.version` is absent (not for Gemini CLI: there it is Node's).
   */
  serviceVersionIsAgent: boolean;
  /** Attributes that give the agent version when neither of the above does (GenAI). */
  agentVersionFallback?: Keys;
  /** The events mapped, by short event name; every other event is ignored. */
  events: Readonly<Record<string, EventSpec>>;
  /**
   * Events the agent sends that are not kept on purpose, by short event
   * name, with why: counted as `not_kept`, where an event the spec does not
   * name at all is `unmapped_event` (docs/api.md §4.17).
   */
  notKept?: Readonly<Record<string, string>>;
}

/**
 * Where an agent's records name their event, session, tool and version, with
 * what most agents do left out: events on logs, the tool name in `tool_name`,
 * the agent's version in resource `service.version`.
 */
export type AgentNaming =
  & Omit<AgentSpec, "signal" | "toolNameKey" | "serviceVersionIsAgent" | "events">
  & Partial<Pick<AgentSpec, "signal" | "toolNameKey" | "serviceVersionIsAgent">>;

/** An agent's spec: its naming, what it leaves out as most agents do, and its events. */
export function agentSpec(naming: AgentNaming, events: AgentSpec["events"]): AgentSpec {
  return {
    signal: "logs",
    toolNameKey: ["tool_name"],
    serviceVersionIsAgent: true,
    ...naming,
    events,
  };
}

/** What one event becomes. */
export type EventSpec = ToolCallSpec | DecisionSpec | ModelCallSpec | SessionInfoSpec;

/**
 * When a tool is an MCP tool (docs/ingest-mapping.md §3): when one of the
 * `present` attributes holds a value, when an `equals` attribute holds that
 * value, when a `contains` attribute holds that text, or for an MCP name
 * (`mcp__*`, `mcp_tool`) whatever the rule says.
 */
export interface McpRule {
  present?: Keys;
  equals?: readonly [key: string, value: string];
  contains?: readonly [key: string, text: string];
}

/** Fields every event about a tool has, tool calls and decisions alike. */
export interface ToolFields {
  toolType: McpRule;
  /** The agent's call id, which pairs a decision with its result. */
  callId: Keys;
  /** Whether the call id is Claude Code's `tool_use_id`, stored in both columns. */
  callIdIsToolUseId?: boolean;
  /** JSON arguments: the first attribute that holds any, JSON-encoded unless JSON already. */
  arguments?: Keys;
  promptId?: Keys;
  model?: Keys;
  /** MCP tools only: the server's name, from attributes or the agent's own rule. */
  mcpServerName?: Keys | ((attributes: Attributes, toolName: string) => string | undefined);
  /**
   * MCP tools only: the tool's own name where the agent reports it apart from
   * its tool name (Claude Code's `mcp_tool_name`); the call is named
   * `mcp__<server>__<tool>` either way (`_classify.ts` `mcpToolName`).
   */
  mcpOwnToolName?: (attributes: Attributes) => string | undefined;
  mcpServerScope?: Keys;
  /** The permission decision and its source, as reported, lower-cased where the agent says so. */
  decision?: Keys;
  decisionSource?: Keys;
}

/** A tool call that ran, or one the agent refused itself. */
export interface ToolCallSpec extends ToolFields {
  kind: "tool_call";
  agentName?: Keys;
  providerName?: Keys;
  toolDescription?: Keys;
  /** Result text, verbatim; its UTF-8 length is the size unless `resultSize` says. */
  result?: Keys;
  /** The size the agent reports, in bytes. */
  resultSize?: Keys;
  /** Milliseconds in an attribute, or the span's start to end. */
  duration: Keys | "span";
  /**
   * Whether the agent's own policy refused the call (it never ran: no
   * duration, size or error); sets the call's decision fields when it
   * was. Checked before `failure`.
   */
  refused?: (call: ToolCallEvent, attributes: Attributes) => boolean;
  /** How a call that ran failed: the common rule over these attributes, or the agent's own. */
  failure: ReportedFailure | FailureRule;
}

/**
 * The common failure rule: `success=false`, or no `success` and an error
 * text, is `error` with that text and type. `exitFailure` names a failure
 * the agent reports beside `success=true` (a command's non-zero exit code).
 */
export interface ReportedFailure {
  success: string;
  error: Keys;
  errorType: Keys;
  exitFailure?: (attributes: Attributes) => string | undefined;
}

/** An agent's own failure rule: sets `outcome` and the error fields of a call that ran. */
export type FailureRule = (
  call: ToolCallEvent,
  attributes: Attributes,
  record: OtlpRecord,
) => void;

/**
 * A permission decision. With a call id it is a decision event the store
 * pairs with the call's result; without one a denial is a rejected call on
 * its own and an approval annotates nothing (ignored).
 */
export interface DecisionSpec extends ToolFields {
  kind: "decision";
  decision: Keys;
  decisionSource: Keys;
  /** Rewrites a reported decision and source into the API's words (Codex's `Config` → `config`). */
  normalize?: (value: string) => string;
}

/** A model (LLM API) call. Counts are read with `count`; absent counts are 0. */
export interface ModelCallSpec {
  kind: "model_call";
  /** Ignored unless one of these counts is present (Codex's `sse_event` is mostly not a response). */
  requires?: Keys;
  /** The provider from attributes (`""` when none), or a fixed one. */
  provider: Keys | { value: string };
  model: Keys;
  /** The provider's request or response id, which makes a log and a span of one request one row. */
  requestId?: Keys;
  inputTokens: Keys;
  /**
   * Whether `inputTokens` counts cache reads too (stored as input − cached,
   * docs/design.md §6.2 "Token counts").
   */
  inputIncludesCache: boolean;
  outputTokens: Keys;
  /** Counts added to output: Gemini's thinking tokens, which its output excludes. */
  thoughtsTokens?: Keys;
  cacheReadTokens: Keys;
  cacheCreationTokens?: Keys;
  /** Cost in USD, else in micro-USD; absent means no cost reported. */
  cost?: { usd: string; micros: string };
  duration: Keys | "span";
}

/**
 * A session-level fact: the provider a session's later model calls inherit,
 * or the session that spawned it (Codex). Ignored when it holds neither.
 */
export interface SessionInfoSpec {
  kind: "session_info";
  provider?: Keys;
  /** The attribute naming the session the fact is about, when not the agent's session key. */
  session?: string;
  /** The session that spawned it. */
  parentSession?: Keys;
  /** Only records whose attributes hold these values; others are ignored. */
  only?: Readonly<Record<string, string>>;
}
