/**
 * The Gemini CLI MCP scenario: `gemini -p` (as in `gemini_cli.ts`) with the
 * harness's stdio MCP server (`_mcp_server.mjs`, server `tickets`) configured
 * in the scratch HOME's `.gemini/settings.json` (`mcpServers.tickets`,
 * `trust: true`). The scripted mock model calls the MCP tool
 * `lookup_ticket`, then `fail_ticket` (a tool error: the server answers
 * `isError: true`), then two built-in tools in one response (parallel
 * `read_file` and `run_shell_command`), then answers with text. The MCP
 * tools are called by whatever name Gemini declares them under in the
 * request's function declarations.
 *
 * `expected()` states the target view: MCP tools named
 * `mcp__tickets__<tool>`, `tool_type` `mcp`, `mcp_server_name` `tickets`,
 * the failed call an error.
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import type {
  AgentScenario,
  ExpectedRun,
  ExpectedToolCall,
  RunContext,
  Variant,
} from "./_scenario.ts";
import {
  AGENT_SYSTEM,
  FAKE_API_KEY,
  geminiSettings,
  MODEL,
  NPM_PACKAGE,
  ok,
  USAGE,
  VERSION,
} from "./gemini_cli.ts";

/** The stdio MCP server, run as `node <absolute path>`. */
const MCP_SERVER = fromFileUrl(new URL("./_mcp_server.mjs", import.meta.url));
/** The MCP server's name in the settings (and its `serverInfo.name`). */
const MCP_SERVER_NAME = "tickets";
/** The file the parallel `read_file` reads: 18 bytes. */
const NOTES = "remember the milk\n";

/**
 * Gemini CLI 0.61.0's `error` for `fail_ticket {"id":"T-7"}`: the server's
 * `isError: true` answer (text `ticket T-7 is locked`), quoted whole.
 */
const FAIL_TICKET_ERROR =
  `MCP tool 'fail_ticket' reported tool error for function call: {"name":"fail_ticket","args":{"id":"T-7"}} with response: [{"functionResponse":{"name":"fail_ticket","response":{"content":[{"type":"text","text":"ticket T-7 is locked"}],"isError":true}}}]`;

/** One function call the mock model asks for; `mcp` tools are named as Gemini declares them. */
interface ScriptedCall {
  tool: string;
  mcp: boolean;
  args: Record<string, unknown>;
}

/**
 * The mock model's answers, chosen by how many function responses the
 * request already carries: 0 → `lookup_ticket`, 1 → `fail_ticket`, 2 → two
 * calls at once, 4 → the final text.
 */
const SCRIPT: ReadonlyMap<number, readonly ScriptedCall[]> = new Map([
  [0, [{ tool: "lookup_ticket", mcp: true, args: { id: "T-42" } }]],
  [1, [{ tool: "fail_ticket", mcp: true, args: { id: "T-7" } }]],
  [2, [
    { tool: "read_file", mcp: false, args: { file_path: "notes.txt" } },
    { tool: "run_shell_command", mcp: false, args: { command: "echo parallel-ok" } },
  ]],
]);
/** Function responses in the request that gets the final text. */
const FINAL_STEP = [...SCRIPT.values()].reduce((n, calls) => n + calls.length, 0);
/** Model requests of one run: one per scripted answer, then the final text. */
const RESPONSES = SCRIPT.size + 1;

/** Gemini CLI 0.61.0 with one stdio MCP server, over OTLP/HTTP (JSON), `logPrompts` on. */
export const geminiCliMcp: AgentScenario = {
  agent: "gemini-cli-mcp",
  npmPackage: NPM_PACKAGE,
  version: VERSION,
  variants: [{ name: "http", env: {} }],
  run: runGeminiMcp,
  expected: expectedRun,
};

/** The user's settings: those of the plain scenario plus the `tickets` MCP server. */
function mcpSettings(endpoint: string): Record<string, unknown> {
  return {
    ...geminiSettings(endpoint, "http"),
    mcpServers: {
      [MCP_SERVER_NAME]: { command: "node", args: [MCP_SERVER], trust: true },
    },
  };
}

