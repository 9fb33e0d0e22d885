/**
 * The benchmark's metrics ingest phase (issue #18): OTLP metrics exports as
 * the agents send them — Claude Code's delta sums (one point per series and
 * interval, start at the previous interval's end) and Gemini CLI's
 * cumulative sums (one start per series, growing totals) — posted to the
 * server's `POST /v1/metrics`, JSON and protobuf alternating chunk by chunk.
 * Each chunk's bodies are built with the clock stopped, then sent with a
 * few requests in flight: the rate is the server's.
 *
 * @module
 */
import { metricsJsonToProtobuf } from "../tests/_metrics_otlp.ts";
import { type BenchServer, procCpuMs } from "./_bench_server.ts";

export type MetricsEncoding = "json" | "protobuf";

/** One metrics export request. */
export interface MetricsBody {
  actor: number;
  encoding: MetricsEncoding;
  bytes: Uint8Array;
  points: number;
}

/** Figures of one encoding. */
export interface MetricsStats {
  points: number;
  requests: number;
  bytes: number;
  /** Wall ms while sending. */
  ms: number;
  serverCpuMs: number;
  clientCpuMs: number;
}

/** What the phase measured. */
export interface MetricsResult {
  json: MetricsStats;
  protobuf: MetricsStats;
  /** Client ms building and encoding the bodies (clock stopped). */
  buildMs: number;
}

type Json = Record<string, unknown>;

const INTERVAL_MS = 60_000;
const MODELS = ["claude-sonnet-4-5", "claude-haiku-4-5"];
const LANGUAGES = ["TypeScript", "Python", "Markdown"];

const text = (key: string, value: string) => ({ key, value: { stringValue: value } });

function sum(name: string, temporality: 1 | 2, dataPoints: Json[]): Json {
  return {
    name,
    unit: "",
    sum: { aggregationTemporality: temporality, isMonotonic: true, dataPoints },
  };
}

/** A session's id, uuid-shaped, from the run's seed, the actor and the session. */
function sessionId(seed: number, actor: number, session: number): string {
  const hex = (n: number, width: number) => (n >>> 0).toString(16).padStart(width, "0");
  return `${hex(seed, 8)}-${hex(actor, 4)}-4${hex(session, 3)}-8000-${
    hex(actor * 7919 + session, 12)
  }`;
}

const ns = (ms: number) => `${BigInt(ms) * 1_000_000n}`;

/**
 * One Claude Code session's export for interval `round`: delta sums of
 * sessions (first interval), lines, cost, tokens, edit decisions and
 * active time; `session.id` and `user.id` on every point.
 */
function claudeResource(
  seed: number,
  actor: number,
  session: number,
  round: number,
  startMs: number,
) {
  const from = startMs + round * INTERVAL_MS;
  const to = from + INTERVAL_MS;
  const id = sessionId(seed, actor, session);
  const model = MODELS[(actor + session) % MODELS.length]!;
  const point = (value: number, attributes: Json[] = []) => ({
    attributes: [text("user.id", `u${actor}`), text("session.id", id), ...attributes],
    startTimeUnixNano: ns(from),
    timeUnixNano: ns(to),
    asDouble: value,
  });
  const k = 1 + ((round + session) % 5);
  const metrics = [
    ...(round === 0
      ? [sum("claude_code.session.count", 1, [point(1, [text("start_type", "fresh")])])]
      : []),
    sum("claude_code.lines_of_code.count", 1, [
      point(12 * k, [text("type", "added"), text("model", model)]),
      point(3 * k, [text("type", "removed"), text("model", model)]),
    ]),
    sum("claude_code.cost.usage", 1, [point(0.013 * k, [text("model", model)])]),
    sum(
      "claude_code.token.usage",
      1,
      ["input", "output", "cacheRead", "cacheCreation"].map((type, i) =>
        point(1000 * k * (i + 1), [text("type", type), text("model", model)])
      ),
    ),
    sum("claude_code.code_edit_tool.decision", 1, [
      point(k, [
        text("tool_name", "Edit"),
        text("decision", "accept"),
        text("language", LANGUAGES[session % LANGUAGES.length]!),
      ]),
      point(1, [
        text("tool_name", "Write"),
        text("decision", "reject"),
        text("language", "Python"),
      ]),
    ]),
    sum("claude_code.active_time.total", 1, [
      point(20 * k, [text("type", "user")]),
      point(35 * k, [text("type", "cli")]),
    ]),
  ];
  return {
    resource: {
      attributes: [text("service.name", "claude-code"), text("service.version", "2.1.330")],
    },
    scopeMetrics: [{ scope: { name: "com.anthropic.claude_code", version: "2.1.330" }, metrics }],
  };
}

