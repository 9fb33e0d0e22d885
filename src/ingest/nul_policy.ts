/**
 * One policy for U+0000 in text on both engines: PostgreSQL's text cannot
 * hold it, so it becomes U+FFFD before anything else sees a record (mappers,
 * caps, ids, detection, either store). Both engines thus store, detect and
 * serve the same text. A JSON text's `\u0000` escape is no NUL and is kept.
 *
 * @module
 */
import type { AttributeValue, OtlpRecord, TelemetryEvent } from "../model/telemetry.ts";

const NUL = "\u0000";
const REPLACEMENT = "\ufffd";

/**
 * Replaces U+0000 in every text of a decoded record, in place: attributes
 * (keys and values, nested too), resource, body, names; returns the record.
 */
export function replaceNulInRecord(record: OtlpRecord): OtlpRecord {
  record.attributes = withoutNul(record.attributes) as OtlpRecord["attributes"];
  // The records of one resource share its object: it is checked once.
  if (!cleanResources.has(record.resource)) {
    record.resource = withoutNul(record.resource) as OtlpRecord["resource"];
    cleanResources.add(record.resource);
  }
  record.body = withoutNul(record.body);
  record.eventName = withoutNul(record.eventName) as string;
  record.scopeName = withoutNul(record.scopeName) as string;
  record.statusMessage = withoutNul(record.statusMessage) as string;
  return record;
}

/**
 * Replaces U+0000 in every text field of a mapped event, in place; returns
 * it. Catches what a mapper decoded itself, e.g. a `\u0000` inside JSON it
 * parsed to pick one field out.
 */
export function replaceNul<E extends TelemetryEvent>(event: E): E {
  const fields = event as unknown as Record<string, unknown>;
  for (const field in fields) {
    const value = fields[field];
    if (typeof value === "string" && value.includes(NUL)) {
      fields[field] = value.replaceAll(NUL, REPLACEMENT);
    }
  }
  return event;
}

/** The value without NUL: itself when it holds none (the usual case), else a copy. */
function withoutNul(value: AttributeValue): AttributeValue {
  if (typeof value === "string") {
    return value.includes(NUL) ? value.replaceAll(NUL, REPLACEMENT) : value;
  }
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    let copy: AttributeValue[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item = withoutNul(value[i]!);
      if (item !== value[i]) (copy ??= [...value])[i] = item;
    }
    return copy ?? value;
  }
  if (!holdsNul(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [withoutNul(key), withoutNul(item)]),
  );
}

/** Whether a text of the value (a key too) holds U+0000; allocates nothing. */
function holdsNul(value: AttributeValue): boolean {
  if (typeof value === "string") return value.includes(NUL);
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (holdsNul(value[i]!)) return true;
    return false;
  }
  for (const key of Object.keys(value)) {
    if (key.includes(NUL) || holdsNul(value[key]!)) return true;
  }
  return false;
}

/**
 * Whether a text may put U+0000 into a record or an event: it holds one, or
 * `\u`. JSON spells U+0000 only as the escape `\u0000`, and a text that
 * holds no `\u` cannot spell that escape either (its backslash or letters
 * escaped), so no `JSON.parse` of it, however nested, makes a NUL. Decoders
 * ask it of the texts they read, so that a request that answers no for all
 * of them skips both replacements.
 */
export function mayHoldNul(text: string): boolean {
  return text.includes(NUL) || text.includes("\\u");
}

/** Resource objects already without NUL (a resource is shared by its records). */
const cleanResources = new WeakSet<object>();
