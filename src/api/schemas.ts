/**
 * Every body the query listener answers, as zod schemas: the one
 * description of the objects of docs/api.md §2 and §4, its errors (docs/api.md §7) and this
 * project's extensions (README). The OpenAPI document (`openapi.ts`) names
 * each one in {@link COMPONENTS}; the shapes (`shapes.ts`) take their
 * optional fields from them; the insights' bodies derive from the insight
 * registry (`INSIGHTS`). Tests hold real responses to the document.
 *
 * @module
 */
import { z } from "zod";
import { AGENT_LABELS } from "../agents.ts";
import {
  type AnyInsightName,
  GRANULARITIES,
  INSIGHTS,
  MAX_GROUPS,
  WINDOW_NAMES,
} from "../analytics/mod.ts";
import type { DetectInput, FlagKind } from "../detect/mod.ts";
import { ERROR_STATUS, type ErrorCode } from "../http/responses.ts";

/** The schemas the document names, as `#/components/schemas/<id>`. */
export const COMPONENTS = z.registry<{ id: string }>();

/** `schema` described and named in {@link COMPONENTS}. */
function component<T extends z.ZodType>(id: string, description: string, schema: T): T {
  const described = schema.describe(description);
  COMPONENTS.add(described, { id });
  return described;
}

/** Every value of a string union, in a record so the compiler refuses a missing or unknown one. */
function valuesOf<T extends string>(values: Record<T, true>): [T, ...T[]] {
  return Object.keys(values) as [T, ...T[]];
}

/** A record of `value(key)` for each key. */
function byKey<K extends string, V>(keys: readonly K[], value: (key: K) => V): Record<K, V> {
  return Object.fromEntries(keys.map((key) => [key, value(key)])) as Record<K, V>;
}

/** The names of an object's fields that may be left out, in their order. */
export function optionalFields(schema: z.ZodObject): string[] {
  return Object.entries(schema.shape)
    .filter(([, field]) => (field as z.ZodType).safeParse(undefined).success)
    .map(([name]) => name);
}

/** A timestamp as served (`formatTimestamp`): RFC 3339 in UTC with milliseconds. */
const TIMESTAMP = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/).meta({
  format: "date-time",
});

function timestamp(description: string) {
  return TIMESTAMP.describe(description);
}

const count = (description: string) => z.int().nonnegative().describe(description);

/** A session's dimensions (docs/api.md §4.22): key to value. */
const DIMENSIONS = z.record(z.string(), z.string()).describe(
  "Extension: the session's dimensions, the resource attributes `--dimension` keeps (for example `team.id`, `cost_center`), key to value; `{}` when none.",
);

/** A tool call's outcome (docs/api.md §2.2). */
export const OUTCOMES = ["ok", "error", "rejected"] as const;

const TOOL_TYPES = valuesOf<DetectInput["toolType"]>({ builtin: true, mcp: true });

const CATEGORIES = valuesOf<DetectInput["category"]>({
  "code_exec": true,
  "file_read": true,
  "file_write": true,
  "web_fetch": true,
  "mcp": true,
  "other": true,
});

const FLAG_KINDS = valuesOf<FlagKind>({
  "credential_detected": true,
  "destructive_operation": true,
  "sensitive_path": true,
});

// --- Sessions and tool calls (docs/api.md §2.3–2.8, §4.2–4.7) ---

/** A session object (docs/api.md §2.3). */
/** Where a cost comes from (issue #33): the agent, the price table, or nowhere. */
const costSource = z.enum(["reported", "estimated", "none"]);

