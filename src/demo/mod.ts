/**
 * Synthetic coding-agent telemetry: realistic OTLP/JSON log exports from
 * Claude Code, Codex CLI and Gemini CLI sessions of N actors over the last D
 * days, deterministic for a seed. Used by `demo`, the benchmark and tests;
 * `scripts/gen.ts` runs it as a command.
 *
 * @module
 */

import {
  claudeTools,
  codexOutput,
  codexTools,
  cumulativeWeights,
  geminiTools,
} from "./_tool_catalog.ts";
import type { ToolSpec } from "./_tool_catalog.ts";

/** What to generate. */
export interface GenOptions {
  actors: number;
  days: number;
  seed: number;
  /** Every record's time is before this. */
  now: Date;
  /** Mean sessions each actor starts per day (default 3). */
  sessionsPerActorPerDay?: number;
  /** Most log records in one export (default 200). */
  batchRecords?: number;
  /**
   * How the actors' exports follow one another (default `actor`): `actor`,
   * every actor's whole history in turn (a backfill); `time`, all actors'
   * exports merged by the time of their first record, as a live fleet sends
   * them (each store index keyed by time then grows at its newest end).
   */
  order?: "actor" | "time";
}

/** One export request's body, as one actor's exporter would send it. */
export interface GeneratedExport {
  /** 0-based actor index. */
  actor: number;
  /** An OTLP/JSON `ExportLogsServiceRequest` object. */
  body: unknown;
  /** Tool calls completed in this export: results, and rejections that have no result. */
  toolCalls: number;
  /** Log records in this export. */
  records: number;
  /** Time of its first record, in ms since the epoch. */
  startMs: number;
}

/** OTLP/JSON bytes of an export body. */
export function encodeJson(body: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(body));
}

const encoder = new TextEncoder();

/**
 * Exports of every actor, in the options' `order`, each actor's sessions in
 * time order, each export holding up to `batchRecords` records (one
 * `resourceLogs` per session it touches). The same options give the same
 * exports.
 */
export function* generateExports(options: GenOptions): Generator<GeneratedExport> {
  if (options.order === "time") {
    yield* exportsInTimeOrder(options);
    return;
  }
  for (let actor = 0; actor < options.actors; actor++) yield* actorExports(options, actor);
}

/** One actor's day of Claude Code metrics, as its exporter would send them. */
export interface GeneratedMetricExport {
  /** 0-based actor index. */
  actor: number;
  /** An OTLP/JSON `ExportMetricsServiceRequest` object. */
  body: unknown;
}

/**
 * Claude Code's productivity metrics of every actor, one delta export per
 * actor and day: commits, pull requests, active time (user and CLI) and edit
 * decisions, the figures the logs do not carry (lines come from the logs'
 * file-writing calls). Points name no session, as Codex's do. Deterministic
 * for a seed.
 */
export function generateMetricExports(
  options: Pick<GenOptions, "actors" | "days" | "seed" | "now">,
): GeneratedMetricExport[] {
  const out: GeneratedMetricExport[] = [];
  const nowMs = options.now.getTime();
  const firstDay = Math.floor(nowMs / DAY) * DAY - (options.days - 1) * DAY;
  for (let actor = 0; actor < options.actors; actor++) {
    const rng = new Rng(options.seed, 1_000 + actor);
    for (let day = 0; day < options.days; day++) {
      const at = Math.min(firstDay + day * DAY + 18 * HOUR, nowMs - 60_000);
      const point = (value: number, attributes: Record<string, string> = {}) => ({
        startTimeUnixNano: `${BigInt(at - HOUR) * 1_000_000n}`,
        timeUnixNano: `${BigInt(at) * 1_000_000n}`,
        asDouble: value,
        attributes: Object.entries(attributes).map(([key, value]) => ({
          key,
          value: { stringValue: value },
        })),
      });
      const sum = (name: string, points: unknown[]) => ({
        name,
        sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: points },
      });
      const int = (max: number) => Math.floor(rng.float() * (max + 1));
      const language = rng.float() < 0.5 ? "TypeScript" : "Python";
      out.push({
        actor,
        body: {
          resourceMetrics: [{
            resource: {
              attributes: [
                { key: "service.name", value: { stringValue: "claude-code" } },
                { key: "service.version", value: { stringValue: "2.1.330" } },
              ],
            },
            scopeMetrics: [{
              scope: { name: "com.anthropic.claude_code" },
              metrics: [
                sum("claude_code.commit.count", [point(int(4))]),
                sum("claude_code.pull_request.count", [point(int(1))]),
                sum("claude_code.active_time.total", [
                  point(300 + int(2700), { type: "user" }),
                  point(600 + int(5400), { type: "cli" }),
                ]),
                sum("claude_code.code_edit_tool.decision", [
                  point(5 + int(25), { decision: "accept", tool_name: "Edit", language }),
                  point(int(5), { decision: "reject", tool_name: "Edit", language }),
                ]),
              ],
            }],
          }],
        },
      });
    }
  }
  return out;
}

