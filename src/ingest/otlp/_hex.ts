/** Two lower-case hex digits for every byte value. */
const HEX_PAIRS: readonly string[] = Array.from(
  { length: 256 },
  (_, byte) => byte.toString(16).padStart(2, "0"),
);

/** Lower-case hex of `bytes[start, end)`. */
export function hexOf(bytes: Uint8Array, start = 0, end = bytes.length): string {
  let hex = "";
  for (let i = start; i < end; i++) hex += HEX_PAIRS[bytes[i]!];
  return hex;
}

/** Lower-case hex of a trace or span id in `bytes[start, end)`; `""` when empty or all zero. */
export function idHexOf(bytes: Uint8Array, start: number, end: number): string {
  let any = 0;
  let hex = "";
  for (let i = start; i < end; i++) {
    const byte = bytes[i]!;
    any |= byte;
    hex += HEX_PAIRS[byte];
  }
  return any === 0 ? "" : hex;
}
