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
import { ClientRuns } from "./_client.ts";
import { GEMINI_PACKAGE, geminiDirs, geminiSettings, NOTES, runGemini } from "./_gemini_client.ts";
import { geminiRun, okCall } from "./_gemini_expected.ts";
import { type GeminiPart, startGeminiMock } from "./_gemini_mock.ts";
import { MCP_SERVER_NAME, MCP_SERVER_PATH, mcpToolName } from "./_mcp.ts";
import type { AgentScenario, ExpectedRun, ExpectedToolCall, RunContext } from "./_scenario.ts";
import { VERSION } from "./gemini_cli.ts";

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
  npmPackage: GEMINI_PACKAGE,
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
      [MCP_SERVER_NAME]: { command: "node", args: [MCP_SERVER_PATH], trust: true },
    },
  };
}

async function runGeminiMcp(context: RunContext): Promise<void> {
  if (context.variant.name !== "http") {
    throw new Error(`Unknown Gemini CLI MCP variant: ${JSON.stringify(context.variant.name)}`);
  }
  await using model = await startGeminiMock(answer, "resp_gm_mcp_");
  const dirs = await geminiDirs(context.workDir, mcpSettings(context.otlpHttpUrl));
  const runs = new ClientRuns(model);
  await runGemini(runs, context, dirs, model, RESPONSES);
  runs.report();
}

/**
 * The answer at `step`: its scripted calls, an MCP tool called by the
 * declared function whose name is the tool's or ends with it; after them,
 * the final text.
 */
function answer(step: number, declared: string[], problems: string[]): GeminiPart[] {
  const calls = SCRIPT.get(step);
  if (calls === undefined) {
    if (step !== FINAL_STEP) problems.push(`unscripted step ${step}`);
    return [{ text: "All scripted steps are done." }];
  }
  return calls.map((call) => {
    const name = call.mcp ? declaredName(declared, call.tool) : call.tool;
    if (name === undefined) {
      problems.push(`step ${step}: no declared function for ${call.tool} in ${declared}`);
    }
    return { functionCall: { name: name ?? call.tool, args: call.args } };
  });
}

/** The declared function for MCP tool `tool`: its own name, or one ending in it. */
function declaredName(declared: string[], tool: string): string | undefined {
  return declared.find((name) => name === tool) ??
    declared.find((name) => name.endsWith(`_${tool}`) || name.endsWith(`.${tool}`));
}

/** An MCP call of the `tickets` server as the API must show it (the target naming). */
function mcpCall(tool: string, fields: Record<string, unknown>, id: string): ExpectedToolCall {
  return {
    fields: {
      ...okCall(mcpToolName(tool), "mcp"),
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
function expectedRun(): ExpectedRun {
  return geminiRun({
    fields: { "tool_call_count": 4, "success_count": 3, "error_count": 1 },
    toolCalls: [
      mcpCall("lookup_ticket", {}, "T-42"),
      mcpCall("fail_ticket", {
        outcome: "error",
        success: false,
        // Gemini's own words for the server's `isError: true` answer.
        "error_message": FAIL_TICKET_ERROR,
      }, "T-7"),
      {
        fields: { ...okCall("read_file", "file_read"), "result_size_bytes": NOTES.length },
        argumentsContain: ["notes.txt"],
        flags: [],
      },
      {
        fields: okCall("run_shell_command", "code_exec"),
        argumentsContain: ["echo parallel-ok"],
        flags: [],
      },
    ],
    domains: [],
  }, RESPONSES);
}
