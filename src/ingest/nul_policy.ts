/**
 * One policy for U+0000 in text on both engines: PostgreSQL's text cannot
 * hold it, so every text an event carries has it replaced by U+FFFD before
 * anything else sees the event (caps, ids, detection, either store). Both
 * engines thus store, detect and serve the same text.
 *
 * @module
 */
import type { TelemetryEvent } from "./types.ts";

const NUL = "\u0000";
const REPLACEMENT = "\ufffd";

/** Replaces U+0000 with U+FFFD in every text field of `event`, in place; returns it. */
export function replaceNul<E extends TelemetryEvent>(event: E): E {
  const fields = event as unknown as Record<string, unknown>;
  for (const [field, value] of Object.entries(fields)) {
    if (typeof value === "string" && value.includes(NUL)) {
      fields[field] = value.replaceAll(NUL, REPLACEMENT);
    }
  }
  return event;
}