export const Session = component(
  "Session",
  "One run of a coding agent, made of the tool calls it reported. With filters, the counts, times and duration cover the matching calls only; `cost_usd` always covers the whole session.",
  z.object({
    "session_id": z.string().describe("Id of the session as reported by the agent."),
    "actor_id": z.string().describe("Telemetry id of the actor that sent the session."),
    "actor_name": z.string().describe(
      'Extension: the name the actor was created with (`actor create --name`); `""` when it has none.',
    ),
    "first_seen": timestamp("Time of the session's first matching tool call."),
    "last_seen": timestamp("Time of the session's last matching tool call."),
    "tool_call_count": count("Tool calls in the session, rejected ones included."),
    "agent_system": z.string().describe("The agent that reported the session."),
    "agent_version": z.string().describe('Agent version; `""` when not reported.'),
    "model": z.string().describe(
      'Model recorded on the session\'s tool calls (the latest that reports one); `""` when none does.',
    ),
    "error_count": count("Tool calls with outcome `error`."),
    "success_count": count("Tool calls with outcome `ok`."),
    "total_duration_ms": count("Milliseconds between the first and last tool call."),
    "cost_usd": z.number().describe(
      "Total model cost of the whole session in US dollars (rounded to 1e-9), regardless of any filter; 0 when the agent reports no cost.",
    ),
    "estimated_cost_usd": z.number().describe(
      "Extension: the estimated cost in US dollars (rounded to 1e-9) of the session's model calls that reported none, from the price table (docs/api.md §2.13); never part of `cost_usd`; 0 when none was estimated.",
    ),
    "cost_source": costSource.describe(
      "Extension: `estimated` when any model call of the session was estimated (its cost is `cost_usd` + `estimated_cost_usd`), else `reported` when any reported a cost, else `none`.",
    ),
    "tags": z.array(z.string()).max(0).describe("Always `[]`."),
    "parent_session_id": z.string().nullable().describe(
      "Extension: the session that spawned this one (a Codex subagent runs as a session of its own); null otherwise.",
    ),
    "repository": z.string().describe(
      'Extension: the repository the session worked in, as its agent reported it (docs/ingest-mapping.md §10); `""` when none was reported.',
    ),
    "dimensions": DIMENSIONS,
  }),
);

/** A tool call object, list form (docs/api.md §2.4). */
export const ToolCall = component(
  "ToolCall",
  "A tool call, list form. A rejected call has `duration_ms` and `success` null. Optional fields are left out when empty.",
  z.object({
    "id": z.string().describe("Id of the tool call."),
    "timestamp": timestamp("When the call happened."),
    "session_id": z.string().describe("Session the call belongs to."),
    "actor_id": z.string().describe("Telemetry id of the actor that sent it."),
    "actor_name": z.string().describe(
      'Extension: the actor\'s name (`actor create --name`); `""` when it has none.',
    ),
    "tool_name": z.string().describe(
      "The tool: a built-in tool's name, or an MCP tool's as `mcp__<server>__<tool>`.",
    ),
    "tool_type": z.enum(TOOL_TYPES).describe(
      "`builtin` (the agent's own tools) or `mcp` (tools served by an MCP server).",
    ),
    "category": z.enum(CATEGORIES).describe("What kind of tool it is."),
    "duration_ms": z.int().nonnegative().nullable().describe("Run time; null when rejected."),
    "success": z.boolean().nullable().describe(
      "true for `ok`, false for `error`, null for `rejected`.",
    ),
    "outcome": z.enum(OUTCOMES).describe(
      "`ok` (ran and succeeded), `error` (ran and failed) or `rejected` (denied by a permission rule, a hook or a person; never ran).",
    ),
    "error_message": z.string().optional().describe("Error text of a failed call."),
    "decision": z.string().optional().describe(
      "Permission decision the agent reported (for example `accept` or `reject`), lower case.",
    ),
    "decision_source": z.string().optional().describe(
      "What made the decision (for example `config` for a permission rule), lower case.",
    ),
    "agent_system": z.string().describe("The agent that reported the call."),
    "model": z.string().optional().describe(
      "Model, when the agent reports it on tool calls.",
    ),
    "dimensions": DIMENSIONS.describe(
      "Extension: the dimensions of the call's session, key to value; `{}` when none.",
    ),
  }),
);

/** A tool call as listed in a session detail (docs/api.md §4.4). */
export const SessionToolCall = component(
  "SessionToolCall",
  "A tool call inside a session detail.",
  ToolCall.pick({
    "id": true,
    "timestamp": true,
    "tool_name": true,
    "tool_type": true,
    "category": true,
    "duration_ms": true,
    "success": true,
    "outcome": true,
    "error_message": true,
    "decision": true,
    "decision_source": true,
  }),
);

const optionalText = (description: string) => z.string().optional().describe(description);