/**
 * One Gemini CLI session's export at the end of interval `round`: cumulative
 * sums from the session's start (the totals grow each interval).
 */
function geminiResource(
  seed: number,
  actor: number,
  session: number,
  round: number,
  startMs: number,
) {
  const id = sessionId(seed, actor, session);
  const n = round + 1;
  const point = (value: number, attributes: Json[] = []) => ({
    attributes: [text("session.id", id), text("installation.id", `i${actor}`), ...attributes],
    startTimeUnixNano: ns(startMs),
    timeUnixNano: ns(startMs + n * INTERVAL_MS),
    asInt: value,
  });
  const metrics = [
    sum("gemini_cli.session.count", 2, [point(1)]),
    sum("gemini_cli.lines.changed", 2, [
      point(9 * n, [text("type", "added"), text("function_name", "replace")]),
      point(2 * n, [text("type", "removed"), text("function_name", "replace")]),
    ]),
    sum("gemini_cli.file.operation.count", 2, [
      point(2 * n, [text("operation", "update"), text("programming_language", "TypeScript")]),
      point(n, [text("operation", "read"), text("programming_language", "Python")]),
    ]),
    sum("gemini_cli.tool.call.count", 2, [
      point(3 * n, [text("function_name", "run_shell_command"), text("decision", "accept")]),
      point(n, [text("function_name", "replace"), text("decision", "accept")]),
    ]),
    sum(
      "gemini_cli.token.usage",
      2,
      ["input", "output", "cache", "thought"].map((type, i) =>
        point(2000 * n * (i + 1), [text("model", "gemini-2.5-pro"), text("type", type)])
      ),
    ),
    sum("gemini_cli.api.request.count", 2, [point(4 * n, [text("model", "gemini-2.5-pro")])]),
  ];
  return {
    resource: {
      attributes: [
        text("service.name", "gemini-cli"),
        text("service.version", "v20.20.2"),
        text("session.id", id),
      ],
    },
    scopeMetrics: [{ scope: { name: "gemini-cli", version: "" }, metrics }],
  };
}

function pointsOf(resources: Json[]): number {
  let points = 0;
  for (const resource of resources) {
    for (
      const scope of resource.scopeMetrics as { metrics: { sum: { dataPoints: unknown[] } }[] }[]
    ) {
      for (const metric of scope.metrics) points += metric.sum.dataPoints.length;
    }
  }
  return points;
}

/**
 * Export requests round by round: each actor in turn sends one request with
 * `sessionsPerRequest` sessions' points for that interval (even actors are
 * Claude Code, odd ones Gemini CLI), as a collector forwarding a team's
 * agents would. Intervals start a day before `now`.
 */
export function* metricsExports(options: {
  actors: number;
  sessionsPerRequest: number;
  seed: number;
  now: Date;
}): Generator<Omit<MetricsBody, "encoding" | "bytes"> & { body: Json }> {
  const startMs = Math.floor(options.now.getTime() / INTERVAL_MS) * INTERVAL_MS - 86_400_000;
  const rounds = 86_400_000 / INTERVAL_MS - 1;
  for (let round = 0; round < rounds; round++) {
    for (let actor = 0; actor < options.actors; actor++) {
      const build = actor % 2 === 0 ? claudeResource : geminiResource;
      const resourceMetrics = Array.from(
        { length: options.sessionsPerRequest },
        (_, session) => build(options.seed, actor, session, round, startMs),
      );
      yield { actor, points: pointsOf(resourceMetrics), body: { resourceMetrics } };
    }
  }
}

