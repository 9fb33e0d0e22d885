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
import type { AgentScenario, ExpectedRun, RunContext, Variant } from "./_scenario.ts";

export const NPM_PACKAGE = "@google/gemini-cli";
export const VERSION = "0.61.0";
/** An explicit model: no routing classifier call (`auto` would add flash-lite calls). */
export const MODEL = "gemini-2.5-pro";
export const AGENT_SYSTEM = "gemini-cli";

/** A made-up GitHub token: `ghp_` and 36 characters. Never a real credential. */
const FAKE_GITHUB_TOKEN = "ghp_" + "Gm4Tq9Zx2Lr7Wk5Pb8Nc3Vd6Hs1Jf0Ya7Qe2R";
/** A made-up Gemini API key: the mock model accepts anything. */
export const FAKE_API_KEY = "AIza-mock-not-a-real-key";

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

/**
 * Token usage the mock reports on every response. Gemini semantics: the
 * prompt count includes the cached tokens; thoughts are outside the
 * candidates count.
 */
export const USAGE = { prompt: 4000, cached: 1024, candidates: 60, thoughts: 25 };
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
  npmPackage: NPM_PACKAGE,
  version: VERSION,
  variants: Object.keys(PROTOCOLS).map((name): Variant => ({
    name,
    env: name === NO_LOG_PROMPTS ? { GEMINI_TELEMETRY_LOG_PROMPTS: "false" } : {},
  })),
  run: runGemini,
  expected: expectedRun,
};

async function runGemini(context: RunContext): Promise<void> {
  const protocol = PROTOCOLS[context.variant.name];
  if (protocol === undefined) {
    throw new Error(`Unknown Gemini CLI variant: ${JSON.stringify(context.variant.name)}`);
  }
  if (protocol === "grpc" && context.otlpGrpcUrl === "") {
    throw new Error("The gRPC variant needs an OTLP/gRPC endpoint and the harness gave none");
  }
  await using model = await startMockGemini();
  const home = join(context.workDir, "home");
  const project = join(context.workDir, "project");
  for (const dir of [join(home, ".gemini", "policies"), project]) {
    await Deno.mkdir(dir, { recursive: true });
  }
  await Deno.writeTextFile(join(project, "notes.txt"), "remember the milk\n");
  const endpoint = protocol === "grpc" ? `http://${context.otlpGrpcUrl}` : context.otlpHttpUrl;
  await Deno.writeTextFile(
    join(home, ".gemini", "settings.json"),
    JSON.stringify(geminiSettings(endpoint, protocol), null, 2),
  );
  await Deno.writeTextFile(join(home, ".gemini", "policies", "harness.toml"), POLICY);

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
  if (!output.success) {
    throw new Error(`gemini -p exited with ${output.code}: ${text(output.stderr).slice(-2000)}`);
  }
  if (model.answered() !== RESPONSES || model.unexpected().length > 0) {
    throw new Error(
      `Gemini CLI made ${model.answered()} scripted model requests (${RESPONSES} scripted) and ${
        JSON.stringify(model.unexpected())
      } others: ${text(output.stderr).slice(-2000)}`,
    );
  }
}

