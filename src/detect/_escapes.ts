/**
 * JSON string escapes decoded for secret scanning. A secret can reach us
 * written as `\u0041\u004b\u0049\u0041…` (`AKIA…`) or with `\/` in a URL: in a
 * text that is not JSON (a result, an error message), in JSON encoded twice
 * (a JSON string holding JSON), or in JSON that does not parse (a truncated
 * output). A view decodes those escapes and remembers where each of its
 * characters came from, so a secret found in the view is redacted in the
 * text as it was written, escapes included.
 *
 * @module
 */

/** A text with its JSON string escapes decoded, mapped back to the text. */
export interface EscapeView {
  /** The decoded text. */
  text: string;
  /**
   * Offset in the source text of each character of `text`, plus one entry
   * for the end: a span `[start, end)` of the view is `[origin[start],
   * origin[end])` of the source, whole escapes included.
   */
  origin: Int32Array;
}

/** One JSON string escape. */
const ESCAPE = /\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))/g;
/**
 * Escapes that can hide a secret from the rules (`\u0041KIA`, `:\/\/`,
 * `pass\u0077ord`). The others only move where a value ends (`\n`, `\t`:
 * the rules stop there or redaction takes a little more) or are matched by
 * the rules themselves (`\"` around a quoted value), so a text with only
 * those is read as it is.
 */
const HIDING_ESCAPE = /\\(?:u[0-9a-fA-F]{4}|\/)/;
/**
 * How many times a string may have been JSON-encoded and still be decoded:
 * a JSON string holding JSON holding an escaped secret is three.
 */
export const MAX_ESCAPE_DEPTH = 3;

/** What each single-character escape stands for. */
const SIMPLE: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

/** True when the text holds an escape that can hide a secret from the rules. */
export function hasHidingEscape(text: string): boolean {
  return text.includes("\\") && HIDING_ESCAPE.test(text);
}

/** The text with one level of JSON string escapes decoded; undefined when it has none. */
export function unescapeOnce(text: string): EscapeView | undefined {
  if (!text.includes("\\")) return undefined;
  ESCAPE.lastIndex = 0;
  let match = ESCAPE.exec(text);
  if (match === null) return undefined;
  const parts: string[] = [];
  const origin = new Int32Array(text.length + 1);
  let length = 0;
  let at = 0;
  for (; match !== null; match = ESCAPE.exec(text)) {
    for (let i = at; i < match.index; i++) origin[length++] = i;
    parts.push(text.slice(at, match.index));
    parts.push(
      match[1] !== undefined ? String.fromCharCode(parseInt(match[1], 16)) : SIMPLE[match[2]!]!,
    );
    origin[length++] = match.index;
    at = match.index + match[0].length;
  }
  for (let i = at; i < text.length; i++) origin[length++] = i;
  parts.push(text.slice(at));
  origin[length] = text.length;
  return { text: parts.join(""), origin: origin.subarray(0, length + 1) };
}

/**
 * The text decoded once, twice, … (at most `depth` times, while escapes that
 * can hide a secret remain), each view mapped back to the original text.
 */
export function escapeViews(text: string, depth = MAX_ESCAPE_DEPTH): EscapeView[] {
  const views: EscapeView[] = [];
  let current = unescapeOnce(text);
  while (current !== undefined) {
    views.push(current);
    if (views.length >= depth || !hasHidingEscape(current.text)) break;
    const next = unescapeOnce(current.text);
    if (next === undefined) break;
    const origin = new Int32Array(next.origin.length);
    for (let i = 0; i < origin.length; i++) origin[i] = current.origin[next.origin[i]!]!;
    current = { text: next.text, origin };
  }
  return views;
}