/** All actors' exports merged by start time (an actor's own stay in its order). */
function* exportsInTimeOrder(options: GenOptions): Generator<GeneratedExport> {
  const streams = Array.from(
    { length: options.actors },
    (_, actor) => actorExports(options, actor),
  );
  const heads = streams.map((stream) => stream.next().value ?? null);
  for (;;) {
    let first = -1;
    for (let i = 0; i < heads.length; i++) {
      const head = heads[i];
      if (head && (first < 0 || head.startMs < heads[first]!.startMs)) first = i;
    }
    if (first < 0) return;
    yield heads[first]!;
    heads[first] = streams[first]!.next().value ?? null;
  }
}

/** One actor's exports, its sessions in time order. */
function* actorExports(options: GenOptions, actor: number): Generator<GeneratedExport> {
  const sessionsPerDay = options.sessionsPerActorPerDay ?? 3;
  const batchRecords = Math.max(1, options.batchRecords ?? 200);
  const nowMs = options.now.getTime();
  const firstDay = Math.floor(nowMs / DAY) * DAY - (options.days - 1) * DAY;
  const rng = new Rng(options.seed, actor);
  const out = new ExportBuilder(actor, batchRecords);
  const profile = actorProfile(rng, actor);
  for (let day = 0; day < options.days; day++) {
    const count = Math.round(sessionsPerDay * (0.4 + 1.2 * rng.float()));
    const starts: number[] = [];
    for (let i = 0; i < count; i++) {
      // Mostly working hours, UTC.
      starts.push(firstDay + day * DAY + 7 * HOUR + Math.floor(rng.float() * 13 * HOUR));
    }
    starts.sort((a, b) => a - b);
    for (const start of starts) {
      if (start >= nowMs - MINUTE) continue;
      const session = new Session(rng, profile, out, start, nowMs);
      const r = rng.float();
      if (r < 0.7) claudeSession(session);
      else if (r < 0.88) codexSession(session);
      else geminiSession(session);
      yield* out.drain();
    }
  }
  out.flush();
  yield* out.drain();
}

// ------------------------------------------------------------------ machinery

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/** Context tokens at which a session compacts its history. */
const MAX_CONTEXT = 180_000;

/**
 * sfc32 (128-bit state) seeded through splitmix32 from the seed and actor:
 * one stream per actor, and with 2^128 states the streams of thousands of
 * actors do not overlap (a 32-bit-state generator's did, at ~830 actors,
 * repeating one actor's sessions under another's).
 */
class Rng {
  #a: number;
  #b: number;
  #c: number;
  #d: number;
  constructor(seed: number, stream: number) {
    let s = hash2(seed, stream);
    const next = () => {
      s = (s + 0x9e3779b9) | 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) | 0;
    };
    this.#a = next();
    this.#b = next();
    this.#c = next();
    this.#d = stream | 0;
    for (let i = 0; i < 12; i++) this.uint32();
  }
  uint32(): number {
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0;
    this.#d = (this.#d + 1) | 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) | 0;
    this.#c = (this.#c << 21) | (this.#c >>> 11);
    this.#c = (this.#c + t) | 0;
    return t >>> 0;
  }
  float(): number {
    return this.uint32() / 4294967296;
  }
  int(max: number): number {
    return Math.floor(this.float() * max);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  chance(p: number): boolean {
    return this.float() < p;
  }
  /** Roughly log-normal around `median` (spread about ×/÷ 3). */
  around(median: number): number {
    const z = this.float() + this.float() + this.float() - 1.5; // ~ N(0, 0.5)
    return Math.max(1, Math.round(median * Math.exp(2.2 * z)));
  }
}

