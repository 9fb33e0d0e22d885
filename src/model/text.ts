/**
 * Text sizes in UTF-8 bytes, as ingest bounds them and the store caps the
 * names it keeps (docs/ingest-mapping.md).
 *
 * @module
 */

/** Names and short labels: agent, tool, model, provider, version, decision, OS, … */
export const NAME_MAX_BYTES = 256;

/** UTF-8 byte length of a string (a lone surrogate counts 3, as TextEncoder writes U+FFFD). */
export function utf8Bytes(s: string): number {
  let bytes = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff && isLowSurrogate(s.charCodeAt(i + 1))) {
      bytes += 2;
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/** The longest prefix of `s` that takes at most `max` UTF-8 bytes, never splitting a pair. */
export function utf8Prefix(s: string, max: number): string {
  let bytes = 0;
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && isLowSurrogate(s.charCodeAt(i + 1));
    const size = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
    if (bytes + size > max) break;
    bytes += size;
    i += pair ? 2 : 1;
  }
  return s.slice(0, i);
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}
