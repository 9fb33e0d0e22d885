/**
 * Waiting for a run's telemetry to settle: the client has exited and its
 * exports were acknowledged, but the DuckDB replica behind the insights
 * catches up on its own schedule. The comparison is repeated until it is
 * empty or the time is up; the last differences are the answer.
 *
 * @module
 */
import { compareRun } from "./_check.ts";
import type { ExpectedRun } from "./_scenario.ts";

/** How long a run's view may take to settle before its differences count. */
export const SETTLE_MS = 20_000;

/**
 * Compares the served view with `expected` until they match or `timeoutMs`
 * passes; returns the differences of the last comparison (empty when they match).
 */
export async function settledDifferences(
  queryUrl: string,
  apiKey: string,
  expected: ExpectedRun,
  timeoutMs = SETTLE_MS,
): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const problems = await compareRun(queryUrl, apiKey, expected);
    if (problems.length === 0 || Date.now() >= deadline) return problems;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