/**
 * Sends chunks of `chunkRequests` requests, JSON and protobuf alternating,
 * until `budgetMs` of sending has passed (at least one chunk of each).
 */
export async function metricsIngest(options: {
  server: BenchServer;
  ingestKeys: readonly string[];
  seed: number;
  now: Date;
  sessionsPerRequest: number;
  chunkRequests: number;
  concurrency: number;
  budgetMs: number;
  /** Cumulative CPU ms of the server and its store's processes. */
  serverCpuMs: () => Promise<number>;
}): Promise<MetricsResult> {
  const empty = (): MetricsStats => ({
    points: 0,
    requests: 0,
    bytes: 0,
    ms: 0,
    serverCpuMs: 0,
    clientCpuMs: 0,
  });
  const result: MetricsResult = { json: empty(), protobuf: empty(), buildMs: 0 };
  const exports = metricsExports({
    actors: options.ingestKeys.length,
    sessionsPerRequest: options.sessionsPerRequest,
    seed: options.seed,
    now: options.now,
  });
  for (let chunk = 0;; chunk++) {
    const encoding: MetricsEncoding = chunk % 2 === 0 ? "json" : "protobuf";
    // Whole pairs of chunks, so both encodings get the same share.
    if (chunk % 2 === 0 && chunk >= 2 && result.json.ms + result.protobuf.ms >= options.budgetMs) {
      break;
    }
    const built = performance.now();
    const bodies: MetricsBody[] = [];
    for (let i = 0; i < options.chunkRequests; i++) {
      const next = exports.next();
      if (next.done) break;
      const { body, ...rest } = next.value;
      const bytes = encoding === "json"
        ? new TextEncoder().encode(JSON.stringify(body))
        : metricsJsonToProtobuf(body);
      bodies.push({ ...rest, encoding, bytes });
    }
    result.buildMs += performance.now() - built;
    if (bodies.length === 0) break;
    options.server.assertAlive();
    const stats = result[encoding];
    const serverCpu = await options.serverCpuMs();
    const clientCpu = await procCpuMs("self");
    const started = performance.now();
    await send(options.server.ingestUrl, options.ingestKeys, bodies, options.concurrency);
    stats.ms += performance.now() - started;
    stats.serverCpuMs += await options.serverCpuMs() - serverCpu;
    stats.clientCpuMs += await procCpuMs("self") - clientCpu;
    stats.requests += bodies.length;
    for (const body of bodies) {
      stats.points += body.points;
      stats.bytes += body.bytes.length;
    }
  }
  return result;
}

async function send(
  ingestUrl: string,
  ingestKeys: readonly string[],
  bodies: readonly MetricsBody[],
  concurrency: number,
): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < bodies.length) {
      const body = bodies[next++]!;
      const response = await fetch(`${ingestUrl}/v1/metrics`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${ingestKeys[body.actor]}`,
          "content-type": body.encoding === "json" ? "application/json" : "application/x-protobuf",
        },
        body: body.bytes as Uint8Array<ArrayBuffer>,
      });
      const answer = new Uint8Array(await response.arrayBuffer());
      const partial = body.encoding === "json"
        ? new TextDecoder().decode(answer).trim() !== "{}"
        : answer.length > 0;
      if (response.status !== 200 || partial) {
        failed = true;
        throw new Error(
          `POST /v1/metrics (${body.encoding}): ${response.status} ${
            new TextDecoder().decode(answer).slice(0, 300)
          }`,
        );
      }
    }
  };
  // allSettled first: no request may be left running (or rejecting unhandled) on error.
  const outcomes = await Promise.allSettled(Array.from({ length: concurrency }, worker));
  const rejected = outcomes.find((o): o is PromiseRejectedResult => o.status === "rejected");
  if (rejected) throw rejected.reason;
}