/** A tool call detail object (docs/api.md §2.5). */
export const ToolCallDetail = component(
  "ToolCallDetail",
  "One tool call in detail: the list form's fields and the ones below. Every field not required is left out when empty.",
  ToolCall.extend({
    "result_size_bytes": z.int().nonnegative().nullable().describe(
      "Size of the output in bytes (as the agent reported it, else as received); null when rejected or unknown.",
    ),
    "prompt_id": optionalText("The user prompt that led to the call."),
    "agent_version": optionalText("Agent version."),
    "agent_name": optionalText(
      "Agent name, when reported (a Codex agent path, a Claude Code subagent's id).",
    ),
    "provider_name": optionalText("Model provider, when reported."),
    "tool_call_id": optionalText("The agent's own id for the call."),
    "tool_use_id": optionalText("Claude Code's `tool_use_id` for the call."),
    "tool_description": optionalText("The tool's description, when reported."),
    "source": optionalText(
      "How the call reached the service: `otlp_logs` or `otlp_traces`.",
    ),
    "arguments": optionalText(
      "The tool's input as a JSON-encoded string (parse a second time for an object), when the agent sends it. Detected secrets are replaced by `[REDACTED:<kind>]` unless the server keeps them.",
    ),
    "result": optionalText(
      "The tool's output, when the agent sends it; redacted as `arguments`.",
    ),
    "error_type": optionalText("Kind of error, for a failed call."),
    "mcp_server_name": optionalText("The MCP server that served the tool."),
    "mcp_server_scope": optionalText("The MCP server's configured scope."),
    "os_type": optionalText("Operating system of the machine running the agent."),
    "host_arch": optionalText("CPU architecture of the machine running the agent."),
    "terminal_type": optionalText("Terminal of the machine running the agent."),
    "cwd": optionalText("Working directory of the agent, when reported."),
    "trace_id": optionalText("Trace id (hex), when the agent sends traces."),
    "span_id": optionalText("Span id (hex), when the agent sends traces."),
  }),
);

/** A risk flag (docs/api.md §2.6). */
export const RiskFlag = component(
  "RiskFlag",
  "A risk flag raised on a tool call when it was stored.",
  z.object({
    "timestamp": timestamp("Time of the flagged tool call."),
    "tool_call_id": z.string().describe(
      "The agent's id of the flagged tool call; the call's own `id` when the agent gives none.",
    ),
    "tool_name": z.string().describe("Tool that was flagged."),
    "flag": z.enum(FLAG_KINDS).describe(
      "`credential_detected` (a secret or credential), `destructive_operation` (e.g. a recursive delete, a force push) or `sensitive_path` (e.g. an environment file, SSH keys).",
    ),
    "evidence": z.string().describe(
      "What matched: the path, the kind of command, or the kind of credential and at most its first 4 characters (never the secret).",
    ),
  }),
);

/** An external domain entry (docs/api.md §2.8). */
export const ExternalDomain = component(
  "ExternalDomain",
  "An external domain a session reached (curl/wget URLs, web fetches, URL arguments of MCP tools).",
  z.object({
    "domain": z.string().describe("Lower-cased host without port."),
    "scheme": z.string().describe("The URL's scheme."),
    "hits": count("Tool calls that reached it."),
  }),
);

/** The pagination envelope (docs/api.md §2.10) over `item`. */
function page<T extends z.ZodType>(id: string, description: string, item: T) {
  return component(
    id,
    description,
    z.object({
      "data": z.array(item).max(500).describe("The page; `[]` when nothing matches."),
      "next_cursor": z.string().optional().describe(
        "Present only when another page exists: send it as `cursor` with the same filters.",
      ),
    }),
  );
}

/** `GET /v1/sessions`. */
export const SessionPage = page(
  "SessionPage",
  "A page of sessions, most recent `last_seen` first (ties by session id).",
  Session,
);

/** `GET /v1/tool-calls`. */
export const ToolCallPage = page(
  "ToolCallPage",
  "A page of tool calls, newest first (ties by id).",
  ToolCall,
);

// --- Export (an extension: README, issue #34) ---

/** A risk flag of one tool call, in an export line. */
export const CallRiskFlag = component(
  "CallRiskFlag",
  "A risk flag raised on the call: its kind and what matched (never a secret).",
  RiskFlag.pick({ "flag": true, "evidence": true }),
);

