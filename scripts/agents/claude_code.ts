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
import { ALL_VARIANTS, CLAUDE_PACKAGE, claudeDirs, runClaude } from "./_claude_client.ts";
import { ACCEPTED, ClaudeView, OK, SHELL_FAILED } from "./_claude_expected.ts";
import { bash, type ClaudeScript, type ScriptedCall, startClaudeMock } from "./_claude_mock.ts";
import { ClientRuns } from "./_client.ts";
import { REJECTED } from "./_scenario.ts";
import type { AgentScenario, ExpectedRun, RunContext, Variant } from "./_scenario.ts";

const VERSION = "2.1.330";

/** A made-up GitHub token (36 characters after `ghp_`): must be flagged and redacted. */
const FAKE_GITHUB_TOKEN = "ghp_R8mK2xQv9LpT4nWz7YcH3bJd6FsA1gUe5NtX";
/** The offline endpoint: no DNS in the namespace, curl exits 6. */
const OFFLINE_URL = "https://api.example.com/v1/status";

/** The tool calls the mock model asks for, one per turn, in order. */
const SCRIPT: ScriptedCall[] = [
  bash("toolu_01HarnessShellOk0000001", "echo harness-shell-ok", "Print a marker"),
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
  bash(
    "toolu_01HarnessSecret0000004",
    `export GITHUB_TOKEN=${FAKE_GITHUB_TOKEN} && echo token-set`,
    "Set a token",
  ),
  bash("toolu_01HarnessCurlFail00005", `curl -sS ${OFFLINE_URL}`, "Fetch status"),
  bash("toolu_01HarnessRmRfDenied006", "rm -rf ./build", "Remove build output"),
];

const PROMPT = "Run the harness scenario.";
const FINAL_TEXT = "Harness scenario done.";

/**
 * The turn is the number of assistant messages already in the conversation;
 * requests without tools (side queries) get the closing text.
 */
const answer: ClaudeScript = ({ body }) => {
  const main = (body.tools?.length ?? 0) > 0;
  const step = main ? body.messages.filter((m) => m.role === "assistant").length : SCRIPT.length;
  const call = SCRIPT[step];
  return {
    conversation: main ? "main" : "side",
    note: `step=${step}`,
    messageId: `msg_harness_${String(step).padStart(2, "0")}`,
    calls: call ? [call] : [],
    text: FINAL_TEXT,
  };
};

/** Permissions: everything the script uses is allowed except `rm -rf`, denied by a rule. */
const SETTINGS = {
  permissions: {
    allow: ["Bash", "Read", "Write"],
    deny: ["Bash(rm -rf:*)"],
  },
};

async function run(context: RunContext): Promise<void> {
  const dirs = await claudeDirs(context.workDir, SETTINGS);
  await Deno.mkdir(join(dirs.project, "build"));
  await Deno.writeTextFile(join(dirs.project, "notes.txt"), "harness notes\n");
  await using model = await startClaudeMock(dirs.project, answer);
  const runs = new ClientRuns(model);
  await runClaude(runs, context, { ...dirs, modelUrl: model.url }, PROMPT, FINAL_TEXT);
  runs.report();
}

/** What the API must show for one run. */
function expected(variant: Variant): ExpectedRun {
  const view = new ClaudeView(variant, VERSION);
  const scriptedCall = (step: number, fields: Record<string, unknown>) => ({
    ...fields,
    "tool_name": SCRIPT[step]!.name,
    "tool_use_id": SCRIPT[step]!.id,
  });
  const builtin = (step: number, category: string) =>
    scriptedCall(step, { ...OK, "tool_type": "builtin", category });
  const toolCalls = [
    view.call({ ...builtin(0, "code_exec"), "result_size_bytes": "harness-shell-ok".length }, {
      argumentsContain: ["echo harness-shell-ok"],
      flags: [],
    }),
    view.call(builtin(1, "file_read"), { argumentsContain: ["notes.txt"], flags: [] }),
    view.call(builtin(2, "file_write"), { argumentsContain: ["out.txt"], flags: [] }),
    view.call(builtin(3, "code_exec"), {
      argumentsContain: ["export GITHUB_TOKEN=", "[REDACTED:"],
      absent: [FAKE_GITHUB_TOKEN, FAKE_GITHUB_TOKEN.slice(4)],
      flags: ["credential_detected"],
    }),
    view.call(scriptedCall(4, { ...SHELL_FAILED, ...ACCEPTED, category: "code_exec" }), {
      argumentsContain: [OFFLINE_URL],
      flags: [],
    }),
    view.call(
      scriptedCall(5, { ...REJECTED, "decision_source": "config", category: "code_exec" }),
      {
        argumentsContain: ["rm -rf ./build"],
        flags: ["destructive_operation"],
      },
    ),
  ];
  return view.run({ toolCalls, domains: ["api.example.com"] }, {
    successes: 4,
    errors: 1,
    modelCalls: SCRIPT.length + 1,
  });
}

/** Claude Code 2.1.330 and its scripted run. */
export const claudeCode: AgentScenario = {
  agent: "claude-code",
  npmPackage: CLAUDE_PACKAGE,
  version: VERSION,
  variants: ALL_VARIANTS,
  run,
  expected,
};
