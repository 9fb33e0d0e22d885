/**
 * Claude Code (`@anthropic-ai/claude-code`) with an MCP server, parallel tool
 * calls, a subagent and a PreToolUse hook, driven by a scripted Anthropic
 * Messages API on loopback. `claude -p` runs, in order:
 *
 * 1. the MCP tool `mcp__tickets__lookup_ticket` `{"id":"T-42"}` of the stdio
 *    server `_mcp_server.mjs` (given with `--mcp-config`);
 * 2. `mcp__tickets__fail_ticket` `{"id":"T-7"}`, an MCP tool error;
 * 3. Read `notes.txt` and Bash `echo parallel-ok` in one assistant turn;
 * 4. the subagent tool (`Agent`/`Task`, general-purpose, in the foreground:
 *    `run_in_background: false` where the tool takes it), whose own
 *    conversation runs Bash `ls /nonexistent-harness-dir` (fails) and answers;
 * 5. Bash `./deploy.sh`, which a PreToolUse hook in settings.json blocks
 *    (exit 2, reason on stderr);
 *
 * then answers in text. The mock tells the two conversations apart by their
 * first user message (the prompt of `-p`, or the subagent's prompt) and picks
 * the turn by the scripted tool call ids already in the conversation. Every
 * response carries the same fixed token usage, so tokens and cost are known.
 *
 * Registered at the pinned version and at the newer one it was also recorded
 * with ({@link claudeCodeMcpAt}), so the suite replays both releases.
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
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

/** The stdio MCP server (`tickets`), run with `node`. */
const MCP_SERVER = fileURLToPath(new URL("./_mcp_server.mjs", import.meta.url));

/** The prompt of `claude -p`: marks the main conversation. */
const MAIN_PROMPT = "Run the MCP harness scenario.";
/** The subagent's prompt: marks its conversation. */
const SUBAGENT_PROMPT = "Harness subagent: list /nonexistent-harness-dir and report.";
/** The subagent tool's names across releases (the first one the client offers is used). */
const SUBAGENT_TOOLS = ["Agent", "Task"];

const FINAL_TEXT = "MCP harness scenario done.";
const SUBAGENT_TEXT = "The directory does not exist.";

interface ScriptedCall {
  id: string;
  /** The tool's name; `subagent` is the client's Agent/Task tool. */
  name: string;
  input: (project: string) => Record<string, unknown>;
}

/** One assistant turn: its tool calls (several run in parallel). */
type Turn = ScriptedCall[];

const LOOKUP: ScriptedCall = {
  id: "toolu_01McpLookupTicket00001",
  name: "mcp__tickets__lookup_ticket",
  input: () => ({ id: "T-42" }),
};
const FAIL: ScriptedCall = {
  id: "toolu_01McpFailTicket000002",
  name: "mcp__tickets__fail_ticket",
  input: () => ({ id: "T-7" }),
};
const READ: ScriptedCall = {
  id: "toolu_01ParallelReadNotes003",
  name: "Read",
  input: (project) => ({ "file_path": join(project, "notes.txt") }),
};
const ECHO: ScriptedCall = {
  id: "toolu_01ParallelBashEcho004",
  name: "Bash",
  input: () => ({ command: "echo parallel-ok", description: "Print a marker" }),
};
const SUBAGENT: ScriptedCall = {
  id: "toolu_01SubagentTaskCall0005",
  name: "subagent",
  input: () => ({
    description: "List a missing directory",
    prompt: SUBAGENT_PROMPT,
    "subagent_type": "general-purpose",
  }),
};
const DEPLOY: ScriptedCall = {
  id: "toolu_01HookBlockedDeploy006",
  name: "Bash",
  input: () => ({ command: "./deploy.sh", description: "Deploy" }),
};
/** The subagent's one call. */
const LS: ScriptedCall = {
  id: "toolu_01SubagentLsMissing007",
  name: "Bash",
  input: () => ({ command: "ls /nonexistent-harness-dir", description: "List a directory" }),
};

/** The main conversation's turns, then {@link FINAL_TEXT}. */
const MAIN_SCRIPT: Turn[] = [[LOOKUP], [FAIL], [READ, ECHO], [SUBAGENT], [DEPLOY]];
/** The subagent conversation's turns, then {@link SUBAGENT_TEXT}. */
const SUBAGENT_SCRIPT: Turn[] = [[LS]];

interface Block {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  "tool_use_id"?: string;
  content?: string | Block[];
  "is_error"?: boolean;
}

export interface Message {
  role: string;
  content: string | Block[];
}

