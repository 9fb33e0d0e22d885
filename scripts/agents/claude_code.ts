/**
 * Claude Code (`@anthropic-ai/claude-code`) driven by a scripted Anthropic
 * Messages API on loopback: `claude -p` runs six tool calls the mock model
 * asks for (a shell command, a file read, a file write, a command carrying a
 * made-up GitHub token, a `curl` that fails offline, and an `rm -rf` that a
 * settings deny rule refuses), then answers in text. Every response carries
 * the same fixed token usage, so tokens and cost are known exactly.
 *
 * @module
 */
import { join } from "node:path";
import type {
  AgentScenario,
  ExpectedRun,
  ExpectedToolCall,
  RunContext,
  Variant,
} from "./_scenario.ts";

const VERSION = "2.1.330";
/** The model the client is told to use; its price is in Claude Code's own table. */
export const CLAUDE_MODEL = "claude-sonnet-4-5-20250929";
/** Token usage of every mock response (input, output, cache read, cache creation). */
export const CLAUDE_USAGE = {
  "input_tokens": 1000,
  "output_tokens": 200,
  "cache_read_input_tokens": 2000,
  "cache_creation_input_tokens": 400,
};
/**
 * Cost Claude Code reports per response for {@link CLAUDE_USAGE} on Sonnet 4.5
 * ($3 input, $15 output, $0.30 cache read, $3.75 cache write per million tokens):
 * 0.003 + 0.003 + 0.0006 + 0.0015.
 */
export const CLAUDE_COST_PER_CALL = 0.0081;

/** A made-up GitHub token (36 characters after `ghp_`): must be flagged and redacted. */
export const FAKE_GITHUB_TOKEN = "ghp_R8mK2xQv9LpT4nWz7YcH3bJd6FsA1gUe5NtX";
/** The offline endpoint: no DNS in the namespace, curl exits 6. */
const OFFLINE_URL = "https://api.example.com/v1/status";

interface ScriptedCall {
  id: string;
  name: string;
  input: (project: string) => Record<string, unknown>;
}

/** The tool calls the mock model asks for, one per turn, in order. */
const SCRIPT: ScriptedCall[] = [
  {
    id: "toolu_01HarnessShellOk0000001",
    name: "Bash",
    input: () => ({ command: "echo harness-shell-ok", description: "Print a marker" }),
  },
  {
    id: "toolu_01HarnessReadNotes00002",
    name: "Read",
    input: (project) => ({ "file_path": join(project, "notes.txt") }),
  },
  {
    id: "toolu_01HarnessWriteOut00003",
    name: "Write",
    input: (project) => ({
      "file_path": join(project, "out.txt"),
      content: "written by harness\n",
    }),
  },
  {
    id: "toolu_01HarnessSecret0000004",
    name: "Bash",
    input: () => ({
      command: `export GITHUB_TOKEN=${FAKE_GITHUB_TOKEN} && echo token-set`,
      description: "Set a token",
    }),
  },
  {
    id: "toolu_01HarnessCurlFail00005",
    name: "Bash",
    input: () => ({ command: `curl -sS ${OFFLINE_URL}`, description: "Fetch status" }),
  },
  {
    id: "toolu_01HarnessRmRfDenied006",
    name: "Bash",
    input: () => ({ command: "rm -rf ./build", description: "Remove build output" }),
  },
];

const FINAL_TEXT = "Harness scenario done.";

export function sse(events: [string, unknown][]): string {
  return events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    .join("");
}

/** The streamed answer for one turn: a tool call, or the closing text. */
function streamedTurn(step: number, project: string, model: string): string {
  const call = SCRIPT[step];
  const message = {
    id: `msg_harness_${String(step).padStart(2, "0")}`,
    type: "message",
    role: "assistant",
    model,
    content: [],
    "stop_reason": null,
    "stop_sequence": null,
    usage: { ...CLAUDE_USAGE, "output_tokens": 1 },
  };
  const events: [string, unknown][] = [["message_start", { type: "message_start", message }]];
  if (call) {
    events.push(
      ["content_block_start", {
        type: "content_block_start",
        index: 0,
        "content_block": { type: "tool_use", id: call.id, name: call.name, input: {} },
      }],
      ["content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", "partial_json": JSON.stringify(call.input(project)) },
      }],
    );
  } else {
    events.push(
      ["content_block_start", {
        type: "content_block_start",
        index: 0,
        "content_block": { type: "text", text: "" },
      }],
      ["content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text: FINAL_TEXT },
      }],
    );
  }
  events.push(
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", {
      type: "message_delta",
      delta: { "stop_reason": call ? "tool_use" : "end_turn", "stop_sequence": null },
      usage: CLAUDE_USAGE,
    }],
    ["message_stop", { type: "message_stop" }],
  );
  return sse(events);
}

interface MockModel extends AsyncDisposable {
  url: string;
  /** One line per request the client made, for diagnosis. */
  log: string[];
}

