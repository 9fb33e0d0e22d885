/**
 * Attribute coercion shared by the agent mappers. Agents send the same field
 * as a string, a number or a boolean depending on agent and version (Claude
 * Code sent `"true"` and `"42"` through at least v2.1.88), so every read goes
 * through one of these functions. They are called for every attribute of
 * every record: no regular expressions, no allocation on the common path.
 * Numbers out of range throw `OutOfRangeError` (see `../limits.ts`).
 *
 * Two rules hold for every read (issue #32):
 *
 * - **Text is read from scalars only.** An identifier, name or label
 *   ({@link str}, {@link strOf}: session ids, tool names, call ids, models,
 *   decisions, error texts, …) is a string, a finite number or a boolean,
 *   written out; OTLP bytes arrive as their hex string, so they count as a
 *   string. An array or a kvlist is not text: it is never JSON-encoded into
 *   one (a session id `{"a":1}` would be a session no agent has), it reads
 *   as absent, like an empty string, and the next key is tried. A field the
 *   event cannot do without (the session id, a tool event's tool name) that
 *   is absent makes the record unusable, and the reason says when an array
 *   or kvlist was sent in its place (`Session id is not a string …`, see
 *   `_base.ts`). Only fields whose content may be structured keep it as JSON
 *   text: arguments ({@link jsonText}) and results ({@link text}).
 * - **NaN and infinities are out of range wherever a number is read**
 *   ({@link num}, {@link count} and every reader built on them: durations,
 *   sizes, tokens, costs): sent as doubles or as text (`NaN`, `Infinity`,
 *   `-inf`, `1e999`, any case), they throw `OutOfRangeError` and the record
 *   is unusable, as a number past any other bound is. Read as a text or a
 *   boolean, a NaN or infinite double means nothing and is absent.
 */

import { MAX_INTEGER, OutOfRangeError } from "../limits.ts";
import type { Attributes, AttributeValue } from "../../model/telemetry.ts";

/**
 * The attribute as a non-empty string, or undefined when absent, null,
 * empty, an array or a kvlist (never JSON-encoded) or a NaN or infinite
 * double. Finite numbers and booleans are written out.
 */
export function str(value: AttributeValue | undefined): string | undefined {
  if (typeof value === "string") return value === "" ? undefined : value;
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value === "boolean") return value ? "true" : "false";
  return undefined;
}

/** Whether the attribute is an array or a kvlist: a value that is not text (see {@link str}). */
export function isStructured(value: AttributeValue | undefined): boolean {
  return typeof value === "object" && value !== null;
}