/** An external domain one tool call reached, in an export line. */
export const CallDomain = component(
  "CallDomain",
  "An external domain the call reached (a curl/wget URL, a web fetch, a URL argument of an MCP tool).",
  ExternalDomain.pick({ "domain": true, "scheme": true }),
);

/** One line of `GET /v1/export/tool-calls`. */
export const ExportedToolCall = component(
  "ExportedToolCall",
  "Extension: a tool call as `/v1/tool-calls` lists it, with its risk flags and external domains. Arguments and results are not exported (read them with `/v1/tool-calls/{id}`).",
  ToolCall.extend({
    "risk_flags": z.array(CallRiskFlag).describe("Its risk flags by kind; `[]` when none."),
    "external_domains": z.array(CallDomain).describe(
      "The external domains it reached, by domain and scheme; `[]` when none.",
    ),
  }),
);

/** One line of `GET /v1/export/sessions`. */
export const ExportedSession = component(
  "ExportedSession",
  "Extension: a whole session as `/v1/sessions/{id}` gives it (its counts, times and cost cover all of its calls, whatever the filters).",
  Session.extend({}),
);

const facet = (description: string) => z.array(z.string()).max(1000).describe(description);

/** `GET /v1/sessions/facets` (docs/api.md §4.3). */
export const SessionFacets = component(
  "SessionFacets",
  "Values for the session filters across the organization's data, sorted by code point, at most 1,000 each.",
  z.object({
    "domains": facet("Values for `domain`."),
    "agents": facet("Values for `agent`."),
    "repositories": facet("Extension: values for `repository`."),
  }),
);

/** `GET /v1/tool-calls/facets` (docs/api.md §4.6). */
export const ToolCallFacets = component(
  "ToolCallFacets",
  "Values for the tool-call filters across the organization's data, sorted by code point, at most 1,000 each.",
  z.object({
    "tool_names": facet("Values for `tool_name`."),
    "tool_types": facet("Values for `tool_type`."),
    "categories": facet("Values for `category`."),
  }),
);

/** A model call inside a session detail (an extension). */
export const SessionModelCall = component(
  "SessionModelCall",
  "Extension: one model request of a session, as its agent reported it.",
  z.object({
    "id": z.string().describe(
      "The server's id of the model call (the same for a retried export of it).",
    ),
    "timestamp": timestamp("When the request was made."),
    "provider_name": z.string().describe('Model provider; `""` when not reported.'),
    "model": z.string().describe('Model; `""` when not reported.'),
    "input_tokens": count("Input tokens (0 when not reported)."),
    "output_tokens": count("Output tokens (0 when not reported)."),
    "cache_read_tokens": count("Input tokens read from the prompt cache (0 when not reported)."),
    "cache_creation_tokens": count(
      "Input tokens written to the prompt cache (0 when not reported).",
    ),
    "cost_usd": z.number().nullable().describe(
      "Cost in US dollars as the agent reported it (rounded to 1e-9); null when it reported none.",
    ),
    "estimated_cost_usd": z.number().nullable().describe(
      "The price table's estimate in US dollars (rounded to 1e-9) when the call reported no cost and its model is priced (docs/api.md §2.13); null otherwise.",
    ),
    "cost_source": costSource.describe(
      "`reported` (the agent's `cost_usd`), `estimated` (`estimated_cost_usd`) or `none`.",
    ),
    "duration_ms": z.int().nonnegative().nullable().describe(
      "How long the request took; null when not reported.",
    ),
  }),
);

const detailList = <T extends z.ZodType>(item: T, description: string) =>
  z.array(item).max(5000).describe(description);

/** `GET /v1/sessions/{id}` (docs/api.md §4.4). */
export const SessionDetail = component(
  "SessionDetail",
  "One session with its tool calls, risk flags and external domains. Each list holds at most 5,000 entries; page longer sessions with `/v1/tool-calls?session_id=`.",
  z.object({
    "session": Session,
    "tool_calls": detailList(SessionToolCall, "The session's tool calls, oldest first."),
    "risk_flags": detailList(RiskFlag, "Its risk flags, oldest first."),
    "external_domains": detailList(ExternalDomain, "Its external domains, most hits first."),
    "child_sessions": z.array(Session).max(1000).describe(
      "Extension: the sessions it spawned (Codex subagents), oldest first, at most 1,000.",
    ),
    "model_calls": detailList(
      SessionModelCall,
      "Extension: the session's model calls, oldest first (ties by `id`); `[]` when none.",
    ),
  }),
);