function hash2(a: number, b: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be5ab, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  return h | 0;
}

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HEX = "0123456789abcdef";

function alnum(rng: Rng, n: number): string {
  let s = "";
  while (s.length < n) {
    let v = rng.uint32();
    // Five base-62 digits per 32 bits.
    for (let i = 0; i < 5 && s.length < n; i++) {
      s += ALNUM[v % 62];
      v = Math.floor(v / 62);
    }
  }
  return s;
}

function hex(rng: Rng, n: number): string {
  let s = "";
  while (s.length < n) {
    let v = rng.uint32();
    for (let i = 0; i < 8 && s.length < n; i++) {
      s += HEX[v & 15];
      v >>>= 4;
    }
  }
  return s;
}

function uuid(rng: Rng): string {
  const h = hex(rng, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${
    h.slice(20)
  }`;
}

type AnyValue =
  | { stringValue: string }
  | { intValue: string }
  | { doubleValue: number }
  | { boolValue: boolean }
  | { arrayValue: { values: AnyValue[] } };
interface KeyValue {
  key: string;
  value: AnyValue;
}
interface LogRecordJson {
  timeUnixNano: string;
  observedTimeUnixNano: string;
  severityNumber?: number;
  severityText?: string;
  body?: { stringValue: string };
  attributes: KeyValue[];
}
interface ScopeJson {
  name?: string;
  version?: string;
}

function s(key: string, value: string): KeyValue {
  return { key, value: { stringValue: value } };
}
function i(key: string, value: number): KeyValue {
  return { key, value: { intValue: String(value) } };
}
function d(key: string, value: number): KeyValue {
  return { key, value: { doubleValue: value } };
}
function b(key: string, value: boolean): KeyValue {
  return { key, value: { boolValue: value } };
}

/** Collects one actor's records into exports of at most `batchRecords` records. */
class ExportBuilder {
  #groups: {
    resource: { attributes: KeyValue[] };
    scopeLogs: { scope: ScopeJson; logRecords: LogRecordJson[] }[];
  }[] = [];
  #records: LogRecordJson[] | null = null;
  #resource: KeyValue[] = [];
  #scope: ScopeJson = {};
  #count = 0;
  #toolCalls = 0;
  #startMs = 0;
  #done: GeneratedExport[] = [];

  constructor(readonly actor: number, readonly batchRecords: number) {}

  /** Records that follow belong to a new session (a new `resourceLogs`). */
  beginSession(resource: KeyValue[], scope: ScopeJson): void {
    this.#resource = resource;
    this.#scope = scope;
    this.#records = null;
  }

  push(record: LogRecordJson, toolCall: boolean): void {
    if (this.#records === null) {
      this.#records = [];
      this.#groups.push({
        resource: { attributes: this.#resource },
        scopeLogs: [{ scope: this.#scope, logRecords: this.#records }],
      });
    }
    this.#records.push(record);
    if (this.#count === 0) {
      // Codex's records carry their time as observed only.
      const nanos = record.timeUnixNano === "0" ? record.observedTimeUnixNano : record.timeUnixNano;
      this.#startMs = Number(nanos.slice(0, -6));
    }
    this.#count++;
    if (toolCall) this.#toolCalls++;
    if (this.#count >= this.batchRecords) this.flush();
  }

  flush(): void {
    if (this.#count === 0) return;
    this.#done.push({
      actor: this.actor,
      body: { resourceLogs: this.#groups },
      toolCalls: this.#toolCalls,
      records: this.#count,
      startMs: this.#startMs,
    });
    this.#groups = [];
    this.#records = null;
    this.#count = 0;
    this.#toolCalls = 0;
  }

  *drain(): Generator<GeneratedExport> {
    const done = this.#done;
    this.#done = [];
    yield* done;
  }
}

/** What stays the same for one actor across sessions. */
interface ActorProfile {
  userId: string;
  email: string;
  osType: string;
  osVersion: string;
  hostArch: string;
  terminal: string;
  /** Older Claude Code: numbers and booleans as strings, old attribute names. */
  oldClaude: boolean;
  claudeVersion: string;
  codexVersion: string;
  nodeVersion: string;
  /** Sends `tool_input`/`tool_parameters` (OTEL_LOG_TOOL_DETAILS=1). */
  toolDetails: boolean;
}

function actorProfile(rng: Rng, actor: number): ActorProfile {
  const mac = rng.chance(0.55);
  const oldClaude = rng.chance(0.25);
  return {
    userId: hex(rng, 64),
    email: `dev${actor}@acme.test`,
    osType: mac ? "darwin" : "linux",
    osVersion: mac ? "24.6.0" : "6.8.0-49-generic",
    hostArch: mac ? "arm64" : rng.chance(0.8) ? "amd64" : "arm64",
    terminal: rng.pick(["vscode", "iTerm.app", "ghostty", "tmux", "cursor"]),
    oldClaude,
    claudeVersion: oldClaude
      ? rng.pick(["2.0.14", "2.0.31", "2.1.88"])
      : rng.pick(["2.1.214", "2.1.240"]),
    codexVersion: rng.pick(["0.94.0", "0.98.0"]),
    nodeVersion: rng.pick(["v20.19.5", "v22.19.0", "v24.11.0"]),
    toolDetails: rng.chance(0.9),
  };
}

/** One session in progress: its clock and where its records go. */
class Session {
  readonly id: string;
  t: number;
  constructor(
    readonly rng: Rng,
    readonly actor: ActorProfile,
    readonly out: ExportBuilder,
    start: number,
    readonly nowMs: number,
  ) {
    this.id = uuid(rng);
    this.t = start;
  }
  /** Number of tool calls the session will try (median ~25). */
  plannedCalls(): number {
    return Math.min(400, this.rng.around(25));
  }
  /** Moves the clock; false once it reaches now (the session is still running). */
  advance(ms: number): boolean {
    this.t += ms;
    return this.t < this.nowMs;
  }
}

function nanos(ms: number): string {
  return `${ms}000000`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function pickTool(rng: Rng, tools: readonly ToolSpec[], weights: Float64Array): ToolSpec {
  const r = rng.float();
  for (let k = 0; k < weights.length; k++) if (r < weights[k]!) return tools[k]!;
  return tools[tools.length - 1]!;
}

/** Index into `tool.args`, or -1 for a risky argument (about 2% of calls of tools that have them). */
function pickArgs(rng: Rng, tool: ToolSpec): number {
  if (tool.risky !== undefined && rng.chance(0.02)) return -1 - rng.int(tool.risky.length);
  return rng.int(tool.args.length);
}

function argsText(tool: ToolSpec, k: number): string {
  return k >= 0 ? tool.args[k]! : tool.risky![-1 - k]!;
}

// --------------------------------------------------------------- Claude Code

const claudeWeights = cumulativeWeights(claudeTools);
const CLAUDE_SCOPE_NAME = "com.anthropic.claude_code.events";
const CLAUDE_MODELS = [
  // [model, input $/Mtok, output, cache read, cache write, share]
  ["claude-sonnet-4-5-20250929", 3, 15, 0.3, 3.75, 0.7],
  ["claude-opus-4-1-20250805", 15, 75, 1.5, 18.75, 0.1],
  ["claude-haiku-4-5-20251001", 1, 5, 0.1, 1.25, 0.2],
] as const;

function claudeSession(session: Session): void {
  const { rng, actor, out } = session;
  const old = actor.oldClaude;
  out.beginSession(
    [
      s("host.arch", actor.hostArch),
      s("os.type", actor.osType),
      s("os.version", actor.osVersion),
      s("service.name", "claude-code"),
      s("service.version", actor.claudeVersion),
    ],
    { name: CLAUDE_SCOPE_NAME, version: actor.claudeVersion },
  );
  // Shared by every record of the session (JSON.stringify does not mind).
  const common = [
    s("session.id", session.id),
    s("user.id", actor.userId),
    s("terminal.type", actor.terminal),
  ];
  if (!old) common.push(s("app.entrypoint", "cli"));
  // Old versions send every number as a string.
  const num = old ? (key: string, v: number) => s(key, String(v)) : i;
  let sequence = 0;
  let promptId = "";
  const mainModel = rng.float() < 0.2
    ? CLAUDE_MODELS[2]
    : rng.float() < 0.12
    ? CLAUDE_MODELS[1]
    : CLAUDE_MODELS[0];

  const emit = (name: string, attributes: KeyValue[], toolCall: boolean) => {
    const t = session.t;
    const head = [s("event.name", name), s("event.timestamp", iso(t))];
    if (!old) head.push(i("event.sequence", sequence++));
    if (promptId !== "") head.push(s("prompt.id", promptId));
    out.push({
      timeUnixNano: nanos(t),
      observedTimeUnixNano: nanos(t),
      body: { stringValue: "claude_code." + name },
      attributes: head.concat(common, attributes),
    }, toolCall);
  };

  const planned = session.plannedCalls();
  let context = 8000 + rng.int(12000);
  for (let call = 0; call < planned; call++) {
    if (call === 0 || rng.chance(0.12)) {
      if (!session.advance(20_000 + rng.int(180_000))) return;
      promptId = uuid(rng);
      emit(
        "user_prompt",
        [num("prompt_length", 20 + rng.int(400)), s("prompt", "<REDACTED>")],
        false,
      );
    }
    // The model decides on the next tool.
    if (call === 0 || rng.chance(0.6)) {
      const latency = rng.around(2500);
      if (!session.advance(latency)) return;
      const [model, pin, pout, pread, pwrite] = rng.chance(0.15) ? CLAUDE_MODELS[2] : mainModel;
      const input = 3 + rng.int(400);
      const output = 40 + rng.int(900);
      const cacheRead = context;
      const cacheWrite = rng.int(3000);
      context += cacheWrite + output;
      if (context > MAX_CONTEXT) context = 20_000; // compaction
      const cost = (input * pin + output * pout + cacheRead * pread + cacheWrite * pwrite) / 1e6;
      emit("api_request", [
        s("model", model),
        old ? s("cost_usd", String(cost)) : d("cost_usd", cost),
        num("duration_ms", latency),
        num("input_tokens", input),
        num("output_tokens", output),
        num("cache_read_tokens", cacheRead),
        num("cache_creation_tokens", cacheWrite),
        s("request_id", "req_011C" + alnum(rng, 20)),
      ], false);
    }

    const tool = pickTool(rng, claudeTools, claudeWeights);
    const k = pickArgs(rng, tool);
    const useId = "toolu_01" + alnum(rng, 22);
    const mcp = tool.mcpServer !== undefined;
    const details: KeyValue[] = [];
    if (actor.toolDetails) {
      details.push(s("tool_input", argsText(tool, k)));
      if (tool.params !== undefined) {
        details.push(s("tool_parameters", k >= 0 ? tool.params[k]! : tool.riskyParams![-1 - k]!));
      } else if (mcp) {
        details.push(s(
          "tool_parameters",
          `{"mcp_server_name":"${tool.mcpServer}","mcp_tool_name":"${
            tool.name.slice(7 + tool.mcpServer!.length)
          }"}`,
        ));
      }
    }
    const toolName = mcp && !actor.toolDetails ? "mcp_tool" : tool.name;
    const roll = rng.float();
    const asks = mcp || tool.name === "Bash" || tool.name === "Write" || tool.name === "Edit" ||
      tool.name === "WebFetch";
    if (!session.advance(300 + rng.int(1500))) return;

    if (roll < 0.03) {
      // Rejected: a reject decision and no result.
      if (!session.advance(1000 + rng.int(8000))) return;
      const decision = [
        s("tool_name", toolName),
        s("tool_use_id", useId),
        s("decision", "reject"),
        s("source", rng.chance(0.8) ? "user_reject" : "user_abort"),
      ];
      if (!old) decision.push(s("tool_source", mcp ? "mcp" : "builtin"));
      emit("tool_decision", decision.concat(details.length > 1 ? [details[1]!] : []), true);
      continue;
    }
    const decisionSource = asks
      ? rng.pick(["user_temporary", "user_permanent", "config"])
      : "config";
    if (asks || rng.chance(0.1)) {
      const decision = [
        s("tool_name", toolName),
        s("tool_use_id", useId),
        s("decision", "accept"),
        s("source", decisionSource),
      ];
      if (!old) decision.push(s("tool_source", mcp ? "mcp" : "builtin"));
      emit("tool_decision", decision, false);
    }
    const duration = rng.around(tool.medianMs);
    if (!session.advance(duration)) return;
    const failed = roll < 0.08; // ~5% of calls
    const result = [
      s("tool_name", toolName),
      s("tool_use_id", useId),
      s("success", failed ? "false" : "true"),
      num("duration_ms", duration),
      s(old ? "decision" : "decision_type", "accept"),
      s(old ? "source" : "decision_source", decisionSource),
      num("tool_result_size_bytes", failed ? 0 : rng.around(tool.resultBytes)),
    ];
    if (failed) result.push(s("error", tool.error[0]), s("error_type", tool.error[1]));
    if (mcp) result.push(s("mcp_server_scope", "user"));
    emit("tool_result", result.concat(details), true);
  }
}

