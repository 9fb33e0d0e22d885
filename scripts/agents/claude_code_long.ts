/**
 * Claude Code (`@anthropic-ai/claude-code`) in a long session that is then
 * resumed, driven by a scripted Anthropic Messages API on loopback:
 *
 * 1. `claude -p` makes 42 tool calls, one per turn, cycling Bash
 *    `echo step-N`, Read `notes-N.txt` and Write `out-N.txt`, where every 7th
 *    step is instead a Bash `ls` of a missing directory (fails), then answers;
 * 2. `claude -p --resume <session_id>` (the id the first run printed with
 *    `--output-format json`) continues that conversation with a second
 *    prompt: 2 more calls (steps 43 and 44 of the same cycle), then answers.
 *
 * The mock picks the next step by the scripted tool_use ids already in the
 * conversation; the second part's steps are offered only once the second
 * prompt is in it. Every response carries the same fixed token usage.
 *
 * Claude Code 2.1.330 keeps the conversation's `session.id` when resuming:
 * the API shows one session of 44 calls.
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
import {
  CLAUDE_COST_PER_CALL,
  CLAUDE_MODEL,
  CLAUDE_USAGE,
  clientEnv,
  sse,
  TRACES,
} from "./claude_code.ts";
import {
  lastToolResults,
  type MessagesRequest,
  messageText,
  toolUseIds,
} from "./claude_code_mcp.ts";

const VERSION = "2.1.330";

/** The first run's prompt: marks the scripted conversation. */
const FIRST_PROMPT = "Run the long harness session.";
/** The resumed run's prompt: unlocks the last steps. */
const RESUME_PROMPT = "Continue the long harness session with two more steps.";
const FIRST_TEXT = "Long harness session: 42 steps done.";
const RESUME_TEXT = "Long harness session: resumed steps done.";

/** Tool calls of the first run, and of both runs. */
const FIRST_CALLS = 42;
const ALL_CALLS = 44;

type Kind = "echo" | "read" | "write" | "fail";

interface Step {
  /** 1-based. */
  n: number;
  kind: Kind;
  id: string;
  name: "Bash" | "Read" | "Write";
  input: (project: string) => Record<string, unknown>;
}

/** Step `n` (1-based): every 7th a failing Bash, else Bash echo, Read, Write in turn. */
function step(n: number): Step {
  const id = `toolu_01HarnessLongStep${String(n).padStart(5, "0")}`;
  if (n % 7 === 0) {
    return {
      n,
      kind: "fail",
      id,
      name: "Bash",
      input: () => ({
        command: `ls /nonexistent-long-step-${n}`,
        description: "List a missing directory",
      }),
    };
  }
  const kind = (["echo", "read", "write"] as const)[(n - 1) % 3]!;
  switch (kind) {
    case "echo":
      return {
        n,
        kind,
        id,
        name: "Bash",
        input: () => ({ command: `echo step-${n}`, description: "Print a marker" }),
      };
    case "read":
      return {
        n,
        kind,
        id,
        name: "Read",
        input: (project) => ({ "file_path": join(project, `notes-${n}.txt`) }),
      };
    case "write":
      return {
        n,
        kind,
        id,
        name: "Write",
        input: (project) => ({
          "file_path": join(project, `out-${n}.txt`),
          content: `written at step ${n}\n`,
        }),
      };
  }
}

const STEPS: Step[] = Array.from({ length: ALL_CALLS }, (_, i) => step(i + 1));

/** The streamed answer for one turn: a tool call, or `text`. */
function streamedTurn(
  label: string,
  call: Step | undefined,
  text: string,
  project: string,
  model: string,
): string {
  const message = {
    id: `msg_harness_long_${label}`,
    type: "message",
    role: "assistant",
    model,
    content: [],
    "stop_reason": null,
    "stop_sequence": null,
    usage: { ...CLAUDE_USAGE, "output_tokens": 1 },
  };
  const block = call
    ? [
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
    ] as [string, unknown][]
    : [
      ["content_block_start", {
        type: "content_block_start",
        index: 0,
        "content_block": { type: "text", text: "" },
      }],
      ["content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text },
      }],
    ] as [string, unknown][];
  return sse([
    ["message_start", { type: "message_start", message }],
    ...block,
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", {
      type: "message_delta",
      delta: { "stop_reason": call ? "tool_use" : "end_turn", "stop_sequence": null },
      usage: CLAUDE_USAGE,
    }],
    ["message_stop", { type: "message_stop" }],
  ]);
}

