/**
 * The Gemini CLI scenario: `gemini -p` (non-interactive, `--approval-mode
 * yolo`) driven by a scripted mock of the Gemini API's
 * `streamGenerateContent` on loopback (`GOOGLE_GEMINI_BASE_URL`, a made-up
 * `GEMINI_API_KEY`), with telemetry set in a scratch HOME's
 * `.gemini/settings.json` and a user policy (`.gemini/policies/*.toml`) that
 * denies `git push`. Variants: OTLP over HTTP (Gemini sends JSON) and gRPC
 * (its default; gzip-compressed messages).
 *
 * @module
 */
import { join } from "node:path";
import { ClientRuns } from "./_client.ts";
import { GEMINI_PACKAGE, geminiDirs, geminiSettings, NOTES, runGemini } from "./_gemini_client.ts";
import { EVERY_CALL, geminiRun, okCall } from "./_gemini_expected.ts";
import { type GeminiPart, startGeminiMock } from "./_gemini_mock.ts";
import {
  type AgentScenario,
  type ExpectedRun,
  REJECTED,
  type RunContext,
  type Variant,
} from "./_scenario.ts";

/** The pinned release (the MCP scenario runs it too). */
export const VERSION = "0.61.0";

/** A made-up GitHub token: `ghp_` and 36 characters. Never a real credential. */
const FAKE_GITHUB_TOKEN = "ghp_" + "Gm4Tq9Zx2Lr7Wk5Pb8Nc3Vd6Hs1Jf0Ya7Qe2R";

/** One tool call the mock model asks for, in order. */
interface ScriptedCall {
  tool: "run_shell_command" | "read_file" | "write_file";
  args: Record<string, unknown>;
}

/** What the mock model makes Gemini CLI do, one call per model turn. */
const SCRIPT: readonly ScriptedCall[] = [
  { tool: "run_shell_command", args: { command: "echo hello from gemini" } },
  { tool: "read_file", args: { file_path: "notes.txt" } },
  { tool: "write_file", args: { file_path: "hello.txt", content: "hello from the mock model\n" } },
  {
    tool: "run_shell_command",
    args: { command: `export GITHUB_TOKEN=${FAKE_GITHUB_TOKEN} && echo token set` },
  },
  { tool: "run_shell_command", args: { command: "curl -sS https://api.example.com/v1/status" } },
  { tool: "run_shell_command", args: { command: "git push origin main" } },
];

/** One response per scripted call, then the final answer. */
const RESPONSES = SCRIPT.length + 1;

/** The user policy: `git push` is denied, whatever the approval mode allows. */
const POLICY = `[[rule]]
toolName = "run_shell_command"
commandPrefix = "git push"
decision = "deny"
priority = 100
`;

/** `telemetry.otlpProtocol` per variant. */
const PROTOCOLS: Record<string, "http" | "grpc"> = {
  http: "http",
  grpc: "grpc",
  "http-no-log-prompts": "http",
};

/**
 * The variant run with `logPrompts` off (the environment overrides the
 * settings file): Gemini then sends no `function_args` and no shell `metadata`.
 */
const NO_LOG_PROMPTS = "http-no-log-prompts";

/**
 * Gemini CLI 0.61.0 over OTLP/HTTP (JSON) and OTLP/gRPC with `logPrompts` on
 * (tool arguments and exit codes sent), and over HTTP with it off.
 */
export const geminiCliScenario: AgentScenario = {
  agent: "gemini-cli",
  npmPackage: GEMINI_PACKAGE,
  version: VERSION,
  variants: Object.keys(PROTOCOLS).map((name): Variant => ({
    name,
    env: name === NO_LOG_PROMPTS ? { GEMINI_TELEMETRY_LOG_PROMPTS: "false" } : {},
  })),
  run: runGeminiScript,
  expected: expectedRun,
};

