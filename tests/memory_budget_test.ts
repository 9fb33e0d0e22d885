/**
 * The server's cache sizes follow the machine's memory (issue #16): capped on
 * large machines so the peak stays near 512 MiB however large the store, a
 * quarter of the memory on small ones, with floors that keep a tiny machine
 * working.
 */
import assert from "node:assert/strict";
import { memoryBudget } from "../src/memory_budget.ts";

const GiB = 2 ** 30;

Deno.test("memoryBudget caps the caches on a large machine", () => {
  assert.deepEqual(memoryBudget(23.5 * GiB), {
    serverMiB: 512,
    duckdbMiB: 128,
    writerCacheMiB: 64,
    readerCacheMiB: 16,
  });
});

Deno.test("memoryBudget gives a small machine a quarter of its memory", () => {
  assert.deepEqual(memoryBudget(1 * GiB), {
    serverMiB: 256,
    duckdbMiB: 64,
    writerCacheMiB: 32,
    readerCacheMiB: 8,
  });
});

Deno.test("memoryBudget keeps floors on a tiny machine", () => {
  assert.deepEqual(memoryBudget(256 * 2 ** 20), {
    serverMiB: 64,
    duckdbMiB: 32,
    writerCacheMiB: 8,
    readerCacheMiB: 4,
  });
});
