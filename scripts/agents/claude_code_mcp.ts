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
import {
  CLAUDE_PACKAGE,
  claudeDirs,
  JSON_AND_TRACES_VARIANTS,
  runClaude,
} from "./_claude_client.ts";
import { ACCEPTED, ClaudeView, OK, SHELL_FAILED } from "./_claude_expected.ts";
import { bash, type ClaudeScript, type ScriptedCall, startClaudeMock } from "./_claude_mock.ts";
import { ClientRuns } from "./_client.ts";
import { MCP_SERVER_NAME, MCP_SERVER_PATH } from "./_mcp.ts";
import { REJECTED } from "./_scenario.ts";
import type { AgentScenario, ExpectedRun, RunContext, Variant } from "./_scenario.ts";

/** The prompt of `claude -p`: marks the main conversation. */
const MAIN_PROMPT = "Run the MCP harness scenario.";
/** The subagent's prompt: marks its conversation. */
const SUBAGENT_PROMPT = "Harness subagent: list /nonexistent-harness-dir and report.";
/** The subagent tool's names across releases (the first one the client offers is used). */
const SUBAGENT_TOOLS = ["Agent", "Task"];

const FINAL_TEXT = "MCP harness scenario done.";
const SUBAGENT_TEXT = "The directory does not exist.";

/**
 * One assistant turn: its tool calls (several run in parallel). A call named
 * `subagent` is sent as the client's Agent/Task tool.
 */
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
const ECHO = bash("toolu_01ParallelBashEcho004", "echo parallel-ok", "Print a marker");
const SUBAGENT: ScriptedCall = {
  id: "toolu_01SubagentTaskCall0005",
  name: "subagent",
  input: () => ({
    description: "List a missing directory",
    prompt: SUBAGENT_PROMPT,
    "subagent_type": "general-purpose",
  }),
};
const DEPLOY = bash("toolu_01HookBlockedDeploy006", "./deploy.sh", "Deploy");
/** The subagent's one call. */
const LS = bash("toolu_01SubagentLsMissing007", "ls /nonexistent-harness-dir", "List a directory");

/** The main conversation's turns, then {@link FINAL_TEXT}. */
const MAIN_SCRIPT: Turn[] = [[LOOKUP], [FAIL], [READ, ECHO], [SUBAGENT], [DEPLOY]];
/** The subagent conversation's turns, then {@link SUBAGENT_TEXT}. */
const SUBAGENT_SCRIPT: Turn[] = [[LS]];

/** The first turn whose calls are not all in the conversation yet (`script.length`: the answer). */
function nextTurn(script: Turn[], toolUseIds: Set<string>): number {
  const step = script.findIndex((turn) => !turn.every((call) => toolUseIds.has(call.id)));
  return step === -1 ? script.length : step;
}

/**
 * The main conversation starts with {@link MAIN_PROMPT}, the subagent's with
 * {@link SUBAGENT_PROMPT}; any other request (a side query) gets the closing
 * text. The scripted `subagent` call is sent as the tool the client offers.
 */
