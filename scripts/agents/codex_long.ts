/**
 * The Codex CLI in a long session that is then resumed: `codex exec` (not
 * `--ephemeral`: resuming needs the stored rollout) driven by a scripted mock
 * of the OpenAI Responses API on loopback (as in `codex.ts`) makes 41
 * `exec_command` calls, one per response, where every 10th lists a missing
 * directory (exit 2) and the others `echo step-N`, then answers; then
 * `codex exec resume --last` continues the same rollout with a second prompt:
 * 2 more calls (`echo step-42`, `echo step-43`), then an answer.
 *
 * The mock picks the next call by the scripted call ids that already have an
 * output in the request; the last two are offered only once the second
 * prompt is in the input. `AGENT_HARNESS_VERBOSE=1` prints the model requests
 * (with their `thread-id` headers) and Codex's output.
 *
 * Codex 0.169.0 keeps the thread when resuming: the resumed run's records
 * (a second `codex.conversation_starts` and `codex.user_prompt` among them)
 * carry the first run's `conversation.id`, so the API shows one session of
 * 43 calls.
 *
 * @module
 */
import { join } from "node:path";
import { AGENT_SYSTEM, codexConfig, codexScript, MODEL } from "./codex.ts";
import type {
  AgentScenario,
  ExpectedRun,
  ExpectedToolCall,
  RunContext,
  Variant,
} from "./_scenario.ts";

const NPM_PACKAGE = "@openai/codex";
const VERSION = "0.169.0";

const FIRST_PROMPT = "Run the long scripted session.";
const RESUME_PROMPT = "Continue the long scripted session with two more steps.";
const FIRST_ANSWER = "Long session: 41 steps done.";
const RESUME_ANSWER = "Long session: resumed steps done.";

/** Calls of the first run, and of both runs. */
const FIRST_CALLS = 41;
const ALL_CALLS = 43;

interface Step {
  /** 1-based. */
  n: number;
  fails: boolean;
  callId: string;
  args: { cmd: string };
}

/** Step `n`: every 10th lists a missing directory (exit 2), the others echo. */
function step(n: number): Step {
  const fails = n % 10 === 0;
  return {
    n,
    fails,
    callId: `call_cxl_${String(n).padStart(2, "0")}`,
    args: { cmd: fails ? `ls /nonexistent-long-step-${n}` : `echo step-${n}` },
  };
}

const STEPS: Step[] = Array.from({ length: ALL_CALLS }, (_, i) => step(i + 1));

/** Token usage the mock reports on every response (as in `codex.ts`). */
const USAGE = codexScript.usage;
/** Responses: one per call and an answer, in each run. */
const FIRST_RESPONSES = FIRST_CALLS + 1;
const RESUME_RESPONSES = ALL_CALLS - FIRST_CALLS + 1;

/** Codex CLI 0.169.0 over OTLP/HTTP JSON logs: a 41-call session, resumed for 2 more. */
export const codexLong: AgentScenario = {
  agent: "codex-long",
  npmPackage: NPM_PACKAGE,
  version: VERSION,
  variants: [{ name: "http-json", env: {} }],
  run,
  expected,
};

function verbose(): boolean {
  return Deno.env.get("AGENT_HARNESS_VERBOSE") === "1";
}

