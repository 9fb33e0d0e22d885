/**
 * Detection of the tool call an event stores, computable before the write
 * transaction: it depends on the event alone (tool, arguments, result and
 * free-form texts), not on what is stored. SQLite runs it on the main thread
 * while the writer thread writes the previous exports, and sends the writer
 * only what detection found or changed (most calls: nothing).
 *
 * @module
 */
import {
  type CallTextName,
  type CallTexts,
  callTexts,
  type Detection,
  detectToolCall,
} from "../detect/mod.ts";
import type { DecisionEvent, TelemetryEvent, ToolCallEvent } from "../model/telemetry.ts";

/** An event that stores a tool call row (a decision only when it rejects). */
type CallEvent = ToolCallEvent | DecisionEvent;

/** The free-form texts of the call an event stores (a decision carries none of its own). */
function textsOf(event: CallEvent): CallTexts {
  return callTexts(event as Partial<Pick<ToolCallEvent, CallTextName>>);
}

/** Detection of the call an event stores. */
export function detectEventCall(event: CallEvent, redact: boolean): Detection {
  return detectToolCall({
    toolName: event.toolName,
    toolType: event.toolType,
    category: event.category,
    ...(event.arguments === undefined ? {} : { arguments: event.arguments }),
    ...("result" in event && event.result !== undefined ? { result: event.result } : {}),
    texts: textsOf(event),
  }, { redact });
}

/**
 * A detection as far as it differs from the event: its flags and domains, and
 * only the texts it changed (redacted). Null: nothing found, nothing changed.
 */
export interface CallFindings {
  flags: Detection["flags"];
  domains: Detection["domains"];
  arguments?: string;
  result?: string;
  texts?: CallTexts;
}

/** What of `detection` differs from `event` (null for nothing). */
export function callFindings(event: CallEvent, detection: Detection): CallFindings | null {
  const findings: CallFindings = { flags: detection.flags, domains: detection.domains };
  let changed = detection.flags.length > 0 || detection.domains.length > 0;
  if (detection.arguments !== event.arguments) {
    findings.arguments = detection.arguments;
    changed = true;
  }
  const result = "result" in event ? event.result : undefined;
  if (detection.result !== result) {
    findings.result = detection.result;
    changed = true;
  }
  const eventTexts = textsOf(event);
  for (const [name, text] of Object.entries(detection.texts ?? {})) {
    if (text !== eventTexts[name as keyof CallTexts]) {
      (findings.texts ??= {})[name as keyof CallTexts] = text;
      changed = true;
    }
  }
  return changed ? findings : null;
}

/** The whole detection of `event` from its {@link callFindings}. */
export function detectionOf(event: CallEvent, findings: CallFindings | null): Detection {
  const texts = textsOf(event);
  const result = "result" in event ? event.result : undefined;
  if (findings === null) {
    return { flags: [], domains: [], arguments: event.arguments, result, texts };
  }
  return {
    flags: findings.flags,
    domains: findings.domains,
    arguments: "arguments" in findings ? findings.arguments : event.arguments,
    result: "result" in findings ? findings.result : result,
    texts: { ...texts, ...findings.texts },
  };
}

/**
 * The findings of every event that stores a call (a tool call, a rejecting
 * decision); null for the other events and for calls with nothing found.
 */
export function exportFindings(
  events: readonly TelemetryEvent[],
  redact: boolean,
): (CallFindings | null)[] {
  return events.map((event) => {
    if (event.kind === "tool_call" || (event.kind === "decision" && event.rejects)) {
      return callFindings(event, detectEventCall(event, redact));
    }
    return null;
  });
}
