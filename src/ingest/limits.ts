/**
 * The limits every record is held to before anything reaches a store (README
 * "Security → Limits"): the window a time must fall in, the range of every
 * number a record maps to, and byte caps on identifiers, names and texts.
 * The bounds are data here. The coercions apply the numeric ones where values
 * are read (`agents/_coerce.ts`, `agents/_time.ts`), throwing
 * {@link OutOfRangeError}; {@link mapWithinLimits} turns that into the
 * record's rejection and checks each mapped event once more, whatever its
 * mapper did with the values, then caps its texts.
 *
 * Why: one float too large for INT64 in one organization's rows used to fail
 * every organization's insights, a time past year 275760 broke lists with
 * `RangeError: Invalid time value`, and a 1 MiB session id repeated on every
 * row grew the database 230 times the bytes received.
 *
 * @module
 */
import { NamedError } from "../errors.ts";
import type { MapResult, OtlpRecord, TelemetryEvent } from "../model/telemetry.ts";
import { replaceNul, replaceNulInRecord } from "./nul_policy.ts";
import { NAME_MAX_BYTES, utf8Bytes, utf8Prefix } from "../model/text.ts";

export { NAME_MAX_BYTES, utf8Bytes, utf8Prefix };

/** Earliest time stored: 1970-01-01T00:00:00.000Z (OTLP times are unsigned since the epoch). */
export const TIME_MIN_MS = 0;
/** Latest time stored: 9999-12-31T23:59:59.999Z, the last a four-digit ISO 8601 year can show. */
export const TIME_MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
/**
 * Largest nanosecond time: OTLP's fixed64 (about 2554-07-21). The JSON
 * decoder reads longer numbers as {@link TIME_NOT_FIXED64}.
 */
export const TIME_MAX_NS = (1n << 64n) - 1n;
/** What the JSON decoder reads a time above {@link TIME_MAX_NS} as (no bigint of a 40-digit text). */
export const TIME_NOT_FIXED64 = 1n << 64n;

/** Largest integer stored: 2^53−1, exact in JavaScript, SQLite, PostgreSQL BIGINT and DuckDB. */
export const MAX_INTEGER = Number.MAX_SAFE_INTEGER;
/**
 * Largest cost of one model call, in US dollars. No API call costs near this;
 * the bound keeps every sum of costs finite (1e308 + 1e308 is Infinity).
 */
export const MAX_COST_USD = 1_000_000;

/** The range of one numeric event field; null values are absent, not checked. */
interface NumberLimit {
  /** How the reason names it. */
  label: string;
  min: number;
  max: number;
  integer: boolean;
}

const COUNT = { min: 0, max: MAX_INTEGER, integer: true };

/** The number-valued fields of each kind of event. */
type NumberFields<T> = T extends unknown
  ? { [K in keyof T]-?: Exclude<T[K], undefined | null> extends number ? K : never }[keyof T]
  : never;

/**
 * Every numeric field an event can carry, with its range. Typed by the
 * events' fields: a new number field is a type error here until it has one.
 */
export const NUMBER_LIMITS: Readonly<Record<NumberFields<TelemetryEvent>, NumberLimit>> = {
  timeMs: { label: "time (ms)", min: TIME_MIN_MS, max: TIME_MAX_MS, integer: true },
  durationMs: { label: "duration_ms", ...COUNT },
  resultSizeBytes: { label: "result size", ...COUNT },
  inputTokens: { label: "input tokens", ...COUNT },
  outputTokens: { label: "output tokens", ...COUNT },
  cacheReadTokens: { label: "cache read tokens", ...COUNT },
  cacheCreationTokens: { label: "cache creation tokens", ...COUNT },
  costUsd: { label: "cost_usd", min: 0, max: MAX_COST_USD, integer: false },
};

/** Identifiers: session, call, prompt, trace and span ids. */
export const ID_MAX_BYTES = 256;
/** A working directory (Linux PATH_MAX). */
export const PATH_MAX_BYTES = 4096;
/**
 * An error message. It is served in every row of `/v1/tool-calls`, so it is
 * kept shorter than other texts: 500 rows stay within a few MiB. (Codex's
 * failed output is also the call's `result`, under the larger cap.)
 */
