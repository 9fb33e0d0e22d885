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
import { ClientRuns } from "./_client.ts";
import { CODEX_PACKAGE, prepareCodex, runCodex } from "./_codex_client.ts";
import { approvedCall, codexRun } from "./_codex_expected.ts";
import { assistantMessage, type CodexScript, functionCall, startCodexMock } from "./_codex_mock.ts";
import type { AgentScenario, ExpectedRun, RunContext, Variant } from "./_scenario.ts";

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

/** Responses: one per call and an answer, in each run. */
const FIRST_RESPONSES = FIRST_CALLS + 1;
const RESUME_RESPONSES = ALL_CALLS - FIRST_CALLS + 1;

/** Codex CLI 0.169.0 over OTLP/HTTP JSON logs: a 41-call session, resumed for 2 more. */
export const codexLong: AgentScenario = {
  agent: "codex-long",
  npmPackage: CODEX_PACKAGE,
  version: VERSION,
  variants: [{ name: "http-json", env: {} }],
  run,
  expected,
};

async function run(context: RunContext): Promise<void> {
  await using model = await startCodexMock(answer);
  // Logs only: the JSON metrics exports (~1.2 MB for the two runs) are not what this run checks.
  const dirs = await prepareCodex(context, model.url, { metrics: false });
  const runs = new ClientRuns(model);
  const exec = async (args: string[], responses: number) => {
    const before = model.answered();
    await runCodex(runs, context, dirs, args);
    const made = model.answered() - before;
    if (made !== responses) {
      throw runs.failure(`Codex made ${made} model requests, ${responses} scripted`);
    }
  };
  await exec([FIRST_PROMPT], FIRST_RESPONSES);
  await exec(["resume", "--last", RESUME_PROMPT], RESUME_RESPONSES);
  runs.report();
}

/**
 * The next call is the first scripted one with no output in the request yet
 * (the last two only once {@link RESUME_PROMPT} is in it), else the answer.
 */
const answer: CodexScript = ({ headers, n, input, answeredCalls }) => {
  const resumed = input.some((item) =>
    item.type === "message" && item.role === "user" &&
    JSON.stringify(item.content).includes(RESUME_PROMPT)
  );
  const next = STEPS.slice(0, resumed ? ALL_CALLS : FIRST_CALLS).find((s) =>
    !answeredCalls.has(s.callId)
  );
  return {
    id: `resp_cxl_${String(n).padStart(2, "0")}`,
    items: [
      next
        ? functionCall(next.callId, { name: "exec_command" }, next.args)
        : assistantMessage(resumed ? RESUME_ANSWER : FIRST_ANSWER, `msg_cxl_${n}`),
    ],
    note: `thread-id=${headers.get("thread-id") ?? ""} input=${input.length} resumed=${resumed}: ${
      next ? `${next.callId} ${next.args.cmd}` : "message"
    }`,
  };
};

/** The API's view of both runs: one session (the resumed run keeps `conversation.id`). */
function expected(_variant: Variant): ExpectedRun {
  const toolCalls = STEPS.map((s) => ({
    fields: {
      // `ls` exits 2: Codex says success=true, the exit code in the output says error.
      ...approvedCall(VERSION, s.callId, "exec_command", s.args, s.fails ? "error" : "ok"),
      ...(s.fails ? {} : { "error_message": null }),
    },
    flags: [],
  }));
  const errors = STEPS.filter((s) => s.fails).length;
  return codexRun(VERSION, [{
    fields: {
      "tool_call_count": ALL_CALLS,
      "success_count": ALL_CALLS - errors,
      "error_count": errors,
    },
    toolCalls,
    domains: [],
    pageThrough: 10,
  }], FIRST_RESPONSES + RESUME_RESPONSES);
}
