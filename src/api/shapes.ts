/**
 * Rows to the API's objects (docs/api.md §2.3–2.8): timestamps as RFC 3339, optional
 * fields left out when empty, rejected calls with null duration and success.
 * Which fields are optional is the objects' schemas' word (`schemas.ts`).
 *
 * @module
 */
import { roundUsd } from "../round.ts";
import { formatTimestamp } from "../time.ts";
import { callCostSource, NO_COST, type SessionCostMap } from "./session_costs.ts";
import {
  optionalFields as optionalFieldsOf,
  SessionToolCall,
  ToolCall,
  ToolCallDetail,
} from "./schemas.ts";

type Row = Record<string, unknown>;

/** Actors' names by id, for `actor_name` (`""` for an id not in it). */
export type ActorNameMap = ReadonlyMap<string, string>;

/** Sessions' dimensions by session id, for `dimensions` and `repository` (docs/api.md §4.22). */
export type DimensionMap = ReadonlyMap<string, Readonly<Record<string, string>>>;

/** The `repository` dimension is the session's repository (docs/ingest-mapping.md §10). */
const REPOSITORY_KEY = "repository";

function text(row: Row, column: string): string {
  const value = row[column];
  return typeof value === "string" ? value : "";
}

function integer(row: Row, column: string): number | null {
  const value = row[column];
  return value === null || value === undefined ? null : Number(value);
}

/** Copies the non-empty string columns into `target` under their API names. */
function optionalFields(target: Row, row: Row, fields: readonly string[]): void {
  for (const field of fields) {
    const value = row[field];
    if (typeof value === "string" && value !== "") target[field] = value;
  }
}

/** `success` per docs/api.md §2.2: true for ok, false for error, null for rejected. */
function success(outcome: string): boolean | null {
  return outcome === "rejected" ? null : outcome === "ok";
}

/** The model out of `printf('%015d|%s|%s', ts, id, model)`. */
function modelFromKey(key: unknown): string {
  if (typeof key !== "string") return "";
  const second = key.indexOf("|", key.indexOf("|") + 1);
  return key.slice(second + 1);
}

/**
 * A session object (docs/api.md §2.3) from a `sessions` row or an aggregated page row, its
 * estimate and cost source from `costs`, its dimensions from `dims`.
 */
export function sessionObject(
  row: Row,
  actorNames: ActorNameMap,
  costs: SessionCostMap,
  dims: DimensionMap,
): Row {
  const first = Number(row.first_seen);
  const last = Number(row.last_seen);
  const actorId = text(row, "actor_id");
  const sessionCost = costs.get(text(row, "session_id")) ?? NO_COST;
  const dimensions = dims.get(text(row, "session_id")) ?? {};
  return {
    session_id: text(row, "session_id"),
    actor_id: actorId,
    actor_name: actorNames.get(actorId) ?? "",
    first_seen: formatTimestamp(first),
    last_seen: formatTimestamp(last),
    tool_call_count: Number(row.tool_call_count),
    agent_system: text(row, "agent_system"),
    agent_version: text(row, "agent_version"),
    model: "model_key" in row ? modelFromKey(row.model_key) : text(row, "model"),
    error_count: Number(row.error_count),
    success_count: Number(row.success_count),
    total_duration_ms: last - first,
    cost_usd: roundUsd(Number(row.cost_usd)),
    // Extensions (issue #33): the estimate of the calls that reported no cost, and the source.
    estimated_cost_usd: roundUsd(sessionCost.estimatedCostUsd),
    cost_source: sessionCost.costSource,
    tags: [],
    // An extension: the session that spawned this one (a Codex subagent), else null.
    parent_session_id: typeof row.parent_session_id === "string" ? row.parent_session_id : null,
    // Extensions (docs/api.md §4.22): its repository and its dimensions.
    repository: dimensions[REPOSITORY_KEY] ?? "",
    dimensions,
  };
}