export const ERROR_MESSAGE_MAX_BYTES = 8192;
/** Arguments, results and tool descriptions: served only by a tool call's detail. */
export const TEXT_MAX_BYTES = 65536;

/**
 * What happens to a text over its cap. `reject`: the record is rejected with
 * its reason (identifiers join rows and name groups: a truncated one could
 * merge distinct sessions, calls, tools or models, and no agent sends one this
 * long). `truncate`: cut at a character boundary, ending in the marker.
 * `json`: arguments stay JSON (docs/api.md §2.5: parse a second time to get an
 * object): each long string inside is truncated.
 */
export type OverCap = "reject" | "truncate" | "json";

/** The cap of one text field. */
interface TextLimit {
  label: string;
  bytes: number;
  over: OverCap;
}

const id = (label: string): TextLimit => ({ label, bytes: ID_MAX_BYTES, over: "reject" });
const key = (label: string): TextLimit => ({ label, bytes: NAME_MAX_BYTES, over: "reject" });
const note = (label: string): TextLimit => ({ label, bytes: NAME_MAX_BYTES, over: "truncate" });

/** The string-valued fields of each kind of event. */
type StringFields<T> = T extends unknown
  ? { [K in keyof T]-?: Exclude<T[K], undefined> extends string ? K : never }[keyof T]
  : never;

/**
 * String fields the mappers fill from their own vocabulary (an enum, a
 * derived identity), never with the sender's text as it came: no cap needed.
 */
type OwnWords = "kind" | "identity" | "toolType" | "category" | "outcome" | "source";

/**
 * Every text field an event can carry, with its cap. Typed by the events'
 * fields: a new string field is a type error here until it has a cap (or is
 * one of {@link OwnWords}), so no sender text goes uncapped by omission.
 */
export const TEXT_LIMITS: Readonly<
  Record<Exclude<StringFields<TelemetryEvent>, OwnWords>, TextLimit>
> = {
  sessionId: id("session id"),
  parentSessionId: id("parent session id"),
  toolCallId: id("tool call id"),
  toolUseId: id("tool use id"),
  promptId: id("prompt id"),
  traceId: id("trace id"),
  spanId: id("span id"),
  agentSystem: key("agent (service.name)"),
  toolName: key("tool name"),
  model: key("model"),
  providerName: key("provider name"),
  agentName: key("agent name"),
  mcpServerName: key("MCP server name"),
  agentVersion: note("agent version"),
  errorType: note("error type"),
  decision: note("decision"),
  decisionSource: note("decision source"),
  mcpServerScope: note("MCP server scope"),
  osType: note("OS type"),
  hostArch: note("host architecture"),
  terminalType: note("terminal type"),
  cwd: { label: "cwd", bytes: PATH_MAX_BYTES, over: "truncate" },
  errorMessage: { label: "error message", bytes: ERROR_MESSAGE_MAX_BYTES, over: "truncate" },
  result: { label: "result", bytes: TEXT_MAX_BYTES, over: "truncate" },
  toolDescription: { label: "tool description", bytes: TEXT_MAX_BYTES, over: "truncate" },
  arguments: { label: "arguments", bytes: TEXT_MAX_BYTES, over: "json" },
};

/**
 * A value out of its documented range, thrown where it is read; the record is
 * rejected with this message as its reason.
 */
export class OutOfRangeError extends NamedError {}

/** Throws {@link OutOfRangeError} unless `ns` (a nanosecond time named `what`) is a fixed64. */
export function checkTimeNs(ns: bigint | null, what: string): void {
  if (ns !== null && ns > TIME_MAX_NS) {
    throw new OutOfRangeError(`${what} out of range: above 2^64-1 ns`);
  }
}

/** Throws {@link OutOfRangeError} unless `ms` (named `what`) is a whole time in the window. */
export function checkTimeMs(ms: number, what: string): void {
  if (!(Number.isInteger(ms) && ms >= TIME_MIN_MS && ms <= TIME_MAX_MS)) {
    throw new OutOfRangeError(
      `${what} out of range: ${ms} ms (1970-01-01 to 9999-12-31 accepted)`,
    );
  }
}

