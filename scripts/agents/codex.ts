/**
 * The Codex CLI scenario: `codex exec` driven by a scripted mock of the
 * OpenAI Responses API on loopback (a custom model provider with a made-up
 * key in a scratch `CODEX_HOME`), its OTLP log exporter configured in
 * `config.toml` `[otel]`, and an exec-policy rule that forbids `git push`.
 *
 * @module
 */
import { join } from "node:path";
import type { AgentScenario, ExpectedRun, RunContext, Variant } from "./_scenario.ts";

const NPM_PACKAGE = "@openai/codex";
const VERSION = "0.169.0";
/**
 * A model in Codex's bundled catalogue, so the client offers its usual tools
 * (`exec_command` and the freeform `apply_patch`) instead of fallback ones.
 */
export const MODEL = "gpt-5.5";
/** The custom model provider's id in `config.toml`. */
const PROVIDER = "mock";
/** Codex's `service.name` when run as `codex exec` (its originator). */
export const AGENT_SYSTEM = "codex_exec";

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

/**
 * Token usage the mock reports on every response. OpenAI semantics: input
 * includes the cached tokens and output includes the reasoning tokens.
 */
const USAGE = { input: 3000, cached: 2048, output: 120, reasoning: 40 };
/** One response per scripted call, then the final answer. */
const RESPONSES = SCRIPT.length + 1;

/** What the mock model makes one run do, for tests that check what Codex reported of it. */
export const codexScript = {
  model: MODEL,
  calls: SCRIPT,
  usage: USAGE,
  /** Model requests in the run's one turn. */
  responses: RESPONSES,
} as const;

/** `[otel]` exporter protocol per variant. */
export const PROTOCOLS: Record<string, "binary" | "json"> = {
  "http-protobuf": "binary",
  "http-json": "json",
};

/** Codex CLI 0.169.0 over OTLP/HTTP logs, protobuf and JSON. */
export const codexScenario: AgentScenario = {
  agent: "codex",
  npmPackage: NPM_PACKAGE,
  version: VERSION,
  variants: Object.keys(PROTOCOLS).map((name) => ({ name, env: {} })),
  run: runCodex,
  expected: expectedRun,
};

