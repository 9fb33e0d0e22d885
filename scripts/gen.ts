/**
 * Prints a summary of the synthetic telemetry `src/demo/mod.ts` generates:
 * `deno run scripts/gen.ts --actors 3 --days 2 [--seed N] [--sessions N] [--batch N] [--now T] [--encode]`.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { encodeJson, generateExports, type GenOptions } from "../src/demo/mod.ts";

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      actors: { type: "string", default: "3" },
      days: { type: "string", default: "2" },
      seed: { type: "string", default: "1" },
      sessions: { type: "string", default: "3" },
      batch: { type: "string", default: "200" },
      now: { type: "string" },
      encode: { type: "boolean", default: false },
    },
  });
  const options: GenOptions = {
    actors: Number(values.actors),
    days: Number(values.days),
    seed: Number(values.seed),
    sessionsPerActorPerDay: Number(values.sessions),
    batchRecords: Number(values.batch),
    now: values.now === undefined ? new Date() : new Date(values.now),
  };
  let exports = 0;
  let records = 0;
  let toolCalls = 0;
  let bytes = 0;
  const started = performance.now();
  for (const e of generateExports(options)) {
    exports++;
    records += e.records;
    toolCalls += e.toolCalls;
    if (values.encode) bytes += encodeJson(e.body).length;
  }
  const seconds = (performance.now() - started) / 1000;
  const summary = {
    exports,
    records,
    "tool_calls": toolCalls,
    ...(values.encode ? { bytes } : {}),
    seconds: Number(seconds.toFixed(3)),
    "records_per_second": Math.round(records / seconds),
  };
  // deno-lint-ignore no-console
  console.log(JSON.stringify(summary));
}