export interface MessagesRequest {
  model: string;
  stream?: boolean;
  tools?: { name: string; "input_schema"?: unknown }[];
  messages: Message[];
}

export function messageText(message: Message | undefined): string {
  if (message === undefined) return "";
  if (typeof message.content === "string") return message.content;
  return message.content.map((block) => block.text ?? "").join("\n");
}

/** The tool_use ids the assistant already sent in this conversation. */
export function toolUseIds(messages: Message[]): Set<string> {
  const ids = new Set<string>();
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue;
    for (const block of message.content) {
      if (block.type === "tool_use" && block.id !== undefined) ids.add(block.id);
    }
  }
  return ids;
}

/** The tool results of the conversation's last message, one line each, for diagnosis. */
export function lastToolResults(messages: Message[]): string[] {
  const last = messages.at(-1);
  if (last === undefined || typeof last.content === "string") return [];
  return last.content.filter((block) => block.type === "tool_result").map((block) => {
    const content = typeof block.content === "string"
      ? block.content
      : (block.content ?? []).map((part) => part.text ?? `[${part.type}]`).join(" ");
    return `  result ${block.tool_use_id}${block.is_error ? " (error)" : ""}: ${
      content.slice(0, 300).replaceAll("\n", "\\n")
    }`;
  });
}

/** The first turn whose calls are not all in the conversation yet (`script.length`: the answer). */
function nextTurn(script: Turn[], messages: Message[]): number {
  const ids = toolUseIds(messages);
  const step = script.findIndex((turn) => !turn.every((call) => ids.has(call.id)));
  return step === -1 ? script.length : step;
}

/** The client's subagent tool: its name, and whether it takes `run_in_background`. */
interface SubagentTool {
  name: string;
  hasBackgroundOption: boolean;
}

