/**
 * Agent mappers: turn one decoded OTLP record into the telemetry events it
 * reports (docs/ingest-mapping.md). Which agent a record is comes from one
 * table (`src/agents.ts`); logs and spans go through that agent's mapping
 * (Claude Code has both), and spans of any other sender that carry
 * `gen_ai.operation.name` follow the GenAI semantic conventions.
 *
 * Each agent is one spec (`_spec.ts`: its events, session and tool-name
 * keys, where each field comes from) in its own file, with functions only
 * for what that agent alone does; `_map.ts` runs every spec. Adding an agent:
 * its recognition in `src/agents.ts`, a spec file beside these and its entry
 * in `MAPPERS`, and its tool names in `_classify.ts` when they are new.
 *
 * @module
 */

import type { MapResult, OtlpRecord } from "../../model/telemetry.ts";
import { agentVersionOf, ignored } from "./_base.ts";
import { agentMapper } from "./_map.ts";
import type { AgentSpec } from "./_spec.ts";
import { recogniseAgent, type TelemetryAgent } from "../../agents.ts";
import { claudeCodeSpec, claudeCodeTraceSpec } from "./claude_code.ts";
import { codexSpec } from "./codex.ts";
import { geminiCliSpec } from "./gemini_cli.ts";
import { genAiSpec } from "./genai.ts";

export { mapClaudeCode, mapClaudeCodeSpan } from "./claude_code.ts";
export { mapCodex } from "./codex.ts";
export { mapGeminiCli } from "./gemini_cli.ts";
export { mapGenAiSpan } from "./genai.ts";

/** The agents a mapper exists for: also the bounded `agent` label of the unmapped-record metric. */
export type MappedAgent = TelemetryAgent;

type Signals<T> = { logs?: T; traces?: T };

/** Each agent's spec per signal (none: the signal is not the agent's own). */
const SPECS: Record<MappedAgent, Signals<AgentSpec>> = {
  "claude-code": { logs: claudeCodeSpec, traces: claudeCodeTraceSpec },
  "codex": { logs: codexSpec },
  "gemini-cli": { logs: geminiCliSpec },
  "genai": { traces: genAiSpec },
};

const MAPPERS = Object.fromEntries(
  Object.entries(SPECS).map(([agent, specs]) => [agent, {
    ...(specs.logs === undefined ? {} : { logs: agentMapper(specs.logs) }),
    ...(specs.traces === undefined ? {} : { traces: agentMapper(specs.traces) }),
  }]),
) as Record<MappedAgent, Signals<(record: OtlpRecord) => MapResult>>;

/**
 * The agent version a record reports, read as its agent's mapping reads it
 * (`""` when none, or when no agent's mapping applies).
 */
export function reportedAgentVersion(record: OtlpRecord, agent: MappedAgent | "other"): string {
  const spec = agent === "other" ? undefined : SPECS[agent][record.signal] ??
    SPECS[agent].logs ?? SPECS[agent].traces;
  return spec === undefined ? "" : agentVersionOf(record, spec);
}

/**
 * The agent a record goes to, or undefined when none applies. A record is a
 * known agent's by `src/agents.ts` (service, logger scope, event or span
 * name), and goes through that agent's mapping for its signal. Spans of
 * senders with no span mapping of their own follow the GenAI conventions when
 * they carry `gen_ai.operation.name`, whatever their service.
 */
export function mapperOf(record: OtlpRecord): MappedAgent | undefined {
  const agent = recogniseAgent({
    service: record.resource["service.name"],
    scope: record.scopeName,
    name: record.eventName,
  });
  if (record.signal === "traces") {
    if (agent !== undefined && MAPPERS[agent].traces !== undefined) return agent;
    return record.attributes["gen_ai.operation.name"] === undefined ? undefined : "genai";
  }
  return agent;
}

/**
 * Maps one record: `mapped` with its events, `ignored` for events that are
 * not telemetry we keep (`user_prompt`, other agents' spans, unknown
 * services), or `unusable` with a reason (no session id, no tool name on a
 * tool event, no time that parses) to count in `partialSuccess`.
 */
export function mapRecord(record: OtlpRecord): MapResult {
  const agent = mapperOf(record);
  const mapper = agent === undefined ? undefined : MAPPERS[agent][record.signal];
  return mapper === undefined ? ignored : mapper(record);
}