interface MockModel extends AsyncDisposable {
  url: string;
  /** One line per request the client made, for diagnosis. */
  log: string[];
  /** Requests answered: `main` (the scripted conversation) and `side`. */
  counts: Record<string, number>;
}

/**
 * The scripted Messages API. The scripted conversation starts with
 * {@link FIRST_PROMPT}; its next step is the first scripted call not in it
 * yet, the last two only once {@link RESUME_PROMPT} is in it. Any other
 * request (a side query) gets a plain text answer with the same usage.
 */
async function startMockModel(project: string): Promise<MockModel> {
  const log: string[] = [];
  const counts: Record<string, number> = { main: 0, side: 0 };
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
      const body = await request.json() as MessagesRequest;
      const requestId = `req_harness_${String(served++).padStart(3, "0")}`;
      const first = messageText(body.messages.find((m) => m.role === "user"));
      const main = (body.tools?.length ?? 0) > 0 && first.includes(FIRST_PROMPT);
      counts[main ? "main" : "side"]!++;
      const resumed = body.messages.some((m) =>
        m.role === "user" && messageText(m).includes(RESUME_PROMPT)
      );
      const ids = toolUseIds(body.messages);
      const script = STEPS.slice(0, resumed ? ALL_CALLS : FIRST_CALLS);
      const next = main ? script.find((s) => !ids.has(s.id)) : undefined;
      log.push(
        `POST /v1/messages ${requestId} ${main ? "main" : "side"} model=${body.model} stream=${
          body.stream ?? false
        } tools=${
          body.tools?.length ?? 0
        } messages=${body.messages.length} resumed=${resumed} next=${
          next ? `${next.n} ${next.kind}` : "text"
        }`,
      );
      log.push(...lastToolResults(body.messages));
      const headers = { "request-id": requestId };
      const text = resumed ? RESUME_TEXT : FIRST_TEXT;
      if (body.stream) {
        const label = next ? String(next.n).padStart(2, "0") : `text_${requestId}`;
        return new Response(streamedTurn(label, next, text, project, body.model), {
          headers: { ...headers, "content-type": "text/event-stream" },
        });
      }
      return Response.json({
        id: `msg_harness_side_${requestId}`,
        type: "message",
        role: "assistant",
        model: body.model,
        content: [{ type: "text", text }],
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
    counts,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

const SETTINGS = { permissions: { allow: ["Bash", "Read", "Write"] } };

const PROTOBUF = { OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" };

/** The variants: JSON logs and metrics, and protobuf with the beta traces on. */
const VARIANTS: Variant[] = [
  { name: "http-json", env: { OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" } },
  { name: "http-protobuf-traces", env: { ...PROTOBUF, ...TRACES } },
];

/** The client's `--output-format json` result. */
interface ClaudeResult {
  "session_id"?: string;
  result?: string;
  "num_turns"?: number;
  "total_cost_usd"?: number;
}

async function run(context: RunContext): Promise<void> {
  const home = join(context.workDir, "home");
  const project = join(context.workDir, "project");
  await Deno.mkdir(join(home, ".claude"), { recursive: true });
  await Deno.mkdir(project, { recursive: true });
  await Deno.writeTextFile(join(home, ".claude", "settings.json"), JSON.stringify(SETTINGS));
  for (const s of STEPS.filter((s) => s.kind === "read")) {
    await Deno.writeTextFile(join(project, `notes-${s.n}.txt`), `notes for step ${s.n}\n`);
  }
  await using model = await startMockModel(project);
  const claude = join(context.installDir, "node_modules", ".bin", "claude");
  const decoder = new TextDecoder();
  const outputs: string[] = [];
  const runClaude = async (extra: string[], finalText: string): Promise<ClaudeResult> => {
    const output = await new Deno.Command(claude, {
      args: [...extra, "--model", CLAUDE_MODEL, "--output-format", "json"],
      cwd: project,
      env: clientEnv(context, home, model.url),
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = decoder.decode(output.stdout);
    outputs.push(
      `claude ${extra.join(" ")} exited ${output.code}`,
      `stdout: ${stdout.slice(0, 4000)}`,
      `stderr: ${decoder.decode(output.stderr).slice(0, 4000)}`,
    );
    let result: ClaudeResult = {};
    try {
      result = JSON.parse(stdout) as ClaudeResult;
    } catch {
      // Reported below.
    }
    if (!output.success || result.result !== finalText) throw new Error(detail());
    return result;
  };
  const detail = () =>
    [
      `model requests (${JSON.stringify(model.counts)}):\n  ${model.log.join("\n  ")}`,
      ...outputs,
    ].join("\n");
  const first = await runClaude(["-p", FIRST_PROMPT], FIRST_TEXT);
  if (typeof first.session_id !== "string" || first.session_id === "") {
    throw new Error(`The first run printed no session_id\n${detail()}`);
  }
  const second = await runClaude(["-p", RESUME_PROMPT, "--resume", first.session_id], RESUME_TEXT);
  outputs.push(`session ids: first ${first.session_id}, resumed ${second.session_id}`);
  if (Deno.env.get("AGENT_HARNESS_VERBOSE") === "1") {
    // deno-lint-ignore no-console
    console.error(detail());
  }
}

/** What the API must show for one run of both parts. */
function expected(variant: Variant): ExpectedRun {
  const traced = variant.env.OTEL_TRACES_EXPORTER === "otlp";
  const accepted = { decision: "accept", "decision_source": "user_permanent" };
  const toolCalls = STEPS.map((s): ExpectedToolCall => {
    const fields: Record<string, unknown> = {
      "agent_system": "claude-code",
      "agent_version": VERSION,
      "os_type": "linux",
      ...(traced ? {} : { "trace_id": null, "span_id": null }),
      ...accepted,
      "tool_name": s.name,
      "tool_type": "builtin",
      "tool_use_id": s.id,
      outcome: "ok",
      success: true,
      "error_message": null,
    };
    let contains: string;
    switch (s.kind) {
      case "echo":
        Object.assign(fields, {
          category: "code_exec",
          "result_size_bytes": `step-${s.n}`.length,
        });
        contains = `echo step-${s.n}`;
        break;
      case "read":
        fields.category = "file_read";
        contains = `notes-${s.n}.txt`;
        break;
      case "write":
        fields.category = "file_write";
        contains = `out-${s.n}.txt`;
        break;
      case "fail":
        Object.assign(fields, {
          category: "code_exec",
          outcome: "error",
          success: false,
          "error_message": "Shell command failed",
          "error_type": "ShellError",
        });
        contains = `ls /nonexistent-long-step-${s.n}`;
        break;
    }
    return {
      fields,
      argumentsContain: [contains],
      flags: [],
      ...(traced ? { present: ["trace_id", "span_id"] } : {}),
    };
  });
  const errors = STEPS.filter((s) => s.kind === "fail").length;
  // One request per call and one answer, in each part.
  const modelCalls = ALL_CALLS + 2;
  return {
    agentSystem: "claude-code",
    sessions: [{
      fields: {
        "agent_system": "claude-code",
        "agent_version": VERSION,
        "tool_call_count": ALL_CALLS,
        "success_count": ALL_CALLS - errors,
        "error_count": errors,
        "cost_usd": round(modelCalls * CLAUDE_COST_PER_CALL),
      },
      toolCalls,
      domains: [],
      pageThrough: 10,
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

/** Claude Code 2.1.330: a 42-call session, resumed for 2 more calls. */
export const claudeCodeLong: AgentScenario = {
  agent: "claude-code-long",
  npmPackage: "@anthropic-ai/claude-code",
  version: VERSION,
  variants: VARIANTS,
  run,
  expected,
};
