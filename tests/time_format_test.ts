import assert from "node:assert/strict";
import { formatTimestamp } from "../src/time.ts";

// Catches: a wrong pad (9 ms as ".9Z"), the day prefix kept across days, an hour off at midnight,
// a leap day, the last millisecond of 9999; anything outside the stored range as toISOString.
Deno.test("formatTimestamp writes what toISOString writes, on every edge and across days", () => {
  const edges = [
    0,
    1,
    9,
    10,
    99,
    100,
    999,
    1000,
    59_999,
    60_000,
    3_599_999,
    3_600_000,
    86_399_999,
    86_400_000,
    Date.UTC(2024, 1, 29, 23, 59, 59, 999),
    Date.UTC(2024, 2, 1, 0, 0, 0, 0),
    Date.UTC(2026, 10, 27, 9, 5, 7, 42),
    253_402_300_799_999,
    253_402_300_800_000,
    -1,
    1.5,
  ];
  for (const ms of edges) assert.equal(formatTimestamp(ms), new Date(ms).toISOString(), `${ms}`);
  // Alternating days and random times: the cached day must follow each call.
  let seed = 12345;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 20_000; i++) {
    const ms = Math.floor(random() * 253_402_300_800_000);
    assert.equal(formatTimestamp(ms), new Date(ms).toISOString(), `${ms}`);
    const next = ms + (i % 2 === 0 ? 86_400_000 : 1);
    assert.equal(formatTimestamp(next), new Date(next).toISOString(), `${next}`);
  }
});