/**
 * Maps one record with `map` and holds the result to the limits: a value a
 * coercion found out of range, a number or time of an event out of range, a
 * sequence number that is not one, or an identifier or key over its cap makes
 * the record `unusable` with the reason; longer texts are truncated in place.
 * Any other error of the mapper is thrown as before. `nulPossible` false (the
 * decoder found no text that may hold U+0000) skips the NUL replacements.
 */
export function mapWithinLimits(
  record: OtlpRecord,
  map: (record: OtlpRecord) => MapResult,
  nulPossible = true,
): MapResult {
  let result: MapResult;
  try {
    result = map(nulPossible ? replaceNulInRecord(record) : record);
  } catch (error) {
    if (error instanceof OutOfRangeError) return { status: "unusable", reason: error.message };
    throw error;
  }
  if (result.status !== "mapped") return result;
  const reason = recordReason(record);
  if (reason !== undefined) return { status: "unusable", reason };
  for (const event of result.events) {
    if (nulPossible) replaceNul(event);
    const eventReason = numberReason(event) ?? capTexts(event);
    if (eventReason !== undefined) return { status: "unusable", reason: eventReason };
  }
  return result;
}

/** Why the record's own times or `event.sequence` are out of range, if they are. */
function recordReason(record: OtlpRecord): string | undefined {
  const spans = record.signal === "traces";
  try {
    checkTimeNs(record.timeUnixNano, spans ? "startTimeUnixNano" : "timeUnixNano");
    checkTimeNs(record.observedTimeUnixNano, spans ? "endTimeUnixNano" : "observedTimeUnixNano");
  } catch (error) {
    return (error as Error).message;
  }
  const sequence = record.attributes["event.sequence"];
  if (sequence === undefined || sequence === null) return undefined;
  const n = typeof sequence === "number"
    ? sequence
    : typeof sequence === "string" && isDecimal(sequence)
    ? Number(sequence)
    : NaN;
  return Number.isSafeInteger(n) && n >= 0
    ? undefined
    : `event.sequence out of range: ${preview(sequence)} (an integer 0 to 2^53-1 accepted)`;
}

const TEXT_LIMIT_ENTRIES = Object.entries(TEXT_LIMITS) as [string, TextLimit][];
const NUMBER_LIMIT_ENTRIES = Object.entries(NUMBER_LIMITS) as [string, NumberLimit][];

/** Why one of the event's numbers is out of range, if one is. */
function numberReason(event: TelemetryEvent): string | undefined {
  const fields = event as unknown as Record<string, unknown>;
  for (const [name, limit] of NUMBER_LIMIT_ENTRIES) {
    const value = fields[name];
    if (value === undefined || value === null) continue;
    if (
      typeof value !== "number" || !(value >= limit.min && value <= limit.max) ||
      (limit.integer && !Number.isInteger(value))
    ) {
      return `${limit.label} out of range: ${preview(value)} (${limit.min} to ${
        limit.max === MAX_INTEGER ? "2^53-1" : limit.max
      }${limit.integer ? ", whole" : ""} accepted)`;
    }
  }
  return undefined;
}

/**
 * Holds the event's texts to their caps: returns why an identifier or key
 * over its cap rejects it, else truncates the longer texts in place.
 */
function capTexts(event: TelemetryEvent): string | undefined {
  const fields = event as unknown as Record<string, unknown>;
  for (const [name, limit] of TEXT_LIMIT_ENTRIES) {
    const value = fields[name];
    // Three UTF-8 bytes at most per UTF-16 unit: most texts need no count.
    if (typeof value !== "string" || value.length * 3 <= limit.bytes) continue;
    const bytes = utf8Bytes(value);
    if (bytes <= limit.bytes) continue;
    if (limit.over === "reject") {
      return `${limit.label} too long: ${bytes} bytes (at most ${limit.bytes} accepted)`;
    }
    fields[name] = limit.over === "json"
      ? truncateJson(value, limit.bytes)
      : truncateText(value, bytes, limit.bytes);
  }
  return undefined;
}

/** The marker ending a truncated text; `bytes` is the whole text's size. */
export function truncationMarker(bytes: number): string {
  return `…[truncated: ${bytes} bytes]`;
}

/**
 * `text` (of `bytes` UTF-8 bytes) cut at a character boundary so that with
 * its marker it takes at most `cap` bytes.
 */