async function runGeminiScript(context: RunContext): Promise<void> {
  const protocol = PROTOCOLS[context.variant.name];
  if (protocol === undefined) {
    throw new Error(`Unknown Gemini CLI variant: ${JSON.stringify(context.variant.name)}`);
  }
  if (protocol === "grpc" && context.otlpGrpcUrl === "") {
    throw new Error("The gRPC variant needs an OTLP/gRPC endpoint and the harness gave none");
  }
  await using model = await startGeminiMock(answer, "resp_gm_");
  const endpoint = protocol === "grpc" ? `http://${context.otlpGrpcUrl}` : context.otlpHttpUrl;
  const dirs = await geminiDirs(context.workDir, geminiSettings(endpoint, protocol));
  await Deno.mkdir(join(dirs.home, ".gemini", "policies"));
  await Deno.writeTextFile(join(dirs.home, ".gemini", "policies", "harness.toml"), POLICY);
  const runs = new ClientRuns(model);
  await runGemini(runs, context, dirs, model, RESPONSES);
  runs.report();
}

/** The answer at step `step` (0-based): its scripted function call, or the final text. */
function answer(step: number): GeminiPart[] {
  const call = SCRIPT[step];
  return [
    call === undefined
      ? { text: "All scripted steps are done." }
      : { functionCall: { name: call.tool, args: call.args } },
  ];
}

/**
 * What the API must show for one run with `logPrompts` on: the six scripted
 * calls in order, the token, the failed `curl` and the denied `git push` as
 * the mapping rules say (docs/ingest-mapping.md §6), and seven model calls of the mock's
 * fixed usage. With it off, see {@link withoutLogPrompts}.
 */
function expectedRun(variant: Variant): ExpectedRun {
  const run = geminiRun({
    fields: { "tool_call_count": SCRIPT.length, "success_count": 4, "error_count": 1 },
    toolCalls: [
      {
        fields: okCall("run_shell_command", "code_exec"),
        argumentsContain: ["echo hello from gemini"],
        flags: [],
      },
      {
        // `content_length` is the file's 18 bytes (a shell's varies with its process id).
        fields: { ...okCall("read_file", "file_read"), "result_size_bytes": NOTES.length },
        argumentsContain: ["notes.txt"],
        flags: [],
      },
      {
        fields: okCall("write_file", "file_write"),
        argumentsContain: ["hello.txt", "hello from the mock model"],
        flags: [],
      },
      {
        fields: okCall("run_shell_command", "code_exec"),
        argumentsContain: ["export GITHUB_TOKEN=[REDACTED:", "echo token set"],
        absent: [FAKE_GITHUB_TOKEN],
        flags: ["credential_detected"],
      },
      {
        // curl exits 6 (no DNS offline); Gemini says success=true, metadata exitCode 6.
        fields: {
          ...okCall("run_shell_command", "code_exec"),
          outcome: "error",
          success: false,
          "error_message": "Command exited with code: 6",
          "error_type": null,
        },
        argumentsContain: ["curl -sS https://api.example.com/v1/status"],
        flags: [],
      },
      {
        // Denied by the user's policy: decision null, error_type policy_violation.
        fields: {
          ...EVERY_CALL,
          "tool_name": "run_shell_command",
          category: "code_exec",
          ...REJECTED,
          "decision_source": "config",
          "error_message": null,
        },
        argumentsContain: ["git push origin main"],
        flags: [],
      },
    ],
    domains: ["api.example.com"],
  }, RESPONSES);
  return variant.name === NO_LOG_PROMPTS ? withoutLogPrompts(run) : run;
}

/**
 * The view of the same run with `logPrompts` off, which is what Gemini's
 * telemetry allows and no more: no arguments, so no risk flag and no domain
 * (the token goes unnoticed), and no `metadata`, so the `curl` that exited 6
 * is `ok` (Gemini reports `success=true`). The policy denial still shows.
 */
function withoutLogPrompts(run: ExpectedRun): ExpectedRun {
  const [session] = run.sessions;
  if (session === undefined) return run;
  const toolCalls = session.toolCalls.map((call) => {
    const fields: Record<string, unknown> = { ...call.fields, arguments: null };
    if (fields.outcome === "error") {
      Object.assign(fields, { outcome: "ok", success: true, error_message: null });
    }
    return { fields, absent: call.absent, flags: [] };
  });
  return {
    ...run,
    sessions: [{
      fields: { ...session.fields, success_count: 5, error_count: 0 },
      toolCalls,
      domains: [],
    }],
  };
}