/** A call's optional fields in a session detail and before `agent_system` in the list form. */
const CALL_OPTIONAL = optionalFieldsOf(SessionToolCall);

/** The fields of a tool call from its tool to its outcome, in both forms. */
function callFields(row: Row): Row {
  const outcome = text(row, "outcome");
  return {
    "tool_name": text(row, "tool_name"),
    "tool_type": text(row, "tool_type"),
    category: text(row, "category"),
    "duration_ms": outcome === "rejected" ? null : integer(row, "duration_ms"),
    success: success(outcome),
    outcome,
  };
}

/** A tool call as listed inside a session detail (docs/api.md §4.4). */
export function sessionToolCallObject(row: Row): Row {
  const call: Row = {
    id: text(row, "id"),
    timestamp: formatTimestamp(Number(row.ts)),
    ...callFields(row),
  };
  optionalFields(call, row, CALL_OPTIONAL);
  return call;
}

/** A tool call object, list form (docs/api.md §2.4). */
export function toolCallObject(row: Row, actorNames: ActorNameMap, dims: DimensionMap): Row {
  const actorId = text(row, "actor_id");
  const call: Row = {
    id: text(row, "id"),
    timestamp: formatTimestamp(Number(row.ts)),
    "session_id": text(row, "session_id"),
    "actor_id": actorId,
    "actor_name": actorNames.get(actorId) ?? "",
    ...callFields(row),
  };
  optionalFields(call, row, CALL_OPTIONAL);
  call.agent_system = text(row, "agent_system");
  optionalFields(call, row, ["model"]);
  // An extension (docs/api.md §4.22): its session's dimensions.
  call.dimensions = dims.get(text(row, "session_id")) ?? {};
  return call;
}

/** The detail's optional fields beyond the list form's. */
const DETAIL_OPTIONAL = optionalFieldsOf(ToolCallDetail).filter((field) =>
  !(field in ToolCall.shape)
);

/** A tool call detail object (docs/api.md §2.5). */
export function toolCallDetailObject(row: Row, actorNames: ActorNameMap, dims: DimensionMap): Row {
  const detail = toolCallObject(row, actorNames, dims);
  const outcome = text(row, "outcome");
  detail.result_size_bytes = outcome === "rejected" ? null : integer(row, "result_size_bytes");
  optionalFields(detail, row, DETAIL_OPTIONAL);
  return detail;
}

/** A risk flag (docs/api.md §2.6). */
export function riskFlagObject(row: Row): Row {
  return {
    timestamp: formatTimestamp(Number(row.ts)),
    tool_call_id: text(row, "tool_call_id"),
    tool_name: text(row, "tool_name"),
    flag: text(row, "flag"),
    evidence: text(row, "evidence"),
  };
}

/** An external domain entry (docs/api.md §2.8). */
export function domainObject(row: Row): Row {
  return { domain: text(row, "domain"), scheme: text(row, "scheme"), hits: Number(row.hits) };
}

/**
 * A model call inside a session detail (an extension): cost and duration null when not
 * reported, the estimate null unless the price table priced a call that reported no cost.
 */
export function sessionModelCallObject(row: Row): Row {
  const cost = row.cost_usd;
  const estimate = row.estimated_cost_usd;
  return {
    id: text(row, "id"),
    timestamp: formatTimestamp(Number(row.ts)),
    provider_name: text(row, "provider_name"),
    model: text(row, "model"),
    input_tokens: Number(row.input_tokens),
    output_tokens: Number(row.output_tokens),
    cache_read_tokens: Number(row.cache_read_tokens),
    cache_creation_tokens: Number(row.cache_creation_tokens),
    cost_usd: cost === null || cost === undefined ? null : roundUsd(Number(cost)),
    estimated_cost_usd: estimate === null || estimate === undefined
      ? null
      : roundUsd(Number(estimate)),
    cost_source: callCostSource(cost, estimate),
    duration_ms: integer(row, "duration_ms"),
  };
}