export function truncateText(text: string, bytes: number, cap: number): string {
  const marker = truncationMarker(bytes);
  return cutBeforeToken(text, Math.max(0, cap - utf8Bytes(marker))) + marker;
}

/** Characters a token (a key, a secret, a base64 run) is made of. */
const TOKEN_CHAR = /[A-Za-z0-9_\-+/=.~]/;
/** How far back a cut looks for the start of the token it would split. */
const TOKEN_BACKOFF = 512;

/**
 * The longest prefix of `s` within `max` bytes that does not end inside a
 * token: detection runs on the stored (capped) text, so half a secret left at
 * a cut would be stored unrecognised. A cut inside a token backs off to the
 * token's start, or drops the last {@link TOKEN_BACKOFF} characters when no
 * start is that close.
 */
export function cutBeforeToken(s: string, max: number): string {
  const prefix = utf8Prefix(s, max);
  if (prefix.length === s.length || prefix.length === 0) return prefix;
  if (!TOKEN_CHAR.test(s[prefix.length]!) || !TOKEN_CHAR.test(prefix[prefix.length - 1]!)) {
    return prefix;
  }
  const floor = Math.max(0, prefix.length - TOKEN_BACKOFF);
  for (let i = prefix.length - 1; i >= floor; i--) {
    if (!TOKEN_CHAR.test(prefix[i]!)) return prefix.slice(0, i + 1);
  }
  return prefix.slice(0, floor);
}

/**
 * JSON text of at most `cap` bytes for JSON `text` over it: the same value
 * with its long strings truncated (each keeping as much as the cap allows),
 * so that an object of arguments keeps its keys and short values. Text that
 * does not parse, a bare string, or keys and numbers alone over the cap
 * become a JSON string of the text truncated.
 */
export function truncateJson(text: string, cap: number): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return jsonString(text, cap);
  }
  if (value === null || typeof value !== "object") return jsonString(text, cap);
  try {
    // The widest per-string budget that fits, by bisection on the longest string.
    let lo = 0;
    let hi = longestString(value);
    let best: string | undefined;
    while (lo <= hi) {
      const mid = Math.floor((lo + hi) / 2);
      const candidate = JSON.stringify(shortenStrings(value, mid));
      if (utf8Bytes(candidate) <= cap) {
        best = candidate;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return best ?? jsonString(text, cap);
  } catch {
    // Nested too deep to walk: keep it as text.
    return jsonString(text, cap);
  }
}

/** A JSON string of at most `cap` bytes holding the start of `text` and the marker. */
function jsonString(text: string, cap: number): string {
  const marker = truncationMarker(utf8Bytes(text));
  let budget = cap - utf8Bytes(marker) - 2;
  while (budget > 0) {
    const encoded = JSON.stringify(cutBeforeToken(text, budget) + marker);
    const size = utf8Bytes(encoded);
    if (size <= cap) return encoded;
    // Escapes grew it: give up the excess and try again.
    budget -= size - cap;
  }
  return JSON.stringify(marker);
}

/** Byte length of the longest string (value or key) in a JSON value. */
function longestString(value: unknown): number {
  if (typeof value === "string") return utf8Bytes(value);
  if (value === null || typeof value !== "object") return 0;
  let longest = 0;
  if (Array.isArray(value)) {
    for (const item of value) longest = Math.max(longest, longestString(item));
  } else {
    for (const [k, item] of Object.entries(value)) {
      longest = Math.max(longest, utf8Bytes(k), longestString(item));
    }
  }
  return longest;
}

/** A copy of a JSON value with each string value over `budget` bytes truncated. */
function shortenStrings(value: unknown, budget: number): unknown {
  if (typeof value === "string") {
    if (value.length * 3 <= budget) return value;
    const bytes = utf8Bytes(value);
    return bytes <= budget ? value : truncateText(value, bytes, budget);
  }
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => shortenStrings(item, budget));
  const out: Record<string, unknown> = {};
  for (const [k, item] of Object.entries(value)) {
    Object.defineProperty(out, k, {
      value: shortenStrings(item, budget),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

function isDecimal(s: string): boolean {
  if (s.length === 0 || s.length > 16) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** A value for a reason: at most 40 characters of it. */
function preview(value: unknown): string {
  const text = typeof value === "string" ? JSON.stringify(value) : String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
