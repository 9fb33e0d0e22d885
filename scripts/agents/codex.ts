/**
 * The Codex CLI scenario: `codex exec` driven by a scripted mock of the
 * OpenAI Responses API on loopback (a custom model provider with a made-up
 * key in a scratch `CODEX_HOME`), its OTLP log exporter configured in
 * `config.toml` `[otel]`, and an exec-policy rule that forbids `git push`.
 *
 * @module
 */
import { join } from "node:path";
import { ClientRuns } from "./_client.ts";
import {
  CODEX_MODEL,
  CODEX_PACKAGE,
  CODEX_VARIANTS,
  prepareCodex,
  runCodex,
} from "./_codex_client.ts";
import { approvedCall, codexCallFields, codexRun } from "./_codex_expected.ts";
import { assistantMessage, CODEX_USAGE, type CodexScript, startCodexMock } from "./_codex_mock.ts";
import { REJECTED } from "./_scenario.ts";
import type { AgentScenario, ExpectedRun, RunContext, Variant } from "./_scenario.ts";

const VERSION = "0.169.0";

/** A made-up GitHub token: `ghp_` and 36 characters. Never a real credential. */
const FAKE_GITHUB_TOKEN = "ghp_" + "Zq8Lm3Vt7Rw2Nx5Kb9Hd4Fj6Gs1Pc0Ya8Ue3";

const PATCH = [
  "*** Begin Patch",
  "*** Add File: hello.txt",
  "+hello from the mock model",
  "*** End Patch",
  "",
].join("\n");

/** One tool call the mock model asks for, in order. */
interface ScriptedCall {
  callId: string;
  tool: "exec_command" | "apply_patch";
  /** `exec_command`'s JSON arguments, or `apply_patch`'s raw patch text. */
  input: Record<string, unknown> | string;
}

/** What the mock model makes Codex do, one call per model turn. */
const SCRIPT: readonly ScriptedCall[] = [
  { callId: "call_cx_01_echo", tool: "exec_command", input: { cmd: "echo hello from codex" } },
  { callId: "call_cx_02_read", tool: "exec_command", input: { cmd: "cat notes.txt" } },
  { callId: "call_cx_03_patch", tool: "apply_patch", input: PATCH },
  {
    callId: "call_cx_04_secret",
    tool: "exec_command",
    input: { cmd: `export GITHUB_TOKEN=${FAKE_GITHUB_TOKEN} && echo token set` },
  },
  {
    callId: "call_cx_05_curl",
    tool: "exec_command",
    input: { cmd: "curl -sS https://api.example.com/v1/status" },
  },
  { callId: "call_cx_06_rm", tool: "exec_command", input: { cmd: "rm -rf build" } },
  {
    callId: "call_cx_07_push",
    tool: "exec_command",
    input: { cmd: "git push --force origin main" },
  },
];

/** One response per scripted call, then the final answer. */
const RESPONSES = SCRIPT.length + 1;

/** What the mock model makes one run do, for tests that check what Codex reported of it. */
export const codexScript = {
  model: CODEX_MODEL,
  calls: SCRIPT,
  usage: CODEX_USAGE,
  /** Model requests in the run's one turn. */
  responses: RESPONSES,
} as const;

/** Codex CLI 0.169.0 over OTLP/HTTP logs, protobuf and JSON. */
export const codexScenario: AgentScenario = {
  agent: "codex",
  npmPackage: CODEX_PACKAGE,
  version: VERSION,
  variants: CODEX_VARIANTS,
  run: runCodexScript,
  expected: expectedRun,
};

async function runCodexScript(context: RunContext): Promise<void> {
  await using model = await startCodexMock(answer);
  const dirs = await prepareCodex(context, model.url);
  await Deno.mkdir(join(dirs.codexHome, "rules"));
  await Deno.writeTextFile(join(dirs.codexHome, "rules", "default.rules"), EXEC_POLICY);
  await Deno.writeTextFile(join(dirs.project, "notes.txt"), "remember the milk\n");
  const runs = new ClientRuns(model);
  await runCodex(runs, context, dirs, ["Run the scripted steps."], { ephemeral: true });
  if (model.answered() !== RESPONSES) {
    throw runs.failure(`Codex made ${model.answered()} model requests, ${RESPONSES} scripted`);
  }
  runs.report();
}

/**
 * The exec policy: `git push` is forbidden; `rm` needs an approval, which
 * `codex exec` (approval policy `never`) cannot ask for, so it is refused too.
 */
const EXEC_POLICY = `prefix_rule(
    pattern = ["git", "push"],
    decision = "forbidden",
    justification = "Agents never push",
)
prefix_rule(pattern = ["rm"], decision = "prompt")
`;

/**
 * Each request gets the next step, chosen by how many tool outputs it already
 * carries (so a retried request gets the same answer).
 */
const answer: CodexScript = ({ input }) => {
  const step =
    input.filter((item) =>
      item.type === "function_call_output" || item.type === "custom_tool_call_output"
    ).length;
  const id = `resp_cx_${String(step).padStart(2, "0")}`;
  const call = SCRIPT[step];
  if (call === undefined) {
    return {
      id,
      items: [assistantMessage("All scripted steps are done.", `msg_${id}`)],
      note: "message",
    };
  }
  const item = typeof call.input === "string"
    ? { type: "custom_tool_call", "call_id": call.callId, name: call.tool, input: call.input }
    : {
      type: "function_call",
      "call_id": call.callId,
      name: call.tool,
      arguments: JSON.stringify(call.input),
    };
  return { id, items: [item], note: `${call.tool} ${call.callId}` };
};

/** The API's view of every run: one session, the scripted calls in order, tokens as mocked. */
function expectedRun(_variant: Variant): ExpectedRun {
  const ran = (call: ScriptedCall, outcome: "ok" | "error" = "ok") =>
    approvedCall(VERSION, call.callId, call.tool, call.input, outcome);
  const refused = (call: ScriptedCall) => ({
    ...codexCallFields(VERSION),
    "tool_name": call.tool,
    category: "code_exec",
    "tool_call_id": call.callId,
    ...REJECTED,
    "error_message": null,
    "decision_source": "config",
    arguments: JSON.stringify(call.input),
  });
  const [echo, read, patch, secret, curl, rm, push] = SCRIPT as [
    ScriptedCall,
    ScriptedCall,
    ScriptedCall,
    ScriptedCall,
    ScriptedCall,
    ScriptedCall,
    ScriptedCall,
  ];
  const { arguments: _secretArguments, ...secretFields } = ran(secret);
  return codexRun(VERSION, [{
    fields: { "tool_call_count": SCRIPT.length, "success_count": 4, "error_count": 1 },
    toolCalls: [
      {
        fields: { ...ran(echo), "error_message": null },
        argumentsContain: ["echo hello from codex"],
        flags: [],
      },
      { fields: { ...ran(read), "error_message": null }, flags: [] },
      { fields: { ...ran(patch), "error_message": null }, flags: [] },
      {
        fields: { ...secretFields, "error_message": null },
        argumentsContain: ["export GITHUB_TOKEN=[REDACTED:"],
        absent: [FAKE_GITHUB_TOKEN],
        flags: ["credential_detected"],
      },
      // curl exits 6 offline (no DNS): Codex says success=true, the exit code says error.
      { fields: ran(curl, "error"), flags: [] },
      { fields: refused(rm), flags: ["destructive_operation"] },
      { fields: refused(push), flags: ["destructive_operation"] },
    ],
    domains: ["api.example.com"],
  }], RESPONSES);
}