/** The first value `read` gives of the attributes of `keys`, tried in order. */
function firstOf<T>(
  attributes: Attributes,
  keys: readonly string[],
  read: (value: AttributeValue | undefined) => T | undefined,
): T | undefined {
  for (let i = 0; i < keys.length; i++) {
    const value = read(attributes[keys[i] as string]);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** The first of `keys` whose attribute is a non-empty string (new name, then old name). */
export function strOf(attributes: Attributes, keys: readonly string[]): string | undefined {
  return firstOf(attributes, keys, str);
}

/** The first of `keys` whose attribute is a count (see {@link count}). */
export function countOf(attributes: Attributes, keys: readonly string[]): number | undefined {
  return firstOf(attributes, keys, count);
}

/** The first of `keys` whose attribute is a number (see {@link num}). */
export function numOf(attributes: Attributes, keys: readonly string[]): number | undefined {
  return firstOf(attributes, keys, num);
}

/** The first of `keys` whose attribute gives JSON text (see {@link jsonText}). */
export function jsonTextOf(attributes: Attributes, keys: readonly string[]): string | undefined {
  return firstOf(attributes, keys, jsonText);
}

/** The first of `keys` whose attribute gives result text (see {@link text}). */
export function textOf(attributes: Attributes, keys: readonly string[]): string | undefined {
  return firstOf(attributes, keys, text);
}

/**
 * The attribute as a finite number, or undefined. Numeric strings (`"42"`,
 * `" 1.5 "`) are parsed; empty strings, booleans and other text are not
 * numbers. A number that is not finite is out of range, whether a double
 * (NaN, ±Infinity) or text that names one (`"NaN"`, `"-Infinity"`, `"inf"`,
 * `"1e999"`): throws {@link OutOfRangeError}, which rejects the record.
 */
export function num(value: AttributeValue | undefined): number | undefined {
  if (typeof value === "number") {
    if (Number.isFinite(value)) return value;
    throw new OutOfRangeError(`A number out of range: ${value}`);
  }
  if (typeof value === "string") {
    if (value.length === 0) return undefined;
    const n = Number(value);
    if (Number.isFinite(n)) {
      // Number("  ") is 0: only accept strings with a digit in them.
      return n === 0 && !hasDigit(value) ? undefined : n;
    }
    if (n === Infinity || n === -Infinity || namesNonFinite(value)) {
      throw new OutOfRangeError(`A number out of range: ${value.slice(0, 40)}`);
    }
    return undefined;
  }
  return undefined;
}

/**
 * The attribute as an integer count (rounded), or undefined. A count below 0
 * or above 2^53−1 (tokens, sizes) is out of range: throws
 * {@link OutOfRangeError}, which rejects the record.
 */
export function count(value: AttributeValue | undefined): number | undefined {
  const n = num(value);
  if (n === undefined) return undefined;
  const whole = Math.round(n);
  if (whole < 0 || whole > MAX_INTEGER) {
    throw new OutOfRangeError(`A count out of range: ${n} (0 to 2^53-1 accepted)`);
  }
  return whole === 0 ? 0 : whole;
}

/**
 * The attribute as a boolean, or undefined. Accepts `true`/`false`, the
 * strings `"true"`/`"false"`/`"1"`/`"0"` in any case, and finite numbers (0
 * is false); a NaN or infinite double is no boolean.
 */
export function bool(value: AttributeValue | undefined): boolean | undefined {
  if (typeof value === "boolean") return value;
  if (typeof value === "string") {
    switch (value) {
      case "true":
      case "1":
        return true;
      case "false":
      case "0":
        return false;
    }
    const lower = value.trim().toLowerCase();
    if (lower === "true" || lower === "1" || lower === "yes") return true;
    if (lower === "false" || lower === "0" || lower === "no") return false;
    return undefined;
  }
  if (typeof value === "number") return Number.isFinite(value) ? value !== 0 : undefined;
  return undefined;
}

/**
 * The attribute as JSON text, for `arguments`: a string that already is JSON
 * is kept byte for byte; any other string is JSON-encoded (so it parses back
 * to that string); arrays, maps, numbers and booleans are JSON-encoded.
 * Undefined when absent, null or empty.
 */
export function jsonText(value: AttributeValue | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") return JSON.stringify(value);
  if (value.length === 0) return undefined;
  return isJsonText(value) ? value : JSON.stringify(value);
}

/**
 * The attribute as result text: strings verbatim, anything else
 * JSON-encoded. Undefined when absent or null.
 */
export function text(value: AttributeValue | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * Whether a string is one JSON value. Only strings that can start one are
 * parsed: plain text such as `ls -la` is rejected on its first character
 * without a parse.
 */
export function isJsonText(s: string): boolean {
  let i = 0;
  while (i < s.length && isSpace(s.charCodeAt(i))) i++;
  if (i === s.length) return false;
  const c = s.charCodeAt(i);
  // { [ " - 0-9 start values worth parsing; true/false/null compare exactly.
  if (c === 0x7b || c === 0x5b || c === 0x22 || c === 0x2d || (c >= 0x30 && c <= 0x39)) {
    try {
      JSON.parse(s);
      return true;
    } catch {
      return false;
    }
  }
  const t = i === 0 && !isSpace(s.charCodeAt(s.length - 1)) ? s : s.trim();
  return t === "true" || t === "false" || t === "null";
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * Whether a text that is not a JavaScript number names a non-finite one as
 * other languages write it: `nan`, `inf` or `infinity`, in any case, with an
 * optional sign and surrounding spaces (Python's `nan` and `-inf`, Go's
 * `+Inf`, C's `-nan`).
 */
function namesNonFinite(s: string): boolean {
  if (s.length > 16) return false;
  let t = s.trim().toLowerCase();
  if (t.charCodeAt(0) === 0x2b || t.charCodeAt(0) === 0x2d) t = t.slice(1);
  return t === "nan" || t === "inf" || t === "infinity";
}

function hasDigit(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) return true;
  }
  return false;
}