/** The streamed answer for one turn: its tool calls, or `text`. */
function streamedTurn(
  label: string,
  turn: Turn | undefined,
  text: string,
  project: string,
  model: string,
  subagent: SubagentTool,
): string {
  const message = {
    id: `msg_harness_${label}`,
    type: "message",
    role: "assistant",
    model,
    content: [],
    "stop_reason": null,
    "stop_sequence": null,
    usage: { ...CLAUDE_USAGE, "output_tokens": 1 },
  };
  const events: [string, unknown][] = [["message_start", { type: "message_start", message }]];
  const blocks = turn ?? [];
  if (blocks.length > 0) {
    for (const [index, call] of blocks.entries()) {
      const isSubagent = call.name === "subagent";
      const name = isSubagent ? subagent.name : call.name;
      // Recent releases start agents in the background unless told otherwise.
      const input = isSubagent && subagent.hasBackgroundOption
        ? { ...call.input(project), "run_in_background": false }
        : call.input(project);
      events.push(
        ["content_block_start", {
          type: "content_block_start",
          index,
          "content_block": { type: "tool_use", id: call.id, name, input: {} },
        }],
        ["content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", "partial_json": JSON.stringify(input) },
        }],
        ["content_block_stop", { type: "content_block_stop", index }],
      );
    }
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
        delta: { type: "text_delta", text },
      }],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
    );
  }
  events.push(
    ["message_delta", {
      type: "message_delta",
      delta: { "stop_reason": blocks.length > 0 ? "tool_use" : "end_turn", "stop_sequence": null },
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
  /** Requests answered per conversation: `main`, `subagent`, `side`. */
  counts: Record<string, number>;
}

/**
 * The scripted Messages API. The main conversation starts with
 * {@link MAIN_PROMPT}, the subagent's with {@link SUBAGENT_PROMPT}; any other
 * request (a side query) gets a plain text answer with the same usage.
 */
async function startMockModel(project: string): Promise<MockModel> {
  const log: string[] = [];
  const counts: Record<string, number> = { main: 0, subagent: 0, side: 0 };
  let served = 0;
  let loggedTools = false;
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
      const tools = (body.tools ?? []).map((t) => t.name);
      const conversation = tools.length === 0
        ? "side"
        : first.includes(SUBAGENT_PROMPT)
        ? "subagent"
        : first.includes(MAIN_PROMPT)
        ? "main"
        : "side";
      counts[conversation] = (counts[conversation] ?? 0) + 1;
      const script = conversation === "main"
        ? MAIN_SCRIPT
        : conversation === "subagent"
        ? SUBAGENT_SCRIPT
        : [];
      const step = nextTurn(script, body.messages);
      const subagentName = SUBAGENT_TOOLS.find((name) => tools.includes(name)) ?? "Task";
      const agentTool = body.tools?.find((t) => t.name === subagentName);
      const subagent: SubagentTool = {
        name: subagentName,
        hasBackgroundOption: JSON.stringify(agentTool?.input_schema ?? {}).includes(
          '"run_in_background"',
        ),
      };
      log.push(
        `POST /v1/messages ${requestId} ${conversation} model=${body.model} stream=${
          body.stream ?? false
        } tools=${tools.length} messages=${body.messages.length} step=${step}`,
      );
      log.push(...lastToolResults(body.messages));
      if (conversation === "main" && !loggedTools) {
        loggedTools = true;
        log.push(`  tools: ${tools.join(", ")}`);
        log.push(`  ${subagentName} schema: ${JSON.stringify(agentTool?.input_schema)}`);
      }
      const headers = { "request-id": requestId };
      const text = conversation === "subagent" ? SUBAGENT_TEXT : FINAL_TEXT;
      if (body.stream) {
        const label = `${conversation}_${String(step).padStart(2, "0")}`;
        return new Response(
          streamedTurn(label, script[step], text, project, body.model, subagent),
          { headers: { ...headers, "content-type": "text/event-stream" } },
        );
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
    counts,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** The PreToolUse hook: exit 2 (block, stderr to the model) when a Bash command deploys. */
const HOOK_SCRIPT = `let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  let command = "";
  try {
    command = String(JSON.parse(input).tool_input?.command ?? "");
  } catch {
    process.exit(0);
  }
  if (command.includes("deploy")) {
    process.stderr.write("Blocked by harness hook: deploys are not allowed\\n");
    process.exit(2);
  }
  process.exit(0);
});
`;

/** Settings: the tools allowed, the MCP tools by name, and the hook. */
function settings(hookPath: string) {
  return {
    permissions: {
      allow: ["Bash", "Read", "mcp__tickets__lookup_ticket", "mcp__tickets__fail_ticket"],
    },
    hooks: {
      PreToolUse: [{
        matcher: "Bash",
        hooks: [{ type: "command", command: `node ${hookPath}` }],
      }],
    },
  };
}

const PROTOBUF = { OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" };

/** The variants: JSON logs and metrics, and protobuf with the beta traces on. */
const VARIANTS: Variant[] = [
  { name: "http-json", env: { OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" } },
  { name: "http-protobuf-traces", env: { ...PROTOBUF, ...TRACES } },
];

async function run(context: RunContext): Promise<void> {
  const home = join(context.workDir, "home");
  const project = join(context.workDir, "project");
  await Deno.mkdir(join(home, ".claude", "hooks"), { recursive: true });
  await Deno.mkdir(project, { recursive: true });
  const hookPath = join(home, ".claude", "hooks", "block_deploy.mjs");
  await Deno.writeTextFile(hookPath, HOOK_SCRIPT);
  await Deno.writeTextFile(
    join(home, ".claude", "settings.json"),
    JSON.stringify(settings(hookPath)),
  );
  const mcpConfig = join(context.workDir, "mcp.json");
  await Deno.writeTextFile(
    mcpConfig,
    JSON.stringify({
      mcpServers: { tickets: { type: "stdio", command: "node", args: [MCP_SERVER] } },
    }),
  );
  await Deno.writeTextFile(join(project, "notes.txt"), "harness notes\n");
  await Deno.writeTextFile(join(project, "deploy.sh"), "#!/bin/sh\necho deployed\n", {
    mode: 0o755,
  });
  await using model = await startMockModel(project);
  const output = await new Deno.Command(
    join(context.installDir, "node_modules", ".bin", "claude"),
    {
      args: [
        "-p",
        MAIN_PROMPT,
        "--model",
        CLAUDE_MODEL,
        "--output-format",
        "json",
        "--mcp-config",
        mcpConfig,
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
  const stdout = decoder.decode(output.stdout);
  const finished = stdout.includes(FINAL_TEXT);
  if (!output.success || !finished || Deno.env.get("AGENT_HARNESS_VERBOSE") === "1") {
    const detail = [
      `claude exited ${output.code}`,
      `model requests (${JSON.stringify(model.counts)}):\n  ${model.log.join("\n  ")}`,
      `stdout: ${stdout.slice(0, 4000)}`,
      `stderr: ${decoder.decode(output.stderr).slice(0, 4000)}`,
    ].join("\n");
    if (!output.success || !finished) throw new Error(detail);
    // deno-lint-ignore no-console
    console.error(detail);
  }
}

/** What the API must show for one run of `version` (the target mapping, see the module doc). */
function expected(variant: Variant, version: string): ExpectedRun {
  const traced = variant.env.OTEL_TRACES_EXPORTER === "otlp";
  // A subagent's calls name it by its id (made up per run); the main agent's name none.
  const call = (
    fields: Record<string, unknown>,
    more: Omit<ExpectedToolCall, "fields"> = {},
    subagent = false,
  ): ExpectedToolCall => ({
    fields: {
      "agent_system": "claude-code",
      "agent_version": version,
      "os_type": "linux",
      ...(traced ? {} : { "trace_id": null, "span_id": null }),
      ...(subagent ? {} : { "agent_name": null }),
      ...fields,
    },
    present: [...(traced ? ["trace_id", "span_id"] : []), ...(subagent ? ["agent_name"] : [])],
    ...more,
  });
  const accepted = { decision: "accept", "decision_source": "user_permanent" };
  const ok = { outcome: "ok", success: true, ...accepted };
  // `mcp_server_scope` is `dynamic` for a server given with `--mcp-config`.
  const mcp = {
    "tool_type": "mcp",
    category: "mcp",
    "mcp_server_name": "tickets",
    "mcp_server_scope": "dynamic",
  };
  const toolCalls: ExpectedToolCall[] = [
    call({
      ...ok,
      ...mcp,
      "tool_name": LOOKUP.name,
      "tool_use_id": LOOKUP.id,
    }, { argumentsContain: ["T-42"], flags: [] }),
    call({
      outcome: "error",
      success: false,
      ...accepted,
      ...mcp,
      "tool_name": FAIL.name,
      "tool_use_id": FAIL.id,
      "error_message": "ticket T-7 is locked",
      "error_type": "McpToolCallError",
    }, { argumentsContain: ["T-7"], flags: [] }),
    call({
      ...ok,
      "tool_name": "Read",
      "tool_type": "builtin",
      category: "file_read",
      "tool_use_id": READ.id,
    }, { argumentsContain: ["notes.txt"], flags: [] }),
    call({
      ...ok,
      "tool_name": "Bash",
      "tool_type": "builtin",
      category: "code_exec",
      "tool_use_id": ECHO.id,
      "result_size_bytes": "parallel-ok".length,
    }, { argumentsContain: ["echo parallel-ok"], flags: [] }),
    // The subagent's call ends before the subagent tool's own result.
    call(
      {
        outcome: "error",
        success: false,
        ...accepted,
        "tool_name": "Bash",
        "tool_type": "builtin",
        category: "code_exec",
        "tool_use_id": LS.id,
        "error_message": "Shell command failed",
        "error_type": "ShellError",
      },
      { argumentsContain: ["ls /nonexistent-harness-dir"], flags: [] },
      true,
    ),
    // The subagent tool (`Agent` in 2.1.330 and 2.1.332) needs no permission: accept / `config`.
    call({
      outcome: "ok",
      success: true,
      decision: "accept",
      "decision_source": "config",
      "tool_name": "Agent",
      "tool_type": "builtin",
      category: "other",
      "tool_use_id": SUBAGENT.id,
    }, { argumentsContain: ["general-purpose"], flags: [] }),
    // The PreToolUse hook blocks it: a `tool_decision` reject / `hook` and no `tool_result`.
    call({
      outcome: "rejected",
      success: null,
      "duration_ms": null,
      "result_size_bytes": null,
      decision: "reject",
      "decision_source": "hook",
      "tool_name": "Bash",
      "tool_type": "builtin",
      category: "code_exec",
      "tool_use_id": DEPLOY.id,
    }, { argumentsContain: ["./deploy.sh"], flags: [] }),
  ];
  // Main: one request per turn and the answer; subagent: one per turn and its answer.
  const modelCalls = MAIN_SCRIPT.length + 1 + SUBAGENT_SCRIPT.length + 1;
  return {
    agentSystem: "claude-code",
    sessions: [{
      fields: {
        "agent_system": "claude-code",
        "agent_version": version,
        "tool_call_count": toolCalls.length,
        "success_count": 4,
        "error_count": 2,
        "cost_usd": round(modelCalls * CLAUDE_COST_PER_CALL),
      },
      toolCalls,
      domains: [],
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

/** Claude Code `version` with MCP tools, parallel calls, a subagent and a hook. */
export function claudeCodeMcpAt(version: string): AgentScenario {
  return {
    agent: "claude-code-mcp",
    npmPackage: "@anthropic-ai/claude-code",
    version,
    variants: VARIANTS,
    run,
    expected: (variant) => expected(variant, version),
  };
}

/** At the pinned version. */
export const claudeCodeMcp = claudeCodeMcpAt("2.1.330");