async function runGeminiMcp(context: RunContext): Promise<void> {
  if (context.variant.name !== "http") {
    throw new Error(`Unknown Gemini CLI MCP variant: ${JSON.stringify(context.variant.name)}`);
  }
  await using model = await startMockGemini();
  const home = join(context.workDir, "home");
  const project = join(context.workDir, "project");
  for (const dir of [join(home, ".gemini"), project]) await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(join(project, "notes.txt"), NOTES);
  await Deno.writeTextFile(
    join(home, ".gemini", "settings.json"),
    JSON.stringify(mcpSettings(context.otlpHttpUrl), null, 2),
  );

  const gemini = join(context.installDir, "node_modules", ".bin", "gemini");
  const output = await new Deno.Command(gemini, {
    args: [
      "--skip-trust",
      "--model",
      MODEL,
      "--approval-mode",
      "yolo",
      "-p",
      "Run the scripted steps.",
    ],
    cwd: project,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/local/bin:/usr/bin:/bin",
      HOME: home,
      GEMINI_API_KEY: FAKE_API_KEY,
      GOOGLE_GEMINI_BASE_URL: model.url,
      OTEL_EXPORTER_OTLP_HEADERS: `Authorization=${context.authorization}`,
      LANG: "C.UTF-8",
      ...context.variant.env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  const detail = () =>
    [
      `gemini exited ${output.code}`,
      `model requests:\n  ${model.log().join("\n  ")}`,
      `stdout: ${text(output.stdout).slice(-4000)}`,
      `stderr: ${text(output.stderr).slice(-4000)}`,
    ].join("\n");
  if (!output.success) throw new Error(detail());
  if (
    model.answered() !== RESPONSES || model.unexpected().length > 0 || model.problems().length > 0
  ) {
    throw new Error(
      `Gemini CLI made ${model.answered()} scripted model requests (${RESPONSES} scripted), ${
        JSON.stringify(model.unexpected())
      } others, problems ${JSON.stringify(model.problems())}\n${detail()}`,
    );
  }
  // deno-lint-ignore no-console
  if (Deno.env.get("AGENT_HARNESS_VERBOSE") === "1") console.error(detail());
}

/** A running mock model. */
interface MockGemini extends AsyncDisposable {
  url: string;
  /** `streamGenerateContent` requests answered so far. */
  answered(): number;
  /** Other requests the client made (method and path): the script expects none. */
  unexpected(): string[];
  /** What went off script: a request at an unscripted step, an MCP tool not declared. */
  problems(): string[];
  /** One line per model request: its step, declared functions and what it got. */
  log(): string[];
}

interface GeminiPart {
  text?: string;
  functionCall?: { name?: string };
  functionResponse?: { name?: string; response?: unknown };
}

interface GeminiRequest {
  contents?: { role?: string; parts?: GeminiPart[] }[];
  tools?: { functionDeclarations?: { name?: string }[] }[];
}

/**
 * A scripted Gemini API: each `POST …/models/<model>:streamGenerateContent`
 * gets the answer of its step (the number of function responses it carries,
 * so a retried request gets the same answer). An MCP tool is called by the
 * declared function whose name is the tool's or ends with it.
 */
async function startMockGemini(): Promise<MockGemini> {
  let answered = 0;
  const unexpected: string[] = [];
  const problems: string[] = [];
  const log: string[] = [];
  const { promise, resolve } = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: resolve },
    async (request) => {
      const url = new URL(request.url);
      const body = await request.text();
      if (request.method !== "POST" || !url.pathname.endsWith(":streamGenerateContent")) {
        unexpected.push(`${request.method} ${url.pathname}`);
        return Response.json({ error: { code: 404, message: "Not scripted" } }, { status: 404 });
      }
      const parsed = JSON.parse(body) as GeminiRequest;
      const parts = (parsed.contents ?? []).flatMap((c) => c.parts ?? []);
      const responses = parts.filter((p) => p.functionResponse !== undefined);
      const step = responses.length;
      const declared = (parsed.tools ?? []).flatMap((t) => t.functionDeclarations ?? [])
        .map((d) => String(d.name));
      answered++;
      let answer: GeminiPart[];
      const calls = SCRIPT.get(step);
      if (calls !== undefined) {
        answer = calls.map((call) => {
          const name = call.mcp ? declaredName(declared, call.tool) : call.tool;
          if (name === undefined) {
            problems.push(`step ${step}: no declared function for ${call.tool} in ${declared}`);
          }
          return { functionCall: { name: name ?? call.tool, args: call.args } };
        });
      } else {
        if (step !== FINAL_STEP) problems.push(`unscripted step ${step}`);
        answer = [{ text: "All scripted steps are done." }];
      }
      log.push(
        `step ${step}: declared [${declared.join(", ")}]; responses ${
          JSON.stringify(responses.map((p) => p.functionResponse)).slice(0, 1500)
        }; answered ${JSON.stringify(answer)}`,
      );
      return new Response(`data: ${JSON.stringify(responseChunk(step, answer))}\r\n\r\n`, {
        headers: { "content-type": "text/event-stream" },
      });
    },
  );
  const addr = await promise;
  return {
    url: `http://127.0.0.1:${addr.port}`,
    answered: () => answered,
    unexpected: () => unexpected,
    problems: () => problems,
    log: () => log,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** The declared function for MCP tool `tool`: its own name, or one ending in it. */
function declaredName(declared: string[], tool: string): string | undefined {
  return declared.find((name) => name === tool) ??
    declared.find((name) => name.endsWith(`_${tool}`) || name.endsWith(`.${tool}`));
}

/** The one SSE chunk answering step `step`: its parts, the mock's fixed usage. */
function responseChunk(step: number, parts: GeminiPart[]): Record<string, unknown> {
  return {
    candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
    usageMetadata: {
      promptTokenCount: USAGE.prompt,
      cachedContentTokenCount: USAGE.cached,
      candidatesTokenCount: USAGE.candidates,
      thoughtsTokenCount: USAGE.thoughts,
      totalTokenCount: USAGE.prompt + USAGE.candidates + USAGE.thoughts,
    },
    modelVersion: MODEL,
    responseId: `resp_gm_mcp_${String(step).padStart(2, "0")}`,
  };
}

/** An MCP call of the `tickets` server as the API must show it (the target naming). */
function mcpCall(tool: string, fields: Record<string, unknown>, id: string): ExpectedToolCall {
  return {
    fields: {
      ...ok(`mcp__${MCP_SERVER_NAME}__${tool}`, "mcp"),
      "tool_type": "mcp",
      "mcp_server_name": MCP_SERVER_NAME,
      ...fields,
    },
    argumentsContain: [id],
    flags: [],
  };
}

/**
 * The target view of one run: the two MCP calls as `mcp__tickets__<tool>`
 * MCP calls of server `tickets` (the second an error), then the parallel
 * `read_file` and `run_shell_command` as in the plain scenario, and four
 * model calls of the mock's fixed usage. Gemini logs both parallel calls when
 * the batch ends, with the same millisecond timestamp: the target order is
 * the order it sent them in (that of the model's `functionCall` parts).
 */
function expectedRun(_variant: Variant): ExpectedRun {
  return {
    agentSystem: AGENT_SYSTEM,
    sessions: [{
      fields: {
        agent_system: AGENT_SYSTEM,
        agent_version: "",
        model: "",
        tool_call_count: 4,
        success_count: 3,
        error_count: 1,
        cost_usd: 0,
      },
      toolCalls: [
        mcpCall("lookup_ticket", {}, "T-42"),
        mcpCall("fail_ticket", {
          outcome: "error",
          success: false,
          // Gemini's own words for the server's `isError: true` answer.
          error_message: FAIL_TICKET_ERROR,
        }, "T-7"),
        {
          fields: { ...ok("read_file", "file_read"), result_size_bytes: NOTES.length },
          argumentsContain: ["notes.txt"],
          flags: [],
        },
        {
          fields: ok("run_shell_command", "code_exec"),
          argumentsContain: ["echo parallel-ok"],
          flags: [],
        },
      ],
      domains: [],
    }],
    cost: [{
      provider_name: "",
      model: MODEL,
      input_tokens: RESPONSES * (USAGE.prompt - USAGE.cached),
      output_tokens: RESPONSES * (USAGE.candidates + USAGE.thoughts),
      cost_usd: 0,
      call_count: RESPONSES,
    }],
  };
}