/**
 * The scripted Messages API. The turn is the number of assistant messages
 * already in the conversation; requests without tools (side queries) get a
 * plain text answer with the same usage.
 */
async function startMockModel(project: string): Promise<MockModel> {
  const log: string[] = [];
  let served = 0;
  const { promise, resolve } = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: resolve },
    async (request) => {
      const url = new URL(request.url);
      if (request.method !== "POST" || url.pathname !== "/v1/messages") {
        log.push(`${request.method} ${url.pathname} -> 404`);
        await request.body?.cancel();
        return Response.json({ type: "error", error: { type: "not_found_error" } }, {
          status: 404,
        });
      }
      const body = await request.json() as {
        model: string;
        stream?: boolean;
        tools?: unknown[];
        messages: { role: string }[];
      };
      const requestId = `req_harness_${String(served++).padStart(3, "0")}`;
      const main = (body.tools?.length ?? 0) > 0;
      const step = main
        ? body.messages.filter((m) => m.role === "assistant").length
        : SCRIPT.length;
      log.push(
        `POST /v1/messages model=${body.model} tools=${body.tools?.length ?? 0} step=${step}`,
      );
      const headers = { "request-id": requestId };
      if (body.stream) {
        return new Response(streamedTurn(step, project, body.model), {
          headers: { ...headers, "content-type": "text/event-stream" },
        });
      }
      return Response.json({
        id: `msg_harness_side_${requestId}`,
        type: "message",
        role: "assistant",
        model: body.model,
        content: [{ type: "text", text: FINAL_TEXT }],
        "stop_reason": "end_turn",
        "stop_sequence": null,
        usage: CLAUDE_USAGE,
      }, { headers });
    },
  );
  const addr = await promise;
  return {
    url: `http://127.0.0.1:${addr.port}`,
    log,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** Permissions: everything the script uses is allowed except `rm -rf`, denied by a rule. */
const SETTINGS = {
  permissions: {
    allow: ["Bash", "Read", "Write"],
    deny: ["Bash(rm -rf:*)"],
  },
};

/** Environment that keeps the client from reaching anything but the mock and the recorder. */
export function clientEnv(
  context: RunContext,
  home: string,
  modelUrl: string,
): Record<string, string> {
  return {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: home,
    TERM: "dumb",
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: "sk-ant-harness-made-up-key-not-real",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_ENABLE_TELEMETRY: "1",
    OTEL_LOGS_EXPORTER: "otlp",
    OTEL_METRICS_EXPORTER: "otlp",
    OTEL_EXPORTER_OTLP_ENDPOINT: context.variant.env.OTEL_EXPORTER_OTLP_PROTOCOL === "grpc"
      ? `http://${context.otlpGrpcUrl}`
      : context.otlpHttpUrl,
    OTEL_EXPORTER_OTLP_HEADERS: `Authorization=${context.authorization}`,
    OTEL_LOG_TOOL_DETAILS: "1",
    OTEL_LOGS_EXPORT_INTERVAL: "1000",
    OTEL_METRIC_EXPORT_INTERVAL: "1000",
    OTEL_TRACES_EXPORT_INTERVAL: "1000",
    CLAUDE_CODE_OTEL_SHUTDOWN_TIMEOUT_MS: "10000",
    CLAUDE_CODE_OTEL_FLUSH_TIMEOUT_MS: "10000",
    ...context.variant.env,
  };
}

const PROTOBUF = { OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" };

export const TRACES = { CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: "1", OTEL_TRACES_EXPORTER: "otlp" };

/** The variants: protobuf, JSON, gzip, protobuf with the beta traces on, and gRPC with traces. */
const VARIANTS: Variant[] = [
  { name: "http-protobuf", env: PROTOBUF },
  { name: "http-json", env: { OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" } },
  { name: "http-protobuf-gzip", env: { ...PROTOBUF, OTEL_EXPORTER_OTLP_COMPRESSION: "gzip" } },
  { name: "http-protobuf-traces", env: { ...PROTOBUF, ...TRACES } },
  { name: "grpc-traces", env: { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", ...TRACES } },
];

async function run(context: RunContext): Promise<void> {
  const home = join(context.workDir, "home");
  const project = join(context.workDir, "project");
  await Deno.mkdir(join(home, ".claude"), { recursive: true });
  await Deno.mkdir(join(project, "build"), { recursive: true });
  await Deno.writeTextFile(join(home, ".claude", "settings.json"), JSON.stringify(SETTINGS));
  await Deno.writeTextFile(join(project, "notes.txt"), "harness notes\n");
  await using model = await startMockModel(project);
  const output = await new Deno.Command(
    join(context.installDir, "node_modules", ".bin", "claude"),
    {
      args: [
        "-p",
        "Run the harness scenario.",
        "--model",
        CLAUDE_MODEL,
        "--output-format",
        "json",
      ],
      cwd: project,
      env: clientEnv(context, home, model.url),
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    },
  ).output();
  const decoder = new TextDecoder();
  if (!output.success || Deno.env.get("AGENT_HARNESS_VERBOSE") === "1") {
    const detail = [
      `claude exited ${output.code}`,
      `model requests:\n  ${model.log.join("\n  ")}`,
      `stdout: ${decoder.decode(output.stdout).slice(0, 4000)}`,
      `stderr: ${decoder.decode(output.stderr).slice(0, 4000)}`,
    ].join("\n");
    if (!output.success) throw new Error(detail);
    // deno-lint-ignore no-console
    console.error(detail);
  }
}

/** What the API must show for one run. */
function expected(variant: Variant): ExpectedRun {
  // With traces on, every call's `claude_code.tool` span (the rejected one too) adds its ids.
  const traced = variant.env.OTEL_TRACES_EXPORTER === "otlp";
  const call = (
    fields: Record<string, unknown>,
    more: Omit<ExpectedToolCall, "fields"> = {},
  ): ExpectedToolCall => ({
    fields: {
      "agent_system": "claude-code",
      "agent_version": VERSION,
      "os_type": "linux",
      ...(traced ? {} : { "trace_id": null, "span_id": null }),
      ...fields,
    },
    ...(traced ? { present: ["trace_id", "span_id"] } : {}),
    ...more,
  });
  // An allow rule in the user's settings.json is reported as `user_permanent`.
  const ok = {
    outcome: "ok",
    success: true,
    decision: "accept",
    "decision_source": "user_permanent",
  };
  const toolCalls: ExpectedToolCall[] = [
    call({
      ...ok,
      "tool_name": "Bash",
      "tool_type": "builtin",
      category: "code_exec",
      "tool_use_id": SCRIPT[0]!.id,
      "result_size_bytes": "harness-shell-ok".length,
    }, { argumentsContain: ["echo harness-shell-ok"], flags: [] }),
    call({
      ...ok,
      "tool_name": "Read",
      "tool_type": "builtin",
      category: "file_read",
      "tool_use_id": SCRIPT[1]!.id,
    }, { argumentsContain: ["notes.txt"], flags: [] }),
    call({
      ...ok,
      "tool_name": "Write",
      "tool_type": "builtin",
      category: "file_write",
      "tool_use_id": SCRIPT[2]!.id,
    }, { argumentsContain: ["out.txt"], flags: [] }),
    call({
      ...ok,
      "tool_name": "Bash",
      "tool_type": "builtin",
      category: "code_exec",
      "tool_use_id": SCRIPT[3]!.id,
    }, {
      argumentsContain: ["export GITHUB_TOKEN=", "[REDACTED:"],
      absent: [FAKE_GITHUB_TOKEN, FAKE_GITHUB_TOKEN.slice(4)],
      flags: ["credential_detected"],
    }),
    call({
      outcome: "error",
      success: false,
      decision: "accept",
      "decision_source": "user_permanent",
      "tool_name": "Bash",
      category: "code_exec",
      "tool_use_id": SCRIPT[4]!.id,
      // Claude Code reports no exit code, only this (with OTEL_LOG_TOOL_DETAILS=1).
      "error_message": "Shell command failed",
      "error_type": "ShellError",
    }, { argumentsContain: [OFFLINE_URL], flags: [] }),
    call({
      outcome: "rejected",
      success: null,
      "duration_ms": null,
      "result_size_bytes": null,
      decision: "reject",
      "decision_source": "config",
      "tool_name": "Bash",
      category: "code_exec",
      "tool_use_id": SCRIPT[5]!.id,
    }, { argumentsContain: ["rm -rf ./build"], flags: ["destructive_operation"] }),
  ];
  const modelCalls = SCRIPT.length + 1;
  return {
    agentSystem: "claude-code",
    sessions: [{
      fields: {
        "agent_system": "claude-code",
        "agent_version": VERSION,
        "tool_call_count": toolCalls.length,
        "success_count": 4,
        "error_count": 1,
        "cost_usd": round(modelCalls * CLAUDE_COST_PER_CALL),
      },
      toolCalls,
      domains: ["api.example.com"],
    }],
    cost: [{
      "provider_name": "anthropic",
      model: CLAUDE_MODEL,
      "call_count": modelCalls,
      "input_tokens": modelCalls * CLAUDE_USAGE.input_tokens,
      "output_tokens": modelCalls * CLAUDE_USAGE.output_tokens,
      "cost_usd": round(modelCalls * CLAUDE_COST_PER_CALL),
    }],
  };
}

function round(usd: number): number {
  return Math.round(usd * 1e9) / 1e9;
}

/** Claude Code 2.1.330 and its scripted run. */
export const claudeCode: AgentScenario = {
  agent: "claude-code",
  npmPackage: "@anthropic-ai/claude-code",
  version: VERSION,
  variants: VARIANTS,
  run,
  expected,
};