// ---------------------------------------------------------------------- Codex

const codexWeights = cumulativeWeights(codexTools);

function codexSession(session: Session): void {
  const { rng, actor, out } = session;
  out.beginSession(
    [
      s("service.name", "codex_cli_rs"),
      s("service.version", actor.codexVersion),
      s("env", "dev"),
      s("host.name", `dev-${actor.email.slice(0, actor.email.indexOf("@"))}`),
    ],
    {},
  );
  const model = rng.chance(0.7) ? "gpt-5-codex" : "gpt-5";
  const common = [
    s("conversation.id", session.id),
    s("app.version", actor.codexVersion),
    s("auth_mode", "Chatgpt"),
    s("originator", "codex_cli_rs"),
    s("user.email", actor.email),
    s("terminal.type", actor.terminal),
    s("model", model),
    s("slug", model),
  ];
  const emit = (name: string, attributes: KeyValue[], toolCall: boolean) => {
    const t = session.t;
    out.push({
      timeUnixNano: "0",
      observedTimeUnixNano: nanos(t),
      severityNumber: 9,
      severityText: "INFO",
      attributes: [s("event.name", name), s("event.timestamp", iso(t))].concat(common, attributes),
    }, toolCall);
  };

  emit("codex.conversation_starts", [
    s("provider_name", "openai"),
    s("reasoning_effort", rng.pick(["low", "medium", "high"])),
    i("context_window", 272000),
    s("approval_policy", "on-request"),
    s("sandbox_policy", "workspace-write"),
    s("mcp_servers", "github"),
  ], false);
  const planned = session.plannedCalls();
  let context = 6000 + rng.int(8000);
  for (let call = 0; call < planned; call++) {
    if (call === 0 || rng.chance(0.1)) {
      if (!session.advance(30_000 + rng.int(200_000))) return;
      emit("codex.user_prompt", [
        s("prompt_length", String(20 + rng.int(300))),
        s("prompt", "[REDACTED]"),
      ], false);
    }
    const latency = rng.around(3000);
    if (!session.advance(latency)) return;
    const output = 30 + rng.int(700);
    const cached = Math.floor(context * 0.9);
    emit("codex.sse_event", [
      s("event.kind", "response.completed"),
      s("duration_ms", String(latency)),
      s("input_token_count", String(context + 200 + rng.int(800))),
      s("output_token_count", String(output)),
      s("cached_token_count", String(cached)),
      s("reasoning_token_count", String(Math.floor(output * 0.4))),
      s("tool_token_count", "0"),
    ], false);
    context += output + 400 + rng.int(2000);
    if (context > MAX_CONTEXT) context = 20_000;

    const tool = pickTool(rng, codexTools, codexWeights);
    const k = pickArgs(rng, tool);
    const callId = "call_" + alnum(rng, 24);
    const roll = rng.float();
    if (tool.name === "shell" && (roll < 0.03 || rng.chance(0.15))) {
      if (!session.advance(800 + rng.int(9000))) return;
      const denied = roll < 0.03;
      emit("codex.tool_decision", [
        s("tool_name", tool.name),
        s("call_id", callId),
        s("decision", denied ? rng.pick(["denied", "abort"]) : "approved"),
        s("source", denied ? "user" : "config"),
      ], denied);
      if (denied) continue;
    }
    const duration = rng.around(tool.medianMs);
    if (!session.advance(duration)) return;
    const failed = roll >= 0.03 && roll < 0.08;
    emit("codex.tool_result", [
      s("tool_name", tool.name),
      s("call_id", callId),
      s("arguments", argsText(tool, k)),
      s("duration_ms", String(duration)),
      s("success", failed ? "false" : "true"),
      s("output", codexOutput(tool, failed)),
      s("mcp_server", tool.mcpServer ?? ""),
      s("mcp_server_origin", ""),
    ], true);
  }
}