/** `GET /v1/ping` (docs/api.md §4.1). */
export const Ping = component(
  "Ping",
  "The service's name and version.",
  z.object({ "service": z.string(), "version": z.string() }),
);

/** A row of `GET /v1/unmapped-events` (an extension). */
export const UnmappedEvent = component(
  "UnmappedEvent",
  "Records the organization's agents sent that stored nothing, of one agent, version, event name and reason.",
  z.object({
    "agent": z.enum(AGENT_LABELS as [string, ...string[]]).describe(
      "The mapping the records went to, or `other`.",
    ),
    "agent_version": z.string().describe("The agent's version as sent."),
    "event_name": z.string().describe("The record's event name."),
    "reason": z.string().describe(
      "`unmapped_event` (an event the agent's mapping does not name: new, renamed or not mapped yet), `not_kept` (one it names and does not keep on purpose, e.g. `user_prompt`), `unknown_agent` (no agent's) or `unusable` (it lacked what its event needs).",
    ),
    "records": count("Records received (a retried export counts again)."),
    "first_seen": timestamp("When the first of them arrived."),
    "last_seen": timestamp("When the last of them arrived."),
  }),
);

/** `GET /v1/unmapped-events` (an extension). */
export const UnmappedEvents = component(
  "UnmappedEvents",
  "What the organization's agents sent that stored nothing, newest `last_seen` first, at most 1,000 rows.",
  z.object({ "data": z.array(UnmappedEvent).max(1000) }),
);

// --- Dimensions (an extension, docs/api.md §4.22) ---

/** One dimension key and its values. */
export const DimensionKey = component(
  "DimensionKey",
  "A dimension key and the values the organization's sessions reported for it.",
  z.object({
    "key": z.string().describe("The key, a resource attribute named by `--dimension`."),
    "values": z.array(z.string()).max(1000).describe(
      "Its values, sorted by code point, at most 1,000.",
    ),
    "dropped_values": count(
      "Values reported for this key and not kept: over 256 characters, or past the key's 1,000 values.",
    ),
  }),
);

/** `GET /v1/dimensions`. */
export const Dimensions = component(
  "Dimensions",
  "Extension: the organization's dimension keys, sorted by code point.",
  z.object({ "data": z.array(DimensionKey) }),
);

// --- The fleet (an extension) ---

/** An agent and version an actor ran. */
export const FleetAgent = component(
  "FleetAgent",
  "An agent and version an actor's sessions ran.",
  z.object({
    "agent": z.string().describe(
      "The agent as sessions name it (their `agent_system`, the `agent` filter of `/v1/sessions`).",
    ),
    "agent_version": z.string().describe(
      'Its version, as the first record of each session reported it; `""` when not reported.',
    ),
    "last_seen": timestamp("The actor's last tool call in a session of this agent and version."),
  }),
);

/** What an actor sent that stored nothing, of one agent, event name and reason. */
export const FleetUnmappedEvent = component(
  "FleetUnmappedEvent",
  "Records an actor sent that stored nothing, of one agent, event name and reason, over its versions (`/v1/unmapped-events?actor=` has them by version).",
  UnmappedEvent.pick({
    "agent": true,
    "event_name": true,
    "reason": true,
    "records": true,
    "last_seen": true,
  }),
);

/** One actor of `GET /v1/fleet`. */
export const FleetActor = component(
  "FleetActor",
  "An actor of the organization: when it was last seen, what it runs, what of its telemetry stored nothing.",
  z.object({
    "actor_id": z.string().describe("The actor's telemetry id."),
    "actor_name": z.string().describe(
      'The name the actor was created with (`actor create --name`); `""` when it has none.',
    ),
    "last_seen": TIMESTAMP.nullable().describe(
      "Its latest tool call, or the latest arrival of a record that stored nothing; null when it never sent either (model calls and metric points alone are not counted).",
    ),
    "sessions_7d": count(
      "Its sessions with a tool call in the 7 days ending at the request (their start included).",
    ),
    "agents": z.array(FleetAgent).max(100).describe(
      "Each agent and version its sessions ran, most recently seen first (ties by agent, then version), at most 100.",
    ),
    "unmapped_events": z.array(FleetUnmappedEvent).describe(
      "What of its telemetry the server did not understand, most recently seen first (ties by agent, event name, reason); an organization keeps at most 1,000 such rows.",
    ),
  }),
);

