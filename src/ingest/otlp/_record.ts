import type { Attributes, AttributeValue } from "../../model/telemetry.ts";

/** Deepest nesting of array and kvlist values accepted, so a hostile body cannot exhaust the stack. */
export const MAX_VALUE_DEPTH = 64;

/**
 * A log record's event name: the `event.name` attribute, else `eventName`,
 * else the body when it is a string, else `""`. The attribute comes first
 * because real clients disagree on `eventName`: Codex CLI sets it to a source
 * location (`event otel/src/tool_result.rs:54`) and names the event only in
 * `event.name` (docs/ingest-mapping.md §2.1).
 */
export function eventNameOf(
  eventName: string,
  attributes: Attributes,
  body: AttributeValue,
): string {
  const attribute = attributes["event.name"];
  if (typeof attribute === "string" && attribute !== "") return attribute;
  if (eventName !== "") return eventName;
  return typeof body === "string" ? body : "";
}

/** Stores one attribute; a `__proto__` key becomes an own property rather than a prototype. */
export function setAttribute(into: Attributes, key: string, value: AttributeValue): void {
  if (key === "__proto__") {
    Object.defineProperty(into, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    into[key] = value;
  }
}