function scriptedAnswers(): ClaudeScript {
  let loggedTools = false;
  return ({ body, userTexts, toolUseIds }) => {
    const first = userTexts[0] ?? "";
    const tools = (body.tools ?? []).map((t) => t.name);
    const conversation = tools.length === 0
      ? "side"
      : first.includes(SUBAGENT_PROMPT)
      ? "subagent"
      : first.includes(MAIN_PROMPT)
      ? "main"
      : "side";
    const script = conversation === "main"
      ? MAIN_SCRIPT
      : conversation === "subagent"
      ? SUBAGENT_SCRIPT
      : [];
    const step = nextTurn(script, toolUseIds);
    const subagentName = SUBAGENT_TOOLS.find((name) => tools.includes(name)) ?? "Task";
    const agentTool = body.tools?.find((t) => t.name === subagentName);
    // Recent releases start agents in the background unless told otherwise.
    const inBackground = JSON.stringify(agentTool?.input_schema ?? {}).includes(
      '"run_in_background"',
    );
    const calls = (script[step] ?? []).map((call): ScriptedCall =>
      call.name !== "subagent" ? call : {
        id: call.id,
        name: subagentName,
        input: inBackground
          ? (project) => ({ ...call.input(project), "run_in_background": false })
          : call.input,
      }
    );
    const notes: string[] = [];
    if (conversation === "main" && !loggedTools) {
      loggedTools = true;
      notes.push(
        `  tools: ${tools.join(", ")}`,
        `  ${subagentName} schema: ${JSON.stringify(agentTool?.input_schema)}`,
      );
    }
    return {
      conversation,
      note: `step=${step}`,
      messageId: `msg_harness_${conversation}_${String(step).padStart(2, "0")}`,
      calls,
      text: conversation === "subagent" ? SUBAGENT_TEXT : FINAL_TEXT,
      sideText: FINAL_TEXT,
      notes,
    };
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

async function run(context: RunContext): Promise<void> {
  const hookPath = join(context.workDir, "home", ".claude", "hooks", "block_deploy.mjs");
  const dirs = await claudeDirs(context.workDir, settings(hookPath));
  await Deno.mkdir(join(dirs.home, ".claude", "hooks"));
  await Deno.writeTextFile(hookPath, HOOK_SCRIPT);
  const mcpConfig = join(context.workDir, "mcp.json");
  await Deno.writeTextFile(
    mcpConfig,
    JSON.stringify({
      mcpServers: {
        [MCP_SERVER_NAME]: { type: "stdio", command: "node", args: [MCP_SERVER_PATH] },
      },
    }),
  );
  await Deno.writeTextFile(join(dirs.project, "notes.txt"), "harness notes\n");
  await Deno.writeTextFile(join(dirs.project, "deploy.sh"), "#!/bin/sh\necho deployed\n", {
    mode: 0o755,
  });
  await using model = await startClaudeMock(dirs.project, scriptedAnswers());
  const runs = new ClientRuns(model);
  await runClaude(runs, context, { ...dirs, modelUrl: model.url }, MAIN_PROMPT, FINAL_TEXT, [
    "--mcp-config",
    mcpConfig,
  ]);
  runs.report();
}

/** What the API must show for one run of `version` (the target mapping, see the module doc). */
function expected(variant: Variant, version: string): ExpectedRun {
  const view = new ClaudeView(variant, version);
  // A subagent's calls name it by its id (made up per run); the main agent's name none.
  const call = (fields: Record<string, unknown>, inArguments: string) =>
    view.call({ "agent_name": null, ...fields }, {
      argumentsContain: [inArguments],
      flags: [],
    });
  const subagentCall = (fields: Record<string, unknown>, inArguments: string) => {
    const expected = view.call(fields, { argumentsContain: [inArguments], flags: [] });
    return { ...expected, present: [...expected.present ?? [], "agent_name"] };
  };
  // `mcp_server_scope` is `dynamic` for a server given with `--mcp-config`.
  const mcp = (scripted: ScriptedCall) => ({
    "tool_name": scripted.name,
    "tool_type": "mcp",
    category: "mcp",
    "tool_use_id": scripted.id,
    "mcp_server_name": MCP_SERVER_NAME,
    "mcp_server_scope": "dynamic",
  });
  const builtin = (scripted: ScriptedCall, category: string) => ({
    "tool_name": scripted.name,
    "tool_type": "builtin",
    category,
    "tool_use_id": scripted.id,
  });
  const toolCalls = [
    call({ ...OK, ...mcp(LOOKUP) }, "T-42"),
    call({
      outcome: "error",
      success: false,
      ...ACCEPTED,
      ...mcp(FAIL),
      "error_message": "ticket T-7 is locked",
      "error_type": "McpToolCallError",
    }, "T-7"),
    call({ ...OK, ...builtin(READ, "file_read") }, "notes.txt"),
    call(
      { ...OK, ...builtin(ECHO, "code_exec"), "result_size_bytes": "parallel-ok".length },
      "echo parallel-ok",
    ),
    // The subagent's call ends before the subagent tool's own result.
    subagentCall(
      { ...SHELL_FAILED, ...ACCEPTED, ...builtin(LS, "code_exec") },
      "ls /nonexistent-harness-dir",
    ),
    // The subagent tool (`Agent` in 2.1.330 and 2.1.332) needs no permission: accept / `config`.
    call(
      { ...OK, "decision_source": "config", ...builtin(SUBAGENT, "other"), "tool_name": "Agent" },
      "general-purpose",
    ),
    // The PreToolUse hook blocks it: a `tool_decision` reject / `hook` and no `tool_result`.
    call(
      { ...REJECTED, "decision_source": "hook", ...builtin(DEPLOY, "code_exec") },
      "./deploy.sh",
    ),
  ];
  return view.run({ toolCalls, domains: [] }, {
    successes: 4,
    errors: 2,
    // Main: one request per turn and the answer; subagent: one per turn and its answer.
    modelCalls: MAIN_SCRIPT.length + 1 + SUBAGENT_SCRIPT.length + 1,
  });
}

/** Claude Code `version` with MCP tools, parallel calls, a subagent and a hook. */
export function claudeCodeMcpAt(version: string): AgentScenario {
  return {
    agent: "claude-code-mcp",
    npmPackage: CLAUDE_PACKAGE,
    version,
    variants: JSON_AND_TRACES_VARIANTS,
    run,
    expected: (variant) => expected(variant, version),
  };
}

/** At the pinned version. */
export const claudeCodeMcp = claudeCodeMcpAt("2.1.330");