/** The user's `~/.gemini/settings.json`: API-key auth, no usage statistics, telemetry on. */
export function geminiSettings(
  endpoint: string,
  protocol: "http" | "grpc",
): Record<string, unknown> {
  return {
    security: { auth: { selectedType: "gemini-api-key" } },
    privacy: { usageStatisticsEnabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    telemetry: {
      enabled: true,
      target: "local",
      otlpEndpoint: endpoint,
      otlpProtocol: protocol,
      logPrompts: true,
    },
  };
}

/** A running mock model. */
interface MockGemini extends AsyncDisposable {
  url: string;
  /** `streamGenerateContent` requests answered so far. */
  answered(): number;
  /** Other requests the client made (method and path): the script expects none. */
  unexpected(): string[];
}

interface GeminiContent {
  role?: string;
  parts?: { functionResponse?: unknown }[];
}

/**
 * A scripted Gemini API: each `POST …/models/<model>:streamGenerateContent`
 * gets the next step, chosen by how many function responses the request
 * already carries (so a retried request gets the same answer).
 */
async function startMockGemini(): Promise<MockGemini> {
  let answered = 0;
  const unexpected: string[] = [];
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
      const contents = (JSON.parse(body) as { contents?: GeminiContent[] }).contents ?? [];
      const step =
        contents.flatMap((c) => c.parts ?? []).filter((p) => p.functionResponse !== undefined)
          .length;
      answered++;
      return new Response(`data: ${JSON.stringify(responseChunk(step))}\r\n\r\n`, {
        headers: { "content-type": "text/event-stream" },
      });
    },
  );
  const addr = await promise;
  return {
    url: `http://127.0.0.1:${addr.port}`,
    answered: () => answered,
    unexpected: () => unexpected,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** The one SSE chunk answering step `step` (0-based): a function call, or the final text. */
function responseChunk(step: number): Record<string, unknown> {
  const call = SCRIPT[step];
  const part = call === undefined
    ? { text: "All scripted steps are done." }
    : { functionCall: { name: call.tool, args: call.args } };
  return {
    candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: {
      promptTokenCount: USAGE.prompt,
      cachedContentTokenCount: USAGE.cached,
      candidatesTokenCount: USAGE.candidates,
      thoughtsTokenCount: USAGE.thoughts,
      totalTokenCount: USAGE.prompt + USAGE.candidates + USAGE.thoughts,
    },
    modelVersion: MODEL,
    responseId: `resp_gm_${String(step).padStart(2, "0")}`,
  };
}

/** Fields every call of the run shares: Gemini reports no agent version, model or call id. */
const EVERY_CALL = {
  "agent_system": AGENT_SYSTEM,
  "agent_version": null,
  "tool_type": "builtin",
  model: null,
  "tool_call_id": null,
  source: "otlp_logs",
};

/** A call that ran and succeeded, accepted by the approval mode. */
export function ok(toolName: string, category: string): Record<string, unknown> {
  return {
    ...EVERY_CALL,
    tool_name: toolName,
    category,
    outcome: "ok",
    success: true,
    decision: "accept",
    decision_source: null,
    error_message: null,
  };
}

/**
 * What the API must show for one run with `logPrompts` on: the six scripted
 * calls in order, the token, the failed `curl` and the denied `git push` as
 * the mapping rules say (DESIGN §4), and seven model calls of the mock's
 * fixed usage. With it off, see {@link withoutLogPrompts}.
 */
function expectedRun(variant: Variant): ExpectedRun {
  const run: ExpectedRun = {
    agentSystem: AGENT_SYSTEM,
    sessions: [{
      fields: {
        agent_system: AGENT_SYSTEM,
        agent_version: "",
        model: "",
        tool_call_count: SCRIPT.length,
        success_count: 4,
        error_count: 1,
        cost_usd: 0,
      },
      toolCalls: [
        {
          fields: ok("run_shell_command", "code_exec"),
          argumentsContain: ["echo hello from gemini"],
          flags: [],
        },
        {
          // `content_length` is the file's 18 bytes (a shell's varies with its process id).
          fields: { ...ok("read_file", "file_read"), result_size_bytes: 18 },
          argumentsContain: ["notes.txt"],
          flags: [],
        },
        {
          fields: ok("write_file", "file_write"),
          argumentsContain: ["hello.txt", "hello from the mock model"],
          flags: [],
        },
        {
          fields: ok("run_shell_command", "code_exec"),
          argumentsContain: ["export GITHUB_TOKEN=[REDACTED:", "echo token set"],
          absent: [FAKE_GITHUB_TOKEN],
          flags: ["credential_detected"],
        },
        {
          // curl exits 6 (no DNS offline); Gemini says success=true, metadata exitCode 6.
          fields: {
            ...ok("run_shell_command", "code_exec"),
            outcome: "error",
            success: false,
            error_message: "Command exited with code: 6",
            error_type: null,
          },
          argumentsContain: ["curl -sS https://api.example.com/v1/status"],
          flags: [],
        },
        {
          // Denied by the user's policy: decision null, error_type policy_violation.
          fields: {
            ...EVERY_CALL,
            tool_name: "run_shell_command",
            category: "code_exec",
            outcome: "rejected",
            success: null,
            duration_ms: null,
            result_size_bytes: null,
            decision: "reject",
            decision_source: "config",
            error_message: null,
          },
          argumentsContain: ["git push origin main"],
          flags: [],
        },
      ],
      domains: ["api.example.com"],
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
