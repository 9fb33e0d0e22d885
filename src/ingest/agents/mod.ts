/**
 * Agent mappers: turn one decoded OTLP record into the telemetry events it
 * reports (DESIGN §4 "Mapping"). Logs are dispatched on the resource's
 * `service.name` (Claude Code `claude-code*`, Codex `codex_*`, Gemini CLI
 * `gemini-cli`); spans that carry `gen_ai.operation.name` follow the GenAI
 * semantic conventions whatever their service.
 *
 * Each agent is one spec (`_spec.ts`: its events, session and tool-name
 * keys, where each field comes from) in its own file, with functions only
 * for what that agent alone does; `_map.ts` runs every spec. Adding an agent:
 * a spec file beside these, its entry in {@link MappedAgent} and `MAPPERS`,
 * its recognition in {@link mapperOf}, and its tool names in
 * `_classify.ts` when they are new.
 *
 * @module
 */

import type { MapResult, OtlpRecord } from "../types.ts";
import { ignored } from "./_base.ts";
import { mapClaudeCode } from "./claude_code.ts";
import { mapCodex } from "./codex.ts";
import { mapGeminiCli } from "./gemini_cli.ts";
import { mapGenAiSpan } from "./genai.ts";

export { mapClaudeCode } from "./claude_code.ts";
export { mapCodex } from "./codex.ts";
export { mapGeminiCli } from "./gemini_cli.ts";
export { mapGenAiSpan } from "./genai.ts";

/** The logger scope Claude Code emits its events under. */
const CLAUDE_CODE_SCOPE = "com.anthropic.claude_code.events";

/** The agents a mapper exists for: also the bounded `agent` label of the unmapped-record metric. */
export type MappedAgent = "claude-code" | "codex" | "gemini-cli" | "genai";

const MAPPERS: Record<MappedAgent, (record: OtlpRecord) => MapResult> = {
  "claude-code": mapClaudeCode,
  "codex": mapCodex,
  "gemini-cli": mapGeminiCli,
  "genai": mapGenAiSpan,
};

/**
 * The mapper a record goes to, or undefined when none applies. Spans that
 * carry `gen_ai.operation.name` follow the GenAI conventions whatever their
 * service. A log whose `service.name` names no known agent (a user overrode
 * it) is still recognised by Claude Code's logger scope or by a `codex.` /
 * `gemini_cli.` event name.
 */
export function mapperOf(record: OtlpRecord): MappedAgent | undefined {
  if (record.signal === "traces") {
    return record.attributes["gen_ai.operation.name"] === undefined ? undefined : "genai";
  }
  const service = record.resource["service.name"];
  if (typeof service === "string") {
    if (service.startsWith("claude-code")) return "claude-code";
    if (service.startsWith("codex_")) return "codex";
    if (service.startsWith("gemini-cli")) return "gemini-cli";
  }
  if (record.scopeName === CLAUDE_CODE_SCOPE) return "claude-code";
  if (record.eventName.startsWith("codex.")) return "codex";
  if (record.eventName.startsWith("gemini_cli.")) return "gemini-cli";
  return undefined;
}

/**
 * Maps one record: `mapped` with its events, `ignored` for events that are
 * not telemetry we keep (`user_prompt`, other agents' spans, unknown
 * services), or `unusable` with a reason (no session id, no tool name on a
 * tool event, no time that parses) to count in `partialSuccess`.
 */
export function mapRecord(record: OtlpRecord): MapResult {
  const agent = mapperOf(record);
  return agent === undefined ? ignored : MAPPERS[agent](record);
}
