/**
 * Detection cost per tool call on the bench mix (`scripts/bench.ts`'s
 * detection phase: gen.ts tool calls, redaction on), as a distribution:
 *
 *   deno run --allow-all scripts/_detect_bench.ts [--ms 3000] [--detect <mod.ts>]
 *
 * Prints the mean per call twice: by the wall clock (what the bench reports)
 * and by the process's CPU time, which counts garbage collection on every
 * thread but not the time other processes hold the cores (on a shared
 * machine the wall-clock mean can be several times the CPU mean). Then the
 * p50, p90 and p99 of the per-call time, each call's best of its rounds.
 * `--detect` measures another copy of `src/detect/mod.ts` on the same calls
 * (an older commit's, exported with `git archive`), for before/after figures.
 *
 * @module
 */

// deno-lint-ignore-file no-console

import process from "node:process";
import type { DetectInput, detectToolCall as DetectToolCall } from "../src/detect/mod.ts";
import { mapRecord } from "../src/ingest/agents/mod.ts";
import { decodeExport } from "../src/ingest/otlp/mod.ts";
import type { ToolCallEvent } from "../src/model/telemetry.ts";
import { encodeJson, generateExports } from "../src/demo/mod.ts";

const option = (name: string) => {
  const at = Deno.args.indexOf(name);
  return at < 0 ? undefined : Deno.args[at + 1];
};
const budgetMs = Number(option("--ms") ?? 3000);
const modulePath = option("--detect");
const { detectToolCall } = await import(
  modulePath === undefined
    ? "../src/detect/mod.ts"
    : new URL(modulePath, `file://${Deno.cwd()}/`).href
) as { detectToolCall: typeof DetectToolCall };

const inputs: DetectInput[] = [];
for (
  const batch of generateExports({
    actors: 2,
    days: 30,
    seed: 11,
    now: new Date(),
    batchRecords: 512,
  })
) {
  const { records } = decodeExport(encodeJson(batch.body), {
    encoding: "json",
    pathSignal: "logs",
  });
  for (const record of records) {
    const mapped = mapRecord(record);
    if (mapped.status !== "mapped") continue;
    for (const event of mapped.events) {
      if (event.kind !== "tool_call") continue;
      const e = event as ToolCallEvent;
      inputs.push({
        toolName: e.toolName,
        toolType: e.toolType,
        category: e.category,
        ...(e.arguments === undefined ? {} : { arguments: e.arguments }),
        ...(e.result === undefined ? {} : { result: e.result }),
      });
    }
  }
}
for (let i = 0; i < 3; i++) for (const input of inputs) detectToolCall(input, { redact: true });
// Per call: the least of its timed rounds (timer resolution is coarse, so each
// call is timed over a batch of 5 repetitions).
const best = new Float64Array(inputs.length).fill(Infinity);
const cpuStart = process.cpuUsage();
const started = performance.now();
let calls = 0;
while (performance.now() - started < budgetMs) {
  inputs.forEach((input, index) => {
    const t0 = performance.now();
    for (let r = 0; r < 5; r++) detectToolCall(input, { redact: true });
    const each = (performance.now() - t0) / 5;
    if (each < best[index]!) best[index] = each;
  });
  calls += inputs.length * 5;
}
const elapsed = performance.now() - started;
const cpu = process.cpuUsage(cpuStart);
const sorted = [...best].sort((a, b) => a - b);
const at = (q: number) =>
  (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 1000).toFixed(2);
console.log(
  `${inputs.length} calls: mean ${((elapsed * 1000) / calls).toFixed(2)} µs wall clock, ${
    ((cpu.user + cpu.system) / calls).toFixed(2)
  } µs CPU; per call p50 ${at(0.5)} µs, p90 ${at(0.9)} µs, p99 ${at(0.99)} µs`,
);