// ----------------------------------------------------------------- Gemini CLI

const geminiWeights = cumulativeWeights(geminiTools);

function geminiSession(session: Session): void {
  const { rng, actor, out } = session;
  out.beginSession(
    [
      s("service.name", "gemini-cli"),
      s("service.version", actor.nodeVersion),
      s("session.id", session.id),
    ],
    { name: "gemini-cli" },
  );
  const model = rng.chance(0.75) ? "gemini-2.5-pro" : "gemini-2.5-flash";
  const common = [
    s("session.id", session.id),
    s(
      "installation.id",
      actor.userId.slice(0, 8) + "-" + actor.userId.slice(8, 12) + "-4a7b-8c9d-" +
        actor.userId.slice(12, 24),
    ),
    b("interactive", true),
    s("user.email", actor.email),
  ];
  let promptId = "";
  let prompts = 0;
  const emit = (name: string, body: string, attributes: KeyValue[], toolCall: boolean) => {
    const t = session.t;
    out.push({
      timeUnixNano: nanos(t),
      observedTimeUnixNano: nanos(t),
      body: { stringValue: body },
      attributes: [s("event.name", name), s("event.timestamp", iso(t))].concat(common, attributes),
    }, toolCall);
  };

  const planned = session.plannedCalls();
  let context = 7000 + rng.int(9000);
  for (let call = 0; call < planned; call++) {
    if (call === 0 || rng.chance(0.1)) {
      if (!session.advance(30_000 + rng.int(200_000))) return;
      promptId = `${session.id}########${++prompts}`;
      emit("gemini_cli.user_prompt", "User prompt.", [
        i("prompt_length", 20 + rng.int(300)),
        s("prompt_id", promptId),
        s("auth_type", "oauth-personal"),
      ], false);
    }
    if (call === 0 || rng.chance(0.55)) {
      const latency = rng.around(2800);
      if (!session.advance(latency)) return;
      const output = 30 + rng.int(500);
      const thoughts = rng.int(900);
      const cached = Math.floor(context * 0.7);
      emit(
        "gemini_cli.api_response",
        `API response from ${model}. Status: 200. Duration: ${latency}ms.`,
        [
          s("model", model),
          i("status_code", 200),
          i("duration_ms", latency),
          i("input_token_count", context),
          i("output_token_count", output),
          i("cached_content_token_count", cached),
          i("thoughts_token_count", thoughts),
          i("tool_token_count", 0),
          i("total_token_count", context + output + thoughts),
          s("prompt_id", promptId),
        ],
        false,
      );
      context += output + 300 + rng.int(2500);
      if (context > MAX_CONTEXT) context = 20_000;
    }
    const tool = pickTool(rng, geminiTools, geminiWeights);
    const k = pickArgs(rng, tool);
    const roll = rng.float();
    const rejected = roll < 0.03;
    const failed = !rejected && roll < 0.08;
    const duration = rejected ? 1000 + rng.int(8000) : rng.around(tool.medianMs);
    if (!session.advance(duration)) return;
    const decision = rejected ? "reject" : tool.mcpServer !== undefined ? "accept" : "auto_accept";
    const attributes = [
      s("function_name", tool.name),
      s("function_args", argsText(tool, k)),
      i("duration_ms", duration),
      b("success", !rejected && !failed),
      s("decision", decision),
      s("prompt_id", promptId),
      s("tool_type", tool.mcpServer !== undefined ? "mcp" : "native"),
    ];
    if (tool.mcpServer !== undefined) attributes.push(s("mcp_server_name", tool.mcpServer));
    if (failed) attributes.push(s("error", tool.error[0]), s("error_type", tool.error[1]));
    if (!rejected && !failed) attributes.push(i("content_length", rng.around(tool.resultBytes)));
    emit(
      "gemini_cli.tool_call",
      `Tool call: ${tool.name}. Decision: ${decision}. Success: ${
        !rejected && !failed
      }. Duration: ${duration}ms.`,
      attributes,
      true,
    );
  }
}
