/**
 * The retention phase's load: steady ingest from a few connections while a
 * server started with `--retention-days` runs its first retention pass (10 s
 * after start), until the pass's log line appears. What an operator feels is
 * ingest's latency meanwhile: the pass shares SQLite's one writer.
 *
 * @module
 */
import { type MixedRequests, sendExport } from "./_bench_mixed.ts";

/** The server's log line at the end of a pass that deleted something. */
export interface RetentionPassLine {
  /** When the pass ended (ISO 8601). */
  time: string;
  deletedToolCalls: number;
  deletedModelCalls: number;
  reclaimedBytes: number;
  durationMs: number;
}

/** What the phase measured. */
export interface RetentionRun {
  pass: RetentionPassLine;
  /** Ingest requests answered 2xx during the pass: their latency (ms). */
  duringPass: number[];
  /** Those answered 2xx before the pass began and in the second after it ended. */
  outsidePass: number[];
  /** Tool calls those requests carried. */
  items: number;
  /** Requests that failed, by status or network error. */
  errors: Record<string, number>;
}

/** Finds the first "retention pass" line in a JSON-lines log, if any. */
export async function retentionPassIn(logPath: string): Promise<RetentionPassLine | null> {
  const text = await Deno.readTextFile(logPath).catch(() => "");
  for (const line of text.split("\n")) {
    if (!line.includes('"retention pass"')) continue;
    const entry = JSON.parse(line) as Record<string, unknown>;
    if (typeof entry.duration_ms !== "number") continue;
    return {
      time: String(entry.time),
      deletedToolCalls: Number(entry.deleted_tool_calls),
      deletedModelCalls: Number(entry.deleted_model_calls),
      reclaimedBytes: Number(entry.reclaimed_bytes),
      durationMs: entry.duration_ms,
    };
  }
  return null;
}

/** Sends ingest from `concurrency` connections until the pass's line is logged (or `timeoutMs`). */
export async function ingestDuringRetention(options: {
  ingestUrl: string;
  logPath: string;
  ingest: MixedRequests["ingest"];
  concurrency: number;
  timeoutMs: number;
}): Promise<RetentionRun> {
  const answered: { end: number; ms: number }[] = [];
  const errors: Record<string, number> = {};
  let items = 0;
  let pass: RetentionPassLine | null = null;
  let stopAt = Infinity;
  const deadline = performance.now() + options.timeoutMs;
  const watcher = (async () => {
    while (pass === null && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      pass = await retentionPassIn(options.logPath);
    }
    stopAt = performance.now() + 1_000;
  })();
  const clients = Array.from(
    { length: options.concurrency },
    () => Deno.createHttpClient({ poolMaxIdlePerHost: 1 }),
  );
  try {
    await Promise.all(clients.map(async (client) => {
      while (performance.now() < Math.min(stopAt, deadline)) {
        const post = options.ingest(Math.random);
        const t0 = performance.now();
        try {
          const response = await sendExport(options.ingestUrl, post, client);
          await response.arrayBuffer();
          if (response.ok) {
            answered.push({ end: Date.now(), ms: performance.now() - t0 });
            items += post.items;
          } else {
            errors[String(response.status)] = (errors[String(response.status)] ?? 0) + 1;
          }
        } catch (error) {
          const cause = `network: ${error instanceof Error ? error.message.slice(0, 80) : error}`;
          errors[cause] = (errors[cause] ?? 0) + 1;
        }
      }
    }));
    await watcher;
  } finally {
    for (const client of clients) client.close();
  }
  if (pass === null) {
    throw new Error(`No retention pass was logged within ${options.timeoutMs} ms`);
  }
  const found: RetentionPassLine = pass;
  const end = Date.parse(found.time);
  const begin = end - found.durationMs;
  // A request overlapping the pass at all counts as during it.
  const during = (a: { end: number; ms: number }) => a.end >= begin && a.end - a.ms <= end;
  return {
    pass: found,
    duringPass: answered.filter(during).map((a) => a.ms),
    outsidePass: answered.filter((a) => !during(a)).map((a) => a.ms),
    items,
    errors,
  };
}