async function runCodex(context: RunContext): Promise<void> {
  const protocol = PROTOCOLS[context.variant.name];
  if (protocol === undefined) {
    throw new Error(`Unknown Codex variant: ${JSON.stringify(context.variant.name)}`);
  }
  await using model = await startMockResponses();
  const home = join(context.workDir, "home");
  const codexHome = join(context.workDir, "codex-home");
  const project = join(context.workDir, "project");
  for (const dir of [home, join(codexHome, "rules"), project]) {
    await Deno.mkdir(dir, { recursive: true });
  }
  await Deno.writeTextFile(join(project, "notes.txt"), "remember the milk\n");
  await Deno.writeTextFile(
    join(codexHome, "config.toml"),
    codexConfig(model.url, context.otlpHttpUrl, context.authorization, protocol),
  );
  await Deno.writeTextFile(join(codexHome, "rules", "default.rules"), EXEC_POLICY);

  const codex = join(context.installDir, "node_modules", ".bin", "codex");
  const output = await new Deno.Command(codex, {
    args: [
      "exec",
      "--skip-git-repo-check",
      "--ephemeral",
      "--color",
      "never",
      "--cd",
      project,
      "Run the scripted steps.",
    ],
    cwd: project,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/local/bin:/usr/bin:/bin",
      HOME: home,
      CODEX_HOME: codexHome,
      MOCK_MODEL_API_KEY: "sk-mock-not-a-real-key",
      LANG: "C.UTF-8",
      ...context.variant.env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  if (!output.success) {
    throw new Error(
      `codex exec exited with ${output.code}: ${text(output.stderr).slice(-2000)}`,
    );
  }
  if (model.answered() !== RESPONSES) {
    throw new Error(
      `Codex made ${model.answered()} model requests, ${RESPONSES} scripted: ${
        text(output.stderr).slice(-2000)
      }`,
    );
  }
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

export function codexConfig(
  modelUrl: string,
  otlpUrl: string,
  authorization: string,
  protocol: "binary" | "json",
): string {
  const q = JSON.stringify;
  // Each exporter posts to its endpoint as written: Codex appends no signal path.
  const otlpHttp = (path: string) =>
    `{ otlp-http = { endpoint = ${q(otlpUrl + path)}, protocol = ${
      q(protocol)
    }, headers = { "Authorization" = ${q(authorization)} } } }`;
  return `model = ${q(MODEL)}
model_provider = ${q(PROVIDER)}
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.${PROVIDER}]
name = "Mock Responses API"
base_url = ${q(modelUrl + "/v1")}
wire_api = "responses"
env_key = "MOCK_MODEL_API_KEY"

[otel]
environment = "agents-harness"
log_user_prompt = false
exporter = ${otlpHttp("/v1/logs")}
metrics_exporter = ${otlpHttp("/v1/metrics")}
`;
}

/** A running mock model. */
interface MockResponses extends AsyncDisposable {
  url: string;
  /** Responses requests answered so far. */
  answered(): number;
}

/**
 * A scripted OpenAI Responses API: each `POST /v1/responses` gets the next
 * step, chosen by how many tool outputs the request already carries (so a
 * retried request gets the same answer). Anything else (Codex also posts
 * turn costs) gets `{}`.
 */
async function startMockResponses(): Promise<MockResponses> {
  let answered = 0;
  const { promise, resolve } = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: resolve },
    async (request) => {
      const url = new URL(request.url);
      const body = await request.text();
      if (request.method !== "POST" || !url.pathname.endsWith("/responses")) {
        return Response.json({});
      }
      const input = (JSON.parse(body) as { input?: { type?: string }[] }).input ?? [];
      const step =
        input.filter((item) =>
          item.type === "function_call_output" || item.type === "custom_tool_call_output"
        ).length;
      answered++;
      return new Response(responseStream(step), {
        headers: { "content-type": "text/event-stream" },
      });
    },
  );
  const addr = await promise;
  return {
    url: `http://127.0.0.1:${addr.port}`,
    answered: () => answered,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** The SSE body of the response to step `step` (0-based). */
function responseStream(step: number): string {
  const id = `resp_cx_${String(step).padStart(2, "0")}`;
  const call = SCRIPT[step];
  let item: Record<string, unknown>;
  if (call === undefined) {
    item = {
      type: "message",
      id: `msg_${id}`,
      role: "assistant",
      content: [{ type: "output_text", text: "All scripted steps are done." }],
    };
  } else if (typeof call.input === "string") {
    item = { type: "custom_tool_call", call_id: call.callId, name: call.tool, input: call.input };
  } else {
    item = {
      type: "function_call",
      call_id: call.callId,
      name: call.tool,
      arguments: JSON.stringify(call.input),
    };
  }
  const event = (type: string, data: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  return event("response.created", { response: { id } }) +
    event("response.output_item.done", { output_index: 0, item }) +
    event("response.completed", {
      response: {
        id,
        usage: {
          input_tokens: USAGE.input,
          input_tokens_details: { cached_tokens: USAGE.cached },
          output_tokens: USAGE.output,
          output_tokens_details: { reasoning_tokens: USAGE.reasoning },
          total_tokens: USAGE.input + USAGE.output,
        },
      },
    });
}

/** The API's view of every run: one session, the scripted calls in order, tokens as mocked. */
function expectedRun(_variant: Variant): ExpectedRun {
  const common = {
    "tool_type": "builtin",
    "agent_system": AGENT_SYSTEM,
    "agent_version": VERSION,
    model: MODEL,
    source: "otlp_logs",
  };
  const ran = (call: ScriptedCall, outcome: "ok" | "error") => ({
    ...common,
    "tool_name": call.tool,
    category: call.tool === "apply_patch" ? "file_write" : "code_exec",
    "tool_call_id": call.callId,
    outcome,
    success: outcome === "ok",
    decision: "approved",
    "decision_source": "config",
    arguments: JSON.stringify(call.input),
  });
  const refused = (call: ScriptedCall) => ({
    ...common,
    "tool_name": call.tool,
    category: "code_exec",
    "tool_call_id": call.callId,
    outcome: "rejected",
    success: null,
    "duration_ms": null,
    "result_size_bytes": null,
    "error_message": null,
    decision: "reject",
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
  const { arguments: _secretArguments, ...secretFields } = ran(secret, "ok");
  const modelInput = USAGE.input - USAGE.cached;
  return {
    agentSystem: AGENT_SYSTEM,
    sessions: [{
      fields: {
        "agent_system": AGENT_SYSTEM,
        "agent_version": VERSION,
        model: MODEL,
        "tool_call_count": SCRIPT.length,
        "success_count": 4,
        "error_count": 1,
        "cost_usd": 0,
      },
      toolCalls: [
        {
          fields: { ...ran(echo, "ok"), error_message: null },
          argumentsContain: ["echo hello from codex"],
          flags: [],
        },
        { fields: { ...ran(read, "ok"), error_message: null }, flags: [] },
        { fields: { ...ran(patch, "ok"), error_message: null }, flags: [] },
        {
          fields: { ...secretFields, error_message: null },
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
    }],
    cost: [{
      "provider_name": "Mock Responses API",
      model: MODEL,
      "input_tokens": RESPONSES * modelInput,
      "output_tokens": RESPONSES * USAGE.output,
      "cost_usd": 0,
      "call_count": RESPONSES,
    }],
  };
}
