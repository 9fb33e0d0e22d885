import { createHash } from "node:crypto";
import type { Attributes, AttributeValue } from "../../model/telemetry.ts";
import type { DecodedMetricPoint } from "./_point.ts";

/** Canonical text of each resource object already seen (points of one resource share it). */
const resourceTexts = new WeakMap<Attributes, string>();

/**
 * A series' identity independent of its sender: a digest of its resource
 * attributes, scope name, metric name and point attributes, per OTLP's
 * data model (two points of one series differ only in times and value). Key
 * order does not matter; value types do (`1` and `"1"` differ). Every
 * attribute counts, kept or not: series that differ only in an attribute
 * we drop (Gemini's `success`) are distinct cumulative series, and merging
 * them before differencing would read their interleaving as resets.
 */
export function seriesKeyOf(point: DecodedMetricPoint): string {
  let resource = resourceTexts.get(point.resource);
  if (resource === undefined) {
    resource = canonical(point.resource);
    resourceTexts.set(point.resource, resource);
  }
  return digest(
    `${resource}\u0000${point.scopeName}\u0000${point.metric}\u0000${canonical(point.attributes)}`,
    32,
  );
}

/** JSON with object keys sorted at every depth. */
function canonical(value: AttributeValue): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key]!)}`).join(",")}}`;
}

/** The first `digits` hex digits of the SHA-256 of `text`. */
export function digest(text: string, digits: number): string {
  return createHash("sha256").update(text).digest("hex").slice(0, digits);
}