/** `GET /v1/fleet` (an extension). */
export const Fleet = component(
  "Fleet",
  "The organization's actors, most recently seen first (ties by actor id), then those that never sent telemetry (by id), at most 1,000.",
  z.object({ "data": z.array(FleetActor).max(1000) }),
);

// --- Insights (docs/api.md §2.11, §4.8–4.14; productivity is an extension) ---

/** The insight envelope's `window`. */
export const InsightWindow = component(
  "InsightWindow",
  "The window an insight covers: it ends at the request time and starts that many days earlier.",
  z.object({
    "window": z.enum(WINDOW_NAMES as [string, ...string[]]).describe("The value used."),
    "granularity": z.enum(GRANULARITIES).describe("The value used."),
    "start": timestamp("Start, inclusive."),
    "end": timestamp("End, exclusive."),
  }),
);

type Fields = NonNullable<(typeof INSIGHTS)[AnyInsightName]["series"]>;

/** A field of the registry as served (`shapeValue` in `analytics/insights.ts`). */
function insightField(kind: Fields[string]): z.ZodType {
  switch (kind) {
    case "int":
      return z.int();
    case "number":
    case "usd":
      return z.number();
    case "number?":
    case "usd?":
      return z.number().nullable();
    case "string":
      return z.string();
    case "string?":
      return z.string().nullable();
    case "time":
      return TIMESTAMP;
    case "bool":
      return z.boolean();
  }
}

function insightRow(fields: Fields): z.ZodObject {
  return z.object(Object.fromEntries(
    Object.entries(fields).map(([name, kind]) => [name, insightField(kind)]),
  ));
}

/** An insight's breakdown row: its registry fields, the actor's name, nested rows. */
function breakdownRow(name: AnyInsightName, fields: Fields): z.ZodObject {
  const { actorFilters, nested } = INSIGHTS[name];
  const shape: Record<string, z.ZodType> = {};
  for (const [field, kind] of Object.entries(fields)) {
    shape[field] = insightField(kind);
    // The route names each row's actor (`src/api/insights.ts`).
    if (actorFilters && field === "actor_id") {
      shape["actor_name"] = z.string().describe('The actor\'s name; `""` when it has none.');
    }
  }
  if (nested !== undefined) shape[nested.field] = z.array(insightRow(nested.fields));
  return z.object(shape);
}

/** What each insight reports, for its body's description. */
const INSIGHT_DESCRIPTIONS: Record<AnyInsightName, string> = {
  "activity": "Tool calls, errors and sessions per day or week. `breakdown` is null.",
  "top-tools":
    "The 50 most-used tools (per name and type) with errors and mean duration. `series` is null.",
  "outliers":
    "Sessions whose tool-call count is above the window's 95th percentile of calls per session, up to 50, most calls first. `series` is null.",
  "cost":
    "Model tokens and cost, per bucket and by provider and model (up to 50 rows, most input plus output tokens first).",
  "risk": "Risk flags raised, per bucket and kind, and by kind (most flags first).",
  "domains":
    "External domains reached, per bucket and by domain and scheme (up to 50 rows, most hits first).",
  "productivity":
    "Extension: what the agents got done (sessions, active time, lines, commits, pull requests, edit decisions, cost ratios), from their metrics and, where one is missing, their tool calls; `breakdown` has up to 500 rows per actor and agent.",
};