async function run(context: RunContext): Promise<void> {
  await using model = await startMockModel();
  const home = join(context.workDir, "home");
  const codexHome = join(context.workDir, "codex-home");
  const project = join(context.workDir, "project");
  for (const dir of [home, codexHome, project]) await Deno.mkdir(dir, { recursive: true });
  // Logs only: the JSON metrics exports (~1.2 MB for the two runs) are not what this run checks.
  await Deno.writeTextFile(
    join(codexHome, "config.toml"),
    codexConfig(model.url, context.otlpHttpUrl, context.authorization, "json").replace(
      /^metrics_exporter = .*$/m,
      'metrics_exporter = "none"',
    ),
  );
  const codex = join(context.installDir, "node_modules", ".bin", "codex");
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  const outputs: string[] = [];
  const detail = () => [`model requests:\n  ${model.log.join("\n  ")}`, ...outputs].join("\n");
  const exec = async (args: string[], responses: number) => {
    const before = model.answered();
    const output = await new Deno.Command(codex, {
      args: ["exec", "--skip-git-repo-check", "--color", "never", "--cd", project, ...args],
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
    outputs.push(
      `codex exec ${args.join(" ")} exited with ${output.code}`,
      `stdout: ${text(output.stdout).slice(-3000)}`,
      `stderr: ${text(output.stderr).slice(-3000)}`,
    );
    if (!output.success) throw new Error(detail());
    if (model.answered() - before !== responses) {
      throw new Error(
        `Codex made ${
          model.answered() - before
        } model requests, ${responses} scripted\n${detail()}`,
      );
    }
  };
  await exec([FIRST_PROMPT], FIRST_RESPONSES);
  await exec(["resume", "--last", RESUME_PROMPT], RESUME_RESPONSES);
  if (verbose()) {
    // deno-lint-ignore no-console
    console.error(detail());
  }
}

type Item = Record<string, unknown>;

/** A running mock model. */
interface MockModel extends AsyncDisposable {
  url: string;
  /** One line per request: its thread and what it got. */
  log: string[];
  /** Responses requests answered so far. */
  answered(): number;
}

function inputItems(body: Item): Item[] {
  return Array.isArray(body.input) ? body.input as Item[] : [];
}

/** Whether a user message of the input carries `prompt`. */
function hasUserText(body: Item, prompt: string): boolean {
  return inputItems(body).some((item) =>
    item.type === "message" && item.role === "user" && JSON.stringify(item.content).includes(prompt)
  );
}

/**
 * The scripted Responses API: the next call is the first scripted one with no
 * output in the request yet (the last two only once {@link RESUME_PROMPT} is
 * in it), else the answer. Anything but `POST …/responses` gets `{}`.
 */
async function startMockModel(): Promise<MockModel> {
  const log: string[] = [];
  let answered = 0;
  let seq = 0;
  const { promise, resolve } = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: resolve },
    async (request) => {
      const url = new URL(request.url);
      const body = await request.text();
      const n = seq++;
      if (request.method !== "POST" || !url.pathname.endsWith("/responses")) {
        log.push(`${n} ${request.method} ${url.pathname}: {}`);
        return Response.json({});
      }
      const parsed = JSON.parse(body) as Item;
      const done = new Set(
        inputItems(parsed).filter((item) =>
          typeof item.type === "string" && item.type.endsWith("_output")
        ).map((item) => String(item.call_id)),
      );
      const resumed = hasUserText(parsed, RESUME_PROMPT);
      const next = STEPS.slice(0, resumed ? ALL_CALLS : FIRST_CALLS).find((s) =>
        !done.has(s.callId)
      );
      answered++;
      log.push(
        `${n} thread-id=${request.headers.get("thread-id") ?? ""} input=${
          inputItems(parsed).length
        } resumed=${resumed}: ${next ? `${next.callId} ${next.args.cmd}` : "message"}`,
      );
      const item: Item = next
        ? {
          type: "function_call",
          id: `fc_${next.callId}`,
          "call_id": next.callId,
          name: "exec_command",
          arguments: JSON.stringify(next.args),
        }
        : {
          type: "message",
          id: `msg_cxl_${n}`,
          role: "assistant",
          content: [{ type: "output_text", text: resumed ? RESUME_ANSWER : FIRST_ANSWER }],
        };
      return new Response(responseStream(`resp_cxl_${String(n).padStart(2, "0")}`, item), {
        headers: { "content-type": "text/event-stream" },
      });
    },
  );
  const addr = await promise;
  return {
    url: `http://127.0.0.1:${addr.port}`,
    log,
    answered: () => answered,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** The SSE body of one response: its output item, then the fixed usage. */
function responseStream(id: string, item: Item): string {
  const event = (type: string, data: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  return event("response.created", { response: { id } }) +
    event("response.output_item.done", { "output_index": 0, item }) +
    event("response.completed", {
      response: {
        id,
        usage: {
          "input_tokens": USAGE.input,
          "input_tokens_details": { "cached_tokens": USAGE.cached },
          "output_tokens": USAGE.output,
          "output_tokens_details": { "reasoning_tokens": USAGE.reasoning },
          "total_tokens": USAGE.input + USAGE.output,
        },
      },
    });
}

/** The API's view of both runs: one session (the resumed run keeps `conversation.id`). */
function expected(_variant: Variant): ExpectedRun {
  const toolCalls = STEPS.map((s): ExpectedToolCall => ({
    fields: {
      "agent_system": AGENT_SYSTEM,
      "agent_version": VERSION,
      model: MODEL,
      source: "otlp_logs",
      "tool_name": "exec_command",
      "tool_type": "builtin",
      category: "code_exec",
      "tool_call_id": s.callId,
      // `ls` exits 2: Codex says success=true, the exit code in the output says error.
      outcome: s.fails ? "error" : "ok",
      success: !s.fails,
      ...(s.fails ? {} : { "error_message": null }),
      decision: "approved",
      "decision_source": "config",
      arguments: JSON.stringify(s.args),
    },
    flags: [],
  }));
  const errors = STEPS.filter((s) => s.fails).length;
  const responses = FIRST_RESPONSES + RESUME_RESPONSES;
  return {
    agentSystem: AGENT_SYSTEM,
    sessions: [{
      fields: {
        "agent_system": AGENT_SYSTEM,
        "agent_version": VERSION,
        model: MODEL,
        "tool_call_count": ALL_CALLS,
        "success_count": ALL_CALLS - errors,
        "error_count": errors,
        "cost_usd": 0,
      },
      toolCalls,
      domains: [],
      pageThrough: 10,
    }],
    cost: [{
      "provider_name": "Mock Responses API",
      model: MODEL,
      "input_tokens": responses * (USAGE.input - USAGE.cached),
      "output_tokens": responses * USAGE.output,
      "cost_usd": 0,
      "call_count": responses,
    }],
  };
}