/** The insight envelope (docs/api.md §2.11) of one insight. */
function insightBody(name: AnyInsightName) {
  const { series, breakdown, summary } = INSIGHTS[name];
  const id = name.split("-").map((part) => part[0]!.toUpperCase() + part.slice(1)).join("");
  return component(
    `${id}Insight`,
    INSIGHT_DESCRIPTIONS[name],
    z.object({
      "window": InsightWindow,
      "summary": insightRow(summary).describe("Headline figures for the whole window."),
      "series": series === null ? z.null() : z.array(insightRow(series)).describe(
        "Points by `bucket` (the bucket's start), oldest first; buckets without data are left out.",
      ),
      "breakdown": breakdown === null
        ? z.null()
        : z.array(breakdownRow(name, breakdown)).describe("Rows per key."),
      "group_by": z.string().optional().describe(
        "**Extension.** With `group_by` only: the value used (`actor`, `agent` or `dim.<key>`).",
      ),
      "groups": z.array(z.object({
        "value": z.string().nullable().describe(
          "The actor id, the agent system or the dimension value; null: the rows with none.",
        ),
        "label": z.string().optional().describe(
          "With `group_by=actor`: the actor's name, when it has one.",
        ),
        "summary": insightRow(summary).describe(
          "The summary's figures over this group's rows only.",
        ),
      })).optional().describe(
        `**Extension.** With \`group_by\` only: one summary per group, at most ${MAX_GROUPS}, biggest first (${
          GROUP_HEADLINES[name]
        }), ties by value, the null group last.`,
      ),
      "groups_truncated": z.boolean().optional().describe(
        `**Extension.** With \`group_by\` only: whether there were more than ${MAX_GROUPS} groups.`,
      ),
    }),
  );
}

/** What orders an insight's groups, biggest first (docs/api.md §4.23). */
const GROUP_HEADLINES: Record<AnyInsightName, string> = {
  "activity": "most `total_calls`",
  "top-tools": "most `total_calls`",
  "outliers": "most `session_count`",
  "cost": "most `input_tokens` plus `output_tokens`",
  "risk": "most `total_flags`",
  "domains": "most `total_hits`",
  "productivity": "most `sessions`",
};

/** Each insight's response body. */
export const INSIGHT_BODIES: Record<AnyInsightName, z.ZodType> = byKey(
  Object.keys(INSIGHTS) as AnyInsightName[],
  insightBody,
);

// --- Errors (docs/api.md §7 and README's additions) ---

/** When each error code is answered. */
const ERROR_WHEN: Record<ErrorCode, string> = {
  "invalid_request":
    "a query parameter is malformed or out of range (limit, cursor, timestamp, window, granularity, outcome, use of `success`); `message` names the problem.",
  "unauthenticated":
    "missing header, wrong scheme, unknown or revoked key, or an ingest key; `message` is always `invalid or missing Bearer credential`.",
  "not_found": "the session or tool call is not in the caller's organization.",
  "internal":
    "the query failed on the server, including past the query time limit (30 s by default); retry later.",
  "not_implemented": "the `tag` filter is used on `/v1/sessions`.",
  "keystore_unavailable": "the key store was unreachable; retry with backoff.",
  "overloaded":
    "(an extension) too many queries are waiting for a reader; retry after `Retry-After` seconds.",
  "insights_unavailable":
    "(an extension) the analytics replica is being built or cannot be written; retry after `Retry-After` seconds.",
};

/** The error body (docs/api.md §7) of one code. */
function errorBody(code: ErrorCode) {
  const id = code.split("_").map((part) => part[0]!.toUpperCase() + part.slice(1)).join("");
  return component(
    `${id}Error`,
    `\`${code}\` (${ERROR_STATUS[code]}): ${ERROR_WHEN[code]}`,
    z.object({
      "error": z.object({ "code": z.literal(code), "message": z.string() }),
    }),
  );
}

/** Each error code's body. */
export const ERROR_BODIES: Record<ErrorCode, z.ZodType> = byKey(
  Object.keys(ERROR_WHEN) as ErrorCode[],
  errorBody,
);

// --- Outside the key: /healthz, /readyz, the document itself ---

/** `GET /healthz` (docs/api.md §4.15). */
export const Health = component(
  "Health",
  "The service is up.",
  z.object({ "status": z.literal("ok") }),
);

/** `GET /readyz` answering 200. */
export const Ready = component(
  "Ready",
  "Both stores are writable and a query answers.",
  z.object({ "status": z.literal("ready") }),
);

/** `GET /readyz` answering 503. */
export const NotReady = component(
  "NotReady",
  "Not ready, and why.",
  z.object({ "status": z.literal("unavailable"), "reason": z.string() }),
);

/** `GET /v1/openapi.json`. */
export const OpenApiDocument = component(
  "OpenApiDocument",
  "This document: OpenAPI 3.1.",
  z.looseObject({ "openapi": z.string() }),
);
